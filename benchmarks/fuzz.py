"""The malformed-input matrix as a fuzz tier: hostile files indexed one by one, then all
together.

Each input is written alone into its own folder and indexed by the real command line
(``kbx index DIR --json``) in a child process, with a time limit; the child's peak RSS
(the largest of it and its workers, from ``wait4``) is recorded. A crash is a non-zero
exit or a traceback on stderr; a hang is a run past the limit. Then every input is put
into one folder (one subfolder each) beside a good file, and that run must complete with
each file the single runs saw fail listed among the failures, and the good file found.

The folders' ``kbx.toml`` disables spacy, gliner and acronyms: the rule-based recognizers
still read every unit. Inputs: random bytes under each extension, truncated and
bit-flipped PDFs, a PDF whose stream inflates to 1 GB, 100k-level nesting, 10 MB lines,
LaTeX ``\\input`` loops, YAML anchor bombs, symlinks out of the root, odd names, FIFOs,
empty files, NUL bytes, UTF-16/32 with BOMs, Arabic presentation forms and polytonic
Greek. This is a script, not a test: it measures and reports.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common import table, write_section
from crash import DOC, HEADER, KBX, REPO, RULES_ONLY, code_note
from fpdf import FPDF

SECTION = "## Malformed input"
EXTS = (".md", ".html", ".pdf", ".tex", ".txt")
PREFIX = {
    ".md": b"---\ntitle: x\n---\n# ",
    ".html": b"<!DOCTYPE html><html><head><meta charset='utf-8'>",
    ".pdf": b"%PDF-1.4\n",
    ".tex": b"\\documentclass{article}\\begin{document}",
    ".txt": b"",
}
MB = 1024 * 1024
GOOD = b"# Good\n\nzebrafinch lives in the good file.\n"

Write = Callable[[bytes], None]  # writes an input into a folder (given as bytes)


@dataclass
class Case:
    """One input: a category, a name and what to write."""

    kind: str
    name: str
    write: Write


@dataclass
class Outcome:
    """One single-input run."""

    case: Case
    rc: int
    seconds: float
    peak_mb: float
    hang: bool = False
    traceback: bool = False
    report: dict = field(default_factory=dict)

    @property
    def crash(self) -> bool:
        return not self.hang and (self.rc != 0 or self.traceback)


# ---------------------------------------------------------------- inputs


def put(name: bytes | str, data: bytes) -> Write:
    """A writer of one file."""
    raw = os.fsencode(name)

    def write(folder: bytes) -> None:
        with open(os.path.join(folder, raw), "wb") as f:
            f.write(data)

    return write


def many(*writers: Write) -> Write:
    def write(folder: bytes) -> None:
        for w in writers:
            w(folder)

    return write


def link(name: str, target: str) -> Write:
    return lambda folder: os.symlink(target, os.path.join(folder, os.fsencode(name)))


def fifo(name: str) -> Write:
    return lambda folder: os.mkfifo(os.path.join(folder, os.fsencode(name)))


def sparse(name: str, size: int) -> Write:
    def write(folder: bytes) -> None:
        with open(os.path.join(folder, os.fsencode(name)), "wb") as f:
            f.truncate(size)

    return write


def small_pdf(rng: random.Random) -> bytes:
    """A valid PDF of a few pages of text."""
    pdf = FPDF()
    pdf.set_title("Fuzz")
    for _ in range(rng.randint(1, 3)):
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(
            0, 6, " ".join(rng.choice(["alpha", "beta", "2021-03-04"]) for _ in range(80))
        )
    return bytes(pdf.output())


def flate_bomb(inflated: int = 1024 * MB) -> bytes:
    """A one-page PDF whose content stream inflates to ``inflated`` bytes of spaces."""
    z = zlib.compressobj(9)
    chunk = b" " * MB
    stream = b"".join(z.compress(chunk) for _ in range(inflated // MB)) + z.flush()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    )
    return out.getvalue()


def laughs(levels: int) -> str:
    """Front matter whose anchors expand to 9**levels strings."""
    out = '---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(levels - 1):
        out += f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n"
    return out + "---\n# Laughs\n\nafter the bomb.\n"


def words(size: int, rng: random.Random) -> bytes:
    """About ``size`` bytes of words on one line."""
    vocab = [b"node", b"release", b"v18.2.0", b"2021-03-04", b"doi:10.1000/xyz", b"5 kg", b"the"]
    parts, n = [], 0
    while n < size:
        w = rng.choice(vocab)
        parts.append(w)
        n += len(w) + 1
    return b" ".join(parts)


GREEK = "Ἐν ἀρχῇ ἦν ὁ λόγος, ͺ ᾳ ᾼ ΐ ΰ ᾷ ͅ ".encode()
ARABIC = "ﷺ ﷻ ﹰ ﹱ ﹲ ﻻ ﻷ ﺍﻟﺴﻼﻡ ﷽ ﬃ İstanbul ß ".encode()


def cases(n: int, rng: random.Random) -> list[Case]:
    """The matrix: ``n`` random draws for each random kind, and the fixed hostile inputs."""
    out = []
    for ext in EXTS:
        for i in range(n):
            data = rng.randbytes(rng.choice([1, 16, 1024, 64 * 1024]))
            if rng.random() < 0.5:
                data = PREFIX[ext] + data
            out.append(Case("random bytes", f"random{i}{ext}", put(f"random{i}{ext}", data)))
    for i in range(n):
        pdf = small_pdf(rng)
        out.append(
            Case("truncated PDF", f"trunc{i}.pdf", put("t.pdf", pdf[: rng.randrange(len(pdf))]))
        )
        flipped = bytearray(pdf)
        for _ in range(rng.randint(1, 64)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        out.append(Case("bit-flipped PDF", f"flip{i}.pdf", put("f.pdf", bytes(flipped))))
    deep = 100_000
    fixed = [
        ("PDF", "inflates to 1 GB", put("bomb.pdf", flate_bomb())),
        ("PDF", "HTML named .pdf", put("page.pdf", b"<html><body>not a pdf</body></html>")),
        ("nesting", "html 100k <div>", put("deep.html", b"<div>" * deep + b"x" + b"</div>" * deep)),
        ("nesting", "html 100k unclosed <b>", put("open.html", b"<p>" + b"<b>" * deep + b"x")),
        ("nesting", "md 100k blockquotes", put("quote.md", b"> " * deep + b"x\n")),
        ("nesting", "md 100k [", put("brackets.md", b"[" * deep + b"x" + b"](" * deep)),
        ("nesting", "md 100k emphasis", put("emph.md", b"*_" * deep + b"x")),
        ("nesting", "md 2000-level list", put("list.md", _list(2000))),
        ("nesting", "tex 100k braces", put("braces.tex", b"{" * deep + b"x" + b"}" * deep)),
        ("nesting", "tex 10k environments", put("env.tex", _envs(10_000))),
        ("long line", "txt 10 MB of words", put("long.txt", words(10 * MB, rng))),
        ("long line", "md 10 MB of words", put("long.md", b"# L\n\n" + words(10 * MB, rng))),
        ("long line", "html 10 MB <p>", put("long.html", b"<p>" + words(10 * MB, rng))),
        ("long line", "txt 10 MB, no space", put("solid.txt", b"x" * (10 * MB))),
        ("long line", "tex 10 MB of words", put("long.tex", words(10 * MB, rng))),
        ("long line", "md 10 MB table row", put("row.md", b"|" + b"a|" * (5 * MB) + b"\n|-|\n")),
        (
            "LaTeX input",
            "a inputs b inputs a",
            many(put("a.tex", b"\\input{b}\nA text.\n"), put("b.tex", b"\\input{a.tex}\nB.\n")),
        ),
        ("LaTeX input", "inputs itself", put("self.tex", b"\\input{self}\\include{self}\n")),
        ("LaTeX input", "inputs /etc/passwd", put("abs.tex", b"\\input{/etc/passwd}\n")),
        ("LaTeX input", "inputs ../..", put("up.tex", b"\\input{../../../etc/passwd}\n")),
        ("YAML", "billion laughs", put("bomb.md", laughs(9).encode())),
        ("YAML", "recursive anchor", put("rec.md", b"---\na: &a [*a]\n---\n# R\n")),
        ("YAML", "3000-deep flow", put("deep.md", b"---\nn: " + b"[" * 3000 + b"\n---\n# D\n")),
        ("YAML", "5000-digit integer", put("int.md", b"---\nn: " + b"9" * 5000 + b"\n---\n# I\n")),
        (
            "YAML",
            "python tag",
            put("tag.md", b"---\na: !!python/object/apply:os.system [ls]\n---\n#"),
        ),
        ("symlink", "to /etc/passwd", link("passwd.md", "/etc/passwd")),
        ("symlink", "to a folder outside", link("outside", "/usr/share")),
        ("symlink", "to ..", link("up", "..")),
        ("symlink", "to itself", link("loop.md", "loop.md")),
        ("symlink", "dangling", link("gone.md", "nowhere.md")),
        ("symlink", "to a FIFO", many(fifo("p.txt"), link("to-p.md", "p.txt"))),
        ("odd name", "not UTF-8", put(b"bad\xff\xfe.md", b"# Bad name\n")),
        ("odd name", "newline", put("new\nline.md", b"# NL\n")),
        ("odd name", "a[", put("a[.md", b"# Bracket\n")),
        ("odd name", "255 bytes", put("n" * 252 + ".md", b"# Long\n")),
        ("odd name", "leading dash", put("-rf.md", b"# Dash\n")),
        ("odd name", "control bytes", put("c\x01\x1b[31m.md", b"# Ctl\n")),
        ("odd name", "RTL override", put("\u202edm.txt", b"RTL\n")),
        ("odd name", "backslash, glob", put("b\\s*?.md", b"# Glob\n")),
        ("special", "FIFO .md", fifo("pipe.md")),
        ("special", "FIFO .pdf", fifo("pipe.pdf")),
        ("special", "over the size cap (sparse)", sparse("huge.txt", 60 * MB)),
        *[("empty", f"empty{ext}", put(f"empty{ext}", b"")) for ext in EXTS],
        ("NUL", "md with NULs", put("nul.md", b"# N\n\nhello\0world\0\0x\n")),
        ("NUL", "1 MB of NULs", put("nul.txt", b"\0" * MB)),
        ("NUL", "html with NULs", put("nul.html", b"<p>a\0b</p>\0")),
        ("NUL", "tex with NULs", put("nul.tex", b"\\section{a\0b}\0")),
        ("encoding", "UTF-16 LE BOM .md", put("u16.md", "# Título\n\nUTF-16.\n".encode("utf-16"))),
        ("encoding", "UTF-16 BE BOM .txt", put("u16.txt", b"\xfe\xff" + "BE".encode("utf-16-be"))),
        ("encoding", "UTF-16 .html", put("u16.html", "<p>héllo</p>".encode("utf-16"))),
        ("encoding", "UTF-32 BOM .md", put("u32.md", "# U32\n".encode("utf-32"))),
        ("encoding", "UTF-8 BOM .tex", put("bom.tex", b"\xef\xbb\xbf\\section{BOM}\n")),
        ("encoding", "lone surrogates", put("cesu.md", b"# S\n\n\xed\xa0\x80\xed\xb0\x80\n")),
        ("encoding", "odd BOM only", put("bom.txt", b"\xff\xfe")),
        ("unicode", "polytonic Greek .md", put("greek.md", b"# \xcd\xba\n\n" + GREEK * 50)),
        ("unicode", "Arabic forms .md", put("arabic.md", b"# \xef\xb7\xba\n\n" + ARABIC * 50)),
        ("unicode", "Arabic forms .html", put("arabic.html", b"<p>" + ARABIC * 50)),
        ("unicode", "Greek .tex", put("greek.tex", b"\\section{" + GREEK + b"}" + GREEK * 20)),
        ("unicode", "10k combining marks", put("zalgo.md", b"a" + "\u0301".encode() * 10_000)),
        ("unicode", "U+FDFA x 100k", put("fdfa.txt", "\ufdfa".encode() * 100_000)),
    ]
    out += [Case(kind, name, w) for kind, name, w in fixed]
    return out


def _list(depth: int) -> bytes:
    return b"".join(b"  " * i + b"- item\n" for i in range(depth))


def _envs(depth: int) -> bytes:
    return b"\\begin{itemize}\\item x" * depth + b"\\end{itemize}" * depth


# ---------------------------------------------------------------- running


def index_child(folder: Path, limit: float) -> tuple[int, float, float, bool, str, str]:
    """``kbx index FOLDER --json`` in a child; (rc, seconds, peak MB, hung, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        p = subprocess.Popen(
            [KBX, "index", str(folder), "--json"],
            cwd=folder,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        hung, status, usage = False, 0, None
        while usage is None:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                usage = ru
            elif time.monotonic() - started > limit:
                hung = True
                os.killpg(p.pid, signal.SIGKILL)
            else:
                time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
        reap(p.pid)
        took = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        text = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    return p.returncode, took, usage.ru_maxrss / 1024, hung, *text


def reap(pgid: int) -> None:
    """Kill what is left of a process group (workers of a killed run)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def run_one(case: Case, folder: Path, limit: float) -> Outcome:
    """Index one input alone."""
    folder.mkdir(parents=True)
    (folder / "kbx.toml").write_text(RULES_ONLY)
    case.write(os.fsencode(folder))
    rc, took, peak, hung, stdout, stderr = index_child(folder, limit)
    o = Outcome(case, rc, took, peak, hung, "Traceback" in stderr)
    try:
        o.report = json.loads(stdout)
    except ValueError:
        o.report = {"stderr": stderr[-300:]}
    return o


def run_all(items: list[Case], folder: Path, limit: float) -> dict:
    """Every input in one folder (one subfolder each) beside a good file."""
    folder.mkdir(parents=True)
    (folder / "kbx.toml").write_text(RULES_ONLY)
    (folder / "good.md").write_bytes(GOOD)
    for i, case in enumerate(items):
        sub = folder / f"case{i:03d}"
        sub.mkdir()
        case.write(os.fsencode(sub))
    rc, took, peak, hung, stdout, stderr = index_child(folder, limit)
    found = subprocess.run(
        [KBX, "search", "zebrafinch", "--json"], cwd=folder, capture_output=True, text=True
    )
    status = subprocess.run([KBX, "status", "--json"], cwd=folder, capture_output=True, text=True)
    try:
        hits = [h["path"] for h in json.loads(found.stdout)["hits"]]
        failures = json.loads(status.stdout)["failures"]
    except (ValueError, KeyError):
        hits, failures = [], []
    return {
        "rc": rc,
        "seconds": took,
        "peak_mb": peak,
        "hung": hung,
        "traceback": "Traceback" in stderr,
        "good_found": hits == ["good.md"],
        "failures": failures,
        "stderr": stderr[-500:],
    }


# ---------------------------------------------------------------- report


def recorded(o: Outcome) -> int:
    """Files the run listed as failed or skipped."""
    return int(o.report.get("failed", 0)) + int(o.report.get("skipped", 0))


def matrix_table(outcomes: list[Outcome]) -> str:
    """One row per kind of input, and a total."""
    kinds = list(dict.fromkeys(o.case.kind for o in outcomes))
    header = [
        "input",
        "tried",
        "crashes",
        "hangs",
        "indexed",
        "recorded failed/skipped",
        "peak RSS MB max",
        "median",
        "max s",
    ]

    def row(name: str, os_: list[Outcome]) -> list:
        peaks = [o.peak_mb for o in os_]
        return [
            name,
            len(os_),
            sum(o.crash for o in os_),
            sum(o.hang for o in os_),
            sum(int(o.report.get("new", 0)) for o in os_),
            sum(recorded(o) for o in os_),
            f"{max(peaks):.0f}",
            f"{statistics.median(peaks):.0f}",
            f"{max(o.seconds for o in os_):.1f}",
        ]

    rows = [row(k, [o for o in outcomes if o.case.kind == k]) for k in kinds]
    rows.append(row("**all**", outcomes))
    return table(header, rows)


def problems(outcomes: list[Outcome]) -> list[str]:
    """A line per crash, hang or input neither indexed nor recorded."""
    out = []
    for o in outcomes:
        seen = int(o.report.get("new", 0)) + recorded(o)
        if o.hang:
            out.append(f"- hang: {o.case.kind}, {o.case.name}")
        elif o.crash:
            why = o.report.get("message") or o.report.get("stderr", "")
            out.append(f"- crash (exit {o.rc}): {o.case.kind}, {o.case.name}: {str(why)[:200]!r}")
        elif not seen:
            out.append(f"- neither indexed nor recorded: {o.case.kind}, {o.case.name}")
    return out


def report(args: argparse.Namespace, outcomes: list[Outcome], together: dict) -> str:
    """The whole section."""
    command = shlex.join(["python", "benchmarks/fuzz.py", *sys.argv[1:]])
    bad = {f"case{i:03d}" for i, o in enumerate(outcomes) if recorded(o)}
    listed = {f["path"].split("/", 1)[0] for f in together["failures"]} & bad
    n_bad, missing = len(bad), sorted(bad - listed)
    together_line = (
        f"All {len(outcomes)} inputs together in one folder (one subfolder each, beside a good "
        f"file): exit {together['rc']}, {together['seconds']:.1f} s, peak RSS "
        f"{together['peak_mb']:.0f} MB, {'a hang, ' if together['hung'] else ''}"
        f"{'a traceback, ' if together['traceback'] else ''}"
        f"{len(together['failures'])} failures listed by `kbx status --json`, covering "
        f"{len(listed)} of the {n_bad} inputs that failed or were skipped alone"
        f"{f' (not listed: {missing})' if missing else ''}; the good file "
        f"{'is' if together['good_found'] else 'is NOT'} found by `kbx search`."
    )
    parts = [
        SECTION,
        "",
        f"Command: `{command}`  ",
        f"Date: {dt.date.today().isoformat()}  ",
        f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; 1-minute load "
        f"average at the end {os.getloadavg()[0]:.2f} (shared machine)  ",
        f"Code: {code_note()}  ",
        f"Each input alone in its own folder, `kbx index DIR --json` in a child process, time "
        f"limit {args.timeout:.0f} s; `kbx.toml` disables spacy, gliner and acronyms (the "
        "rule-based recognizers run). Peak RSS: the largest of the command and its workers "
        "(`wait4`). Crash: a non-zero exit or a traceback on stderr. Random kinds are "
        f"drawn {args.n} times each (seed {args.seed}).",
        "",
        matrix_table(outcomes),
        "",
        together_line,
        "",
    ]
    wrong = problems(outcomes)
    parts += (
        ["Inputs that went wrong alone:", "", *wrong, ""] if wrong else ["None went wrong.", ""]
    )
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="draws per random kind")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    ap.add_argument("--write", action="store_true", help=f"update '{SECTION}' in {DOC.name}")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    items = cases(args.n, rng)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="kbx-fuzz-") as tmp:
        work = Path(tmp)
        for i, case in enumerate(items):
            o = run_one(case, work / f"single{i:03d}", args.timeout)
            outcomes.append(o)
            print(
                f"{i + 1}/{len(items)} {case.kind}: {case.name[:40]!r} rc={o.rc} "
                f"{o.seconds:.1f}s {o.peak_mb:.0f}MB new={o.report.get('new')} "
                f"recorded={recorded(o)}",
                file=sys.stderr,
                flush=True,
            )
            shutil.rmtree(work / f"single{i:03d}", ignore_errors=True)
        together = run_all(items, work / "all", args.timeout * 5)
    section = report(args, outcomes, together)
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)
        print(f"wrote {DOC.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
