"""Dated sections: does "in month M" keep the passages of a release note written in M?

Release notes and NEWS files date each section in its heading (``## 2023-10-17, Version
21.0.0``, ``### … [27 Jan 2026]``) and list its changes below, over many passages. The
truth is read from the Markdown source, apart from kbx: a line belongs to the nearest
heading above it (ATX or Setext) that carries a date (ISO ``YYYY-MM-DD`` or ``D Mon
YYYY``), and a passage is of month M when one of its lines is. Each month that dates a
section is asked as ``--after M --before M``, with ``--date-from any`` (the default)
and ``mentioned``.

Runs the working tree and, with ``--baseline PKG`` (a folder holding an older checkout
as ``kbx``, put first on ``PYTHONPATH``), that revision beside it on the same files:

    .venv/bin/python benchmarks/section_dates.py FILE_OR_DIR... [--baseline /tmp/basepkg] [--write]

Files may be gzipped (Debian's ``/usr/share/doc``); they are copied, unzipped, into a
temporary folder and indexed there with the rule recognizers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import REPO, write_section

TITLE = "## Dated sections: release notes filtered by month (issue 42)"
HEADER = "# Benchmarks\n"
_HEADING = re.compile(r"^(#{1,6})\s+(.*)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SETEXT = re.compile(r"^(=+|-+)\s*$")  # the line under a heading
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DMY = re.compile(r"\b(\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (\d{4})\b")


def heading_date(text: str) -> dt.date | None:
    """The date a heading's text carries, read by two plain patterns."""
    try:
        if m := _ISO.search(text):
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        if m := _DMY.search(text):
            return dt.datetime.strptime(f"{m[1]} {m[2]} {m[3]}", "%d %b %Y").date()
    except ValueError:
        return None
    return None


def line_dates(text: str) -> list[dt.date | None]:
    """For each line (1-based: index 0 unused), the date of its nearest dated heading."""
    out: list[dt.date | None] = [None]
    stack: list[tuple[int, dt.date | None]] = []  # (level, date) of the open headings
    fenced = False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        setext = not fenced and i + 1 < len(lines) and _SETEXT.match(lines[i + 1])
        if heading or (setext and line.strip() and not line.lstrip().startswith(("*", "-"))):
            level = len(heading[1]) if heading else (1 if "=" in lines[i + 1] else 2)
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading_date(heading[2] if heading else line)))
        out.append(next((d for _, d in reversed(stack) if d), None))
    return out


def measure(db: Path, root: Path) -> dict:
    """Kept, right, relevant and recalled passages, summed over the months asked."""
    import duckdb

    from kbx.search.filters import Filters, compile_filters

    con = duckdb.connect(str(db), read_only=True)
    truth = {p.name: line_dates(p.read_text("utf-8", errors="replace")) for p in root.glob("*.md")}
    months: dict[str, set[int]] = defaultdict(set)  # "YYYY-MM" -> the passages of it
    rows = con.execute(
        "SELECT pl.unit_id, d.path, pl.start_line, pl.end_line "
        "FROM placements pl JOIN documents d USING (doc_id)"
    ).fetchall()
    for unit_id, path, first, last in rows:
        dates = truth.get(path, [])
        for day in {dates[i] for i in range(first, min(last, len(dates) - 1) + 1)} - {None}:
            months[f"{day:%Y-%m}"].add(unit_id)
    out = {"passages": len(rows), "months": len(months)}
    for mode in ("any", "mentioned"):
        kept = right = relevant = recalled = 0
        for month, truly in months.items():
            f = compile_filters(con, Filters(after=month, before=month, date_from=mode))
            got = {u for (u,) in con.execute(f.units(), f.params).fetchall()}
            kept, right = kept + len(got), right + len(got & truly)
            relevant, recalled = relevant + len(truly), recalled + len(got & truly)
        out[mode] = (kept, right, relevant, recalled)
    return out


def copy(sources: list[Path], root: Path) -> None:
    """The Markdown files of ``sources``, unzipped, under unique names in ``root``."""
    files = [f for s in sources for f in (sorted(s.rglob("*")) if s.is_dir() else [s])]
    for f in files:
        if not f.is_file() or not re.search(r"\.(md|markdown)(\.gz)?$", f.name, re.I):
            continue
        data = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
        stem = re.sub(r"\.(md|markdown)(\.gz)?$", "", f.name, flags=re.I)
        (root / f"{f.parent.name}-{stem}.md").write_bytes(data)


def run(root: Path, pythonpath: str | None) -> dict:
    """Index ``root`` afresh and measure it, in a process running the chosen code."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    kbx = [str(REPO / ".venv" / "bin" / "kbx"), "index", str(root), "--json"]
    subprocess.run(["rm", "-rf", str(root / ".kbx")], check=True)
    started = time.monotonic()
    subprocess.run(kbx, check=True, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - started
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(root)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout) | {"seconds": seconds}


def section(results: dict[str, dict], sources: list[str], command: str) -> str:
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    any_r = next(iter(results.values()))
    lines = [
        TITLE,
        "",
        f"Command: `{command}`, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, commit {commit}; "
        f"load {os.getloadavg()[0]:.1f}. Files: {', '.join(sources)} "
        f"({any_r['passages']} passages, {any_r['months']} months that date a section). "
        "Each month asked as `--after M --before M`; right: a line of the passage lies under "
        "a heading dated in M (read from the source, apart from kbx).",
        "",
        "| code | `--date-from` | kept | right | precision | passages of M | recall |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        for mode in ("any", "mentioned"):
            kept, right, relevant, recalled = r[mode]
            p = f"{right / kept:.3f}" if kept else "–"
            rc = f"{recalled / relevant:.3f}" if relevant else "–"
            lines.append(f"| {name} | {mode} | {kept} | {right} | {p} | {relevant} | {rc} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sources", type=Path, nargs="*", help="Markdown files or folders")
    p.add_argument("--baseline", help="a folder holding an older checkout as kbx")
    p.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--write", action="store_true", help="write the section into docs/")
    a = p.parse_args()
    if a.measure:
        print(json.dumps(measure(a.measure / ".kbx" / "index.duckdb", a.measure)))
        return
    with tempfile.TemporaryDirectory(prefix="kbx-sections-") as work:
        root = Path(work)
        copy(a.sources, root)
        (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner"]\n', "utf-8")
        results = {}
        if a.baseline:
            base = subprocess.run(
                ["git", "-C", f"{a.baseline}/kbx", "rev-parse", "--short", "HEAD"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            results[f"baseline {base}"] = run(root, a.baseline)
        results["working tree"] = run(root, None)
    command = "python benchmarks/section_dates.py " + " ".join(sys.argv[1:])
    text = section(results, [str(s) for s in a.sources], command)
    print(text)
    if a.write:
        write_section(REPO / "docs" / "BENCHMARKS.md", TITLE, text, HEADER)


if __name__ == "__main__":
    main()
