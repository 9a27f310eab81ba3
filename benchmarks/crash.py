"""Randomized crash consistency: ``kill -9`` a real kbx command, run it again, and compare
every table with a fresh build of the same files given the same gazetteer log.

Operations, on a seeded subset of the Node.js corpus (rule-based recognizers only: a
``kbx.toml`` in the corpus copy disables spacy, gliner and acronyms):

* ``index-first``: ``kbx index`` of files with no index (half the time the gazetteer log is
  kept, as after deleting the index file);
* ``index-incremental``: ``kbx index`` after random edits, removals and additions;
* ``reprocess``: ``kbx reprocess --all -r R`` for one or two random recognizers;
* ``gazetteer-add`` and ``gazetteer-import``: a random entry, or a JSONL file of entries.

Each trial kills the command either with SIGKILL at a random moment of its run (of the main
process only: its workers must die with it) or at a named kill point
(``KBX_KILL_AT=point:N``), then runs the same command to completion and compares. For the
gazetteer commands the rerun may be refused (the edit was kept), so a ``kbx index`` follows
and the comparison is made again. A control run of each operation without a kill is
compared too. This is a script, not a test: it measures and reports.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from common import table, write_section

import kbx
from kbx.search.search import search
from kbx.search.status import status
from kbx.store.consistency import CONTENT
from kbx.store.consistency import contents as store_contents
from kbx.store.db import Index

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
KBX_DIR = Path(kbx.__file__).resolve().parent  # PYTHONPATH=COPY runs a frozen copy of kbx
DOC = REPO / "docs" / "RELIABILITY.md"
SECTION = "## Crash consistency"
HEADER = "# Reliability\n\nWhat kbx survives: kills mid-write and hostile input.\n"
KBX = str(REPO / ".venv" / "bin" / "kbx")
RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
OPS = ("index-first", "index-incremental", "reprocess", "gazetteer-add", "gazetteer-import")
GAZ_POINTS = [
    "journal.appended",
    "gazetteer.logged",
    "gazetteer.carried",
    "gazetteer.rerun",
    "recognize.batch",
]
POINTS = {
    "index-first": ["index.batch", "recognize.batch", "index.context"],
    "index-incremental": ["index.batch", "index.removed", "recognize.batch", "index.context"],
    "reprocess": ["recognize.batch", "reprocess.recognized", "reprocess.context"],
    "gazetteer-add": GAZ_POINTS,
    "gazetteer-import": GAZ_POINTS,
}
# Points reached more than once in a run here (once per batch); N is drawn up to this.
REACHED = {"index.batch": 2, "recognize.batch": 5, "reprocess.recognized": 2}
RECOGNIZERS = ["dates", "identifiers", "quantities", "references", "gazetteer"]
NAMES = [  # (name, type, aliases): words the Node.js pages use
    ("libuv", "SOFTWARE", []),
    ("V8", "SOFTWARE", ["V8 engine"]),
    ("OpenSSL", "SOFTWARE", []),
    ("npm", "SOFTWARE", ["npm CLI"]),
    ("io.js", "PROJECT", ["iojs"]),
    ("Technical Steering Committee", "ORG", ["TSC"]),
    ("Long Term Support", "TOPIC", ["LTS"]),
    ("Chromium", "SOFTWARE", []),
    ("Windows", "PRODUCT", []),
    ("GitHub", "ORG", []),
]
BASE_ENTRY = ["Node.js Foundation", "--type", "ORG", "--by", "agent:crash"]
Contents = dict[str, list[str]]


@dataclass
class Trial:
    """One killed command, its rerun and the comparison."""

    op: str
    how: str
    killed: bool = False
    at: float = 0.0
    orphans: int = 0
    unreadable: str | None = None  # the store right after the kill
    corrupt: str | None = None  # the store after the rerun
    needed_repair: bool = False
    mismatched: list[str] = field(default_factory=list)
    after_index: list[str] | None = None  # gazetteer ops: tables still off after `kbx index`
    rerun_rc: int = 0
    rerun_s: float = 0.0


# ---------------------------------------------------------------- running kbx


def kbx(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the kbx CLI to completion."""
    return subprocess.run(
        [KBX, *args], cwd=cwd, env=env or clean_env(), capture_output=True, text=True
    )


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "KBX_KILL_AT"}


def alive_in_group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            out.append(int(stat.parent.name))
    return out


def run_killed(cmd: list[str], cwd: Path, at: float | None, point: str | None) -> tuple:
    """Run ``cmd``; SIGKILL its main process after ``at`` seconds, or let ``KBX_KILL_AT``
    end it. Returns (killed, seconds, orphans): workers still alive a second later."""
    env = clean_env() | ({"KBX_KILL_AT": point} if point else {})
    started = time.monotonic()
    p = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        rc = p.wait(timeout=at)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        rc = p.wait()
    took = time.monotonic() - started
    orphans = alive_in_group(p.pid)
    deadline = time.monotonic() + 1.0
    while orphans and time.monotonic() < deadline:
        time.sleep(0.05)
        orphans = alive_in_group(p.pid)
    if orphans:
        os.killpg(p.pid, signal.SIGKILL)
    return rc in (-signal.SIGKILL, 137), took, len(orphans)


# ---------------------------------------------------------------- reading stores


def contents(db: Path) -> Contents:
    """Every table's rows, free of ids and times, sorted: equal for equal stores."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return store_contents(con)
    finally:
        con.close()


def probe(root: Path) -> tuple[Contents | None, str | None, bool]:
    """Open the store as a reader would: status, a search, every table. Returns
    (contents, error, problems reported); no index file at all is no error."""
    idx = Index.for_root(root)
    if not idx.db.exists():
        return None, None, False
    try:
        st = status(idx)
        search(idx, "node release")
        return contents(idx.db), None, bool(st.problems)
    except Exception as e:  # noqa: BLE001 - any failure to read is what is counted
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:160]}", False


def digest(root: Path) -> str:
    """What a fresh build depends on: the files' paths and bytes, and the gazetteer log's
    events without their times."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if ".kbx" in p.relative_to(root).parts or not p.is_file():
            continue
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    log = Index.for_root(root).journal_path
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a torn last line is no event
            event.pop("logged_at", None)
            h.update(json.dumps(event, sort_keys=True).encode())
    return h.hexdigest()


class Fresh:
    """Fresh builds of a folder's files and gazetteer log, cached by what they depend on."""

    def __init__(self, work: Path, workers: int) -> None:
        self.work, self.workers, self.cache, self.builds = work, workers, {}, 0

    def __call__(self, root: Path) -> Contents:
        key = digest(root)
        if key not in self.cache:
            copy = self.work / "fresh"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".kbx"))
            log = Index.for_root(root).journal_path
            if log.exists():
                (copy / ".kbx").mkdir()
                shutil.copy(log, copy / ".kbx" / log.name)
            r = kbx(["index", str(copy), "--workers", str(self.workers)], copy)
            if r.returncode:
                raise RuntimeError(f"fresh build failed: {r.stderr[-500:]}")
            self.cache[key] = contents(Index.for_root(copy).db)
            self.builds += 1
        return self.cache[key]


# ---------------------------------------------------------------- operations


@dataclass
class Setup:
    """The base store every trial starts from, and files to add."""

    base: Path
    spare: list[Path]
    workers: int


def subset(corpus: Path, n: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """``n`` random Markdown/MDX files of the corpus, and the rest."""
    files = sorted(
        p.relative_to(corpus).as_posix()
        for p in corpus.rglob("*")
        if p.suffix in (".md", ".mdx") and p.is_file()
    )
    rng.shuffle(files)
    return sorted(files[:n]), files[n:]


def make_base(corpus: Path, work: Path, n: int, workers: int, rng: random.Random) -> Setup:
    """Copy the subset, index it and add one gazetteer entry (so the log has history)."""
    chosen, rest = subset(corpus, n, rng)
    base = work / "trial"  # an index records its root: every trial runs in this folder
    for rel in chosen:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(corpus / rel, base / rel)
    (base / "kbx.toml").write_text(RULES_ONLY)
    for args in (
        ["index", str(base), "--workers", str(workers)],
        ["gazetteer", "add", *BASE_ENTRY],
    ):
        r = kbx(args, base)
        if r.returncode:
            raise SystemExit(f"building the base failed: {r.stderr[-500:]}")
    snapshot = work / "base"
    shutil.copytree(base, snapshot)
    return Setup(snapshot, [corpus / rel for rel in rest], workers)


def mutate(root: Path, spare: list[Path], rng: random.Random) -> None:
    """Random edits, removals and additions, as between two runs of ``kbx index``."""
    files = sorted(p for p in root.rglob("*.md*") if ".kbx" not in p.parts)
    touched = rng.sample(files, rng.randint(1, 4))
    for p in touched:
        paras = p.read_text("utf-8", "surrogateescape").split("\n\n")
        i = rng.randrange(len(paras))
        kind = rng.choice(["append", "drop", "swap"])
        if kind == "append":
            paras.append(f"Edited on 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}: V8 and libuv.")
        elif kind == "drop" and len(paras) > 1:
            del paras[i]
        else:
            other = rng.choice(files).read_text("utf-8", "surrogateescape").split("\n\n")
            paras[i] = rng.choice(other)
        p.write_text("\n\n".join(paras), "utf-8", "surrogateescape")
    for p in rng.sample(files, rng.randint(0, 2)):
        if p.exists():
            p.unlink()
    for src in rng.sample(spare, rng.randint(0, 2)):
        dest = root / "added" / src.name
        dest.parent.mkdir(exist_ok=True)
        shutil.copy(src, dest)
        touched.append(dest)
    later = time.time() + 5  # an edit within the same mtime tick would go unseen
    for p in touched:
        if p.exists():
            os.utime(p, (later, later))


def prepare(op: str, setup: Setup, root: Path, rng: random.Random) -> tuple[list[str], str]:
    """Put the trial's folder in its starting state; returns the command and a note."""
    shutil.copytree(setup.base, root)
    w = ["--workers", str(setup.workers)]
    if op == "index-first":
        keep_log = rng.random() < 0.5
        (root / ".kbx" / "index.duckdb").unlink()
        if not keep_log:
            shutil.rmtree(root / ".kbx")
        return [KBX, "index", str(root), *w], "log kept" if keep_log else "no log"
    if op == "index-incremental":
        mutate(root, setup.spare, rng)
        return [KBX, "index", str(root), *w], ""
    if op == "reprocess":
        chosen = rng.sample(RECOGNIZERS, rng.randint(1, 2))
        return [KBX, "reprocess", "--all", *[a for r in chosen for a in ("-r", r)], *w], ""
    if op == "gazetteer-add":
        name, type_, aliases = rng.choice(NAMES)
        args = ["gazetteer", "add", name, "--type", type_, "--by", "agent:crash"]
        args += [a for alias in aliases for a in ("--alias", alias)]
        if rng.random() < 0.3:
            args.append("--ignore-case")
        return [KBX, *args], name
    entries = rng.sample(NAMES, rng.randint(2, 6))
    file = root.parent / f"{root.name}-import.jsonl"
    file.write_text(
        "".join(
            json.dumps({"name": n, "type": t, "aliases": [n, *a]}) + "\n" for n, t, a in entries
        )
    )
    return [KBX, "gazetteer", "import", str(file), "--by", "agent:crash"], f"{len(entries)} entries"


def trial(op: str, setup: Setup, fresh: Fresh, work: Path, rng: random.Random, full: float):
    """Kill one command, run it again, compare with a fresh build."""
    root = work / "trial"
    shutil.rmtree(root, ignore_errors=True)
    cmd, _ = prepare(op, setup, root, rng)
    if rng.random() < 0.5:
        name = rng.choice(POINTS[op])
        point = f"{name}:{rng.randint(1, REACHED.get(name, 1))}"
        t = Trial(op, point)
        t.killed, t.at, t.orphans = run_killed(cmd, root, None, point)
    else:
        at = rng.uniform(0.3, 1.05 * full)
        t = Trial(op, f"SIGKILL at {at:.2f}s")
        t.killed, t.at, t.orphans = run_killed(cmd, root, at, None)
    after_kill, t.unreadable, problems = probe(root)
    started = time.monotonic()
    r = subprocess.run(cmd, cwd=root, env=clean_env(), capture_output=True, text=True)
    t.rerun_rc, t.rerun_s = r.returncode, time.monotonic() - started
    final, t.corrupt, _ = probe(root)
    expected = fresh(root)
    t.needed_repair = t.unreadable is not None or (
        after_kill is not None and (problems or after_kill != expected)
    )
    if final is None and t.corrupt is None:
        t.corrupt = "no index after the rerun"
    t.mismatched = diff(final, expected)
    if op.startswith("gazetteer") and t.mismatched:
        kbx(["index", str(root), "--workers", str(setup.workers)], root)
        final, error, _ = probe(root)
        t.after_index = diff(final, fresh(root)) if error is None else ["unreadable"]
    return t


def diff(got: Contents | None, want: Contents) -> list[str]:
    """The tables that differ."""
    if got is None:
        return ["(no store)"]
    return [name for name in CONTENT if got[name] != want[name]]


def control(op: str, setup: Setup, fresh: Fresh, work: Path, rng: random.Random):
    """The operation run once without a kill: its time and whether it matches."""
    root = work / "trial"
    shutil.rmtree(root, ignore_errors=True)
    cmd, _ = prepare(op, setup, root, rng)
    started = time.monotonic()
    subprocess.run(cmd, cwd=root, env=clean_env(), capture_output=True)
    took = time.monotonic() - started
    final, error, _ = probe(root)
    return took, error or diff(final, fresh(root))


# ---------------------------------------------------------------- report


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def results_table(trials: list[Trial], controls: dict[str, tuple]) -> str:
    """One row per operation."""
    header = [
        "operation",
        "runs",
        "killed",
        "unreadable after kill",
        "corrupt",
        "mismatched",
        "repaired",
        "orphans",
        "control matches",
        "full run s",
        "killed at s",
        "rerun s",
    ]
    rows = []
    for op in OPS:
        ts = [t for t in trials if t.op == op]
        if not ts:
            continue
        took, off = controls[op]
        mism = sum(bool(t.mismatched) for t in ts)
        still = sum(bool(t.after_index) for t in ts)
        rows.append(
            [
                op,
                len(ts),
                sum(t.killed for t in ts),
                sum(t.unreadable is not None for t in ts),
                sum(t.corrupt is not None for t in ts),
                f"{mism}" + (f" ({still} after `kbx index`)" if op.startswith("gaz") else ""),
                sum(t.killed and t.needed_repair and not t.mismatched for t in ts),
                sum(t.orphans for t in ts),
                "yes" if not off else f"no: {off}",
                f"{took:.2f}",
                f"{median([t.at for t in ts if t.killed]):.2f}",
                f"{median([t.rerun_s for t in ts]):.2f}",
            ]
        )
    return table(header, rows)


def notes(trials: list[Trial]) -> list[str]:
    """One line per trial that went wrong."""
    out = []
    for t in trials:
        what = []
        if t.unreadable:
            what.append(f"after the kill: {t.unreadable}")
        if t.corrupt:
            what.append(f"after the rerun: {t.corrupt}")
        if t.mismatched:
            what.append(f"rerun exit {t.rerun_rc}, differs in {', '.join(t.mismatched)}")
            if t.after_index is not None:
                what.append(f"after `kbx index`: {', '.join(t.after_index) or 'matches'}")
        if t.orphans:
            what.append(f"{t.orphans} worker(s) outlived the killed process")
        if what:
            out.append(f"- {t.op}, {t.how}: " + "; ".join(what))
    return out


def report(args: argparse.Namespace, trials: list[Trial], controls: dict, n_files: int) -> str:
    """The whole section."""
    command = shlex.join(["python", "benchmarks/crash.py", *sys.argv[1:]])
    by_how = sum(not t.how.startswith("SIGKILL") for t in trials)
    load = os.getloadavg()[0]
    parts = [
        SECTION,
        "",
        f"Command: `{command}`  ",
        f"Date: {dt.date.today().isoformat()}  ",
        f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, DuckDB "
        f"{duckdb.__version__}; 1-minute load average at the end {load:.2f} (the machine is "
        "shared, so times are indicative)  ",
        f"Code: {code_note()}  ",
        f"Corpus: {n_files} files drawn (seed {args.seed}) from the Node.js corpus, copied; "
        "its `kbx.toml` disables spacy, gliner and acronyms (rule-based recognizers only); "
        f"`--workers {args.workers}`.",
        "",
        f"{len(trials)} trials: {by_how} killed at a named kill point (`KBX_KILL_AT=point:N`, "
        f"N drawn up to {REACHED} and 1 elsewhere), {len(trials) - by_how} by SIGKILL of "
        "the main process at a random moment up to the length of a full run. After each "
        "kill the same command is run again to completion and every table (content free of "
        "ids and timestamps) is compared with a fresh build of the same files given the "
        "same `.kbx/gazetteer.jsonl`.",
        "",
        results_table(trials, controls),
        "",
        "killed: the command died before finishing (a kill point that was not reached N times "
        "lets it finish). unreadable after kill: status, a search or reading a table failed "
        "right after the kill. corrupt: the same after the rerun. repaired: killed runs whose "
        "store differed from the fresh build (or reported problems) after the kill and "
        "matched it after the rerun. orphans: worker processes alive 1 s after their parent "
        "was killed. For the gazetteer commands a mismatch is checked again after a `kbx "
        "index`. Times: the control run (no kill), the median moment of the kill, the median "
        "rerun.",
        "",
    ]
    bad = notes(trials)
    if bad:
        parts += ["Trials that went wrong:", "", *bad, ""]
    return "\n".join(parts)


def code_note() -> str:
    """Which kbx ran: the working tree (its HEAD, whether it has changes) or a copy."""
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True)
    if KBX_DIR != REPO:  # a SOURCE file beside the copy may say what it was copied from
        source = KBX_DIR.parent / "SOURCE"
        what = source.read_text().strip() if source.exists() else "a frozen copy"
        return f"kbx imported from {KBX_DIR}: {what}"
    changes = " with uncommitted changes" if dirty.stdout.strip() else ""
    return f"kbx from the working tree at HEAD {head.stdout.strip()}{changes}"


def code_points() -> set[str]:
    """The kill points named in kbx's code now."""
    found = set()
    for p in KBX_DIR.glob("*/*.py"):
        found |= set(re.findall(r'kill_point\("([\w.]+)"\)', p.read_text("utf-8")))
    return found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("eval", nargs="?", type=Path, default=DEFAULT_EVAL, help="evaluation data")
    ap.add_argument("--kills", type=int, default=60, help="trials in all, across operations")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--files", type=int, default=40, help="files drawn from the corpus")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--ops", default=",".join(OPS), help="operations, comma-separated")
    ap.add_argument("--write", action="store_true", help=f"update '{SECTION}' in {DOC.name}")
    args = ap.parse_args(argv)
    corpus = args.eval / "corpora" / "nodejs"
    if not corpus.is_dir():
        ap.error(f"no Node.js corpus at {corpus}")
    ops = args.ops.split(",")
    unused = code_points() - {p for op in ops for p in POINTS[op]}
    if unused:
        print(f"kill points not exercised: {sorted(unused)}", file=sys.stderr)
    rng = random.Random(args.seed)
    say: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="kbx-crash-") as tmp:
        work = Path(tmp)
        setup = make_base(corpus, work, args.files, args.workers, rng)
        fresh = Fresh(work, args.workers)
        controls = {op: control(op, setup, fresh, work, rng) for op in ops}
        say(f"controls: {controls}")
        trials = []
        for i in range(args.kills):
            t = trial(ops[i % len(ops)], setup, fresh, work, rng, controls[ops[i % len(ops)]][0])
            trials.append(t)
            say(f"{i + 1}/{args.kills} {t.op} {t.how}: killed={t.killed} mism={t.mismatched}")
    section = report(args, trials, controls, args.files)
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)
        print(f"wrote {DOC.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
