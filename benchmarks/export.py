"""Exports (issue 19): throughput (mentions/s) and peak memory of ``kbx export`` in each
format on the Node.js corpus indexed with the rule-based recognizers, beside a floor.

Each export runs in a fresh process (``api.export`` after the imports, timed there), so its
peak resident set (``ru_maxrss``) is its own; the table also gives the resident set once
kbx and the format's libraries are imported, so what the export itself adds shows apart
from what Python, DuckDB and spaCy cost to load. The floor is DuckDB alone: one ``COPY`` of
the mentions joined to their documents as JSON lines (no original lines, no overlap
deduplication, no file read), the least any JSONL export could cost. Rounds visit every
system in turn, so the machine's load falls on all alike; the figures are medians.

The index is a copy (``--index``, a folder with ``.kbx/index.duckdb``, is copied, never
written; the copy is migrated if its schema is older), or, without one, a fresh rules-only
build of ``corpora/nodejs`` under ``--eval``.

    .venv/bin/python benchmarks/export.py [--index /tmp/kbx-prof/nodejs] [--rounds 3]

A script, not a test: it asserts nothing about speed.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
from common import NODEJS, REPO, build_kbx, eval_arg, table
from common import write_section as write_doc_section

from kbx.entities.build import settle
from kbx.store.db import Index

FORMATS = ("jsonl", "webanno", "brat", "docbin", "parquet")
TITLE = "## Exports (issue 19)"

CHILD = r"""
import json, sys, time
from pathlib import Path
fmt, root, out = sys.argv[1:4]
def rss_kb(field="VmRSS"):  # VmHWM: this process's peak (ru_maxrss keeps the parent's)
    status = Path("/proc/self/status").read_text()
    return int(status.split(field + ":")[1].split()[0])
if fmt == "floor":
    import duckdb
    con = duckdb.connect(f"{root}/.kbx/index.duckdb", read_only=True)
    start = rss_kb()
    t = time.perf_counter()
    (n,) = con.execute(f'''COPY (SELECT d.path, d.sha256, u.unit_hash, m.start_char, m.end_char,
            m.text, m.type, coalesce(dm.value, m.value) AS value, m.key, m.recognizer,
            m.version, m.confidence
        FROM documents d JOIN placements pl USING (doc_id) JOIN units u USING (unit_id)
        JOIN mentions m USING (unit_hash)
        LEFT JOIN doc_mentions dm ON dm.doc_id = d.doc_id AND dm.unit_hash = m.unit_hash
            AND dm.recognizer = m.recognizer AND dm.version = m.version
            AND dm.start_char = m.start_char
        ORDER BY d.path, pl.ordinal, m.start_char) TO '{out}' (FORMAT json)''').fetchone()
    seconds = time.perf_counter() - t
    (units,) = con.execute("SELECT count(*) FROM units").fetchone()
else:
    from kbx import api
    api.export  # the export room, imported before the clock starts
    if fmt == "docbin":
        import spacy; spacy.blank("en")
    idx = api.Index.for_root(root)
    start = rss_kb()
    t = time.perf_counter()
    r = api.export(idx, fmt, out)
    seconds, n, units = time.perf_counter() - t, r.mentions, r.units
peak = rss_kb("VmHWM")
print(json.dumps({"seconds": seconds, "mentions": n, "units": units, "start_kb": start,
                  "peak_kb": peak}))
"""


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _one(fmt: str, root: Path, work: Path, i: int) -> dict:
    out = work / (f"{fmt}-{i}" + ("" if fmt in ("brat", "docbin", "parquet") else ".out"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, fmt, str(root), str(out)],
        capture_output=True,
        text=True,
        cwd=work,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"{fmt} failed: {done.stderr[-2000:]}")
    got = json.loads(done.stdout.splitlines()[-1])
    got["bytes"] = _size(Path(out))
    shutil.rmtree(out, ignore_errors=True) if Path(out).is_dir() else Path(out).unlink()
    return got


def main() -> None:
    p = eval_arg(__doc__.splitlines()[0])
    p.add_argument("--index", type=Path, default=Path("/tmp/kbx-prof/nodejs"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbx-export-bench-") as tmp:
        root = Path(tmp) / "nodejs"
        if (args.index / ".kbx" / "index.duckdb").exists():
            shutil.copytree(args.index, root)
            built = f"a copy of the rules-only index at {args.index}"
        else:
            shutil.copytree(args.eval / NODEJS, root)
            build_kbx(root, root / ".kbx" / "index.duckdb", "snowball")
            built = "a fresh rules-only build of corpora/nodejs"
        for path in [root, *root.rglob("*")]:  # a copy of a read-only tree: make it ours
            path.chmod(path.stat().st_mode | 0o200)
        idx = Index.for_root(root)
        with idx.writer() as con:  # an index of an older schema: migrated, layer rebuilt
            settle(con)
        work = Path(tmp) / "out"
        work.mkdir()
        with duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True) as con:
            docs, units = con.execute(
                "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM units)"
            ).fetchone()
        load_start = os.getloadavg()[0]
        runs: dict[str, list[dict]] = {f: [] for f in ("floor", *FORMATS)}
        for i in range(args.rounds):
            for fmt in runs:
                runs[fmt].append(_one(fmt, root, work, i))
                print(fmt, i, runs[fmt][-1], file=sys.stderr)
        load_end = os.getloadavg()[0]
    rows = []
    floor = statistics.median(r["seconds"] for r in runs["floor"])
    for fmt, got in runs.items():
        seconds = statistics.median(r["seconds"] for r in got)
        n = got[0]["mentions"]
        rows.append(
            [
                "DuckDB COPY to JSON (floor)" if fmt == "floor" else f"kbx export {fmt}",
                f"{n:,}",
                f"{seconds:.2f}",
                f"{n / seconds:,.0f}",
                f"{got[0]['units'] / seconds:,.0f}",
                f"{seconds / floor:.1f}x",
                f"{statistics.median(r['start_kb'] for r in got) / 1024:.0f}",
                f"{max(r['peak_kb'] for r in got) / 1024:.0f}",
                f"{got[0]['bytes'] / 1e6:.1f}",
            ]
        )
    headers = ["system", "mentions", "s (median)", "mentions/s", "units/s", "vs floor",
               "RSS at start MB", "peak RSS MB", "output MB"]  # fmt: skip
    today = datetime.date.today().isoformat()
    section = (
        f"{TITLE}\n\n"
        f"Measured {today} on {built} ({docs:,} documents, {units:,} units), "
        f"{args.rounds} rounds, "
        f"every system once per round in turn; load average {load_start:.1f} at the start and "
        f"{load_end:.1f} at the end (a shared 2-core machine: read the ratios).\n\n"
        f"    .venv/bin/python benchmarks/export.py --index {args.index} "
        f"--rounds {args.rounds}\n\n"
        f"{table(headers, rows)}\n\n"
        "`RSS at start` is the process once kbx (and, for docbin, spaCy's blank English) is "
        "imported and the index found, before the export; `peak` is the most it held during "
        "the run. The floor writes the same mentions without what an export adds: each "
        "mention's own original lines (jsonl), the file's characters and quotes (webanno), "
        "the joined texts (brat), tokenization (docbin).\n"
    )
    write_doc_section(args.out, TITLE, section, "# Benchmarks\n")
    print(section)


if __name__ == "__main__":
    main()
