"""A small index's fixed cost: ``index()`` of a few files, first and after one file changes.

What a watcher's re-index (``kbx serve``) and nearly every test pay, whatever the corpus:
per call, the statements DuckDB runs, the CPU seconds (this process and the readers it
forks) and the wall time, for this checkout beside another
(``--kbx DIR``, a folder holding its ``kbx`` package), each in a child process, the two
taken in turn for ``--rounds`` rounds. Files: the first ``--files`` of the Node.js corpus
by path, copied to a temporary folder; the rule-based recognizers (as
``benchmarks/ingest.py``), or with ``--ner`` spaCy too, as ``kbx[ner]`` installs it (the
calls of a child are one long-lived process, as a server is); DuckDB on one thread
(``KBX_DUCKDB_THREADS=1``, as the tests).
Statements are counted by a wrapper around the connections ``duckdb.connect`` returns.

    python benchmarks/small_index.py --kbx /tmp/base --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import DEFAULT_EVAL, NODEJS

CHILD = r"""
import json, os, shutil, sys, time
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
import duckdb

COUNT = [0]
connect = duckdb.connect


class Counted:
    def __init__(self, con):
        self._con = con

    def execute(self, *args, **kwargs):
        COUNT[0] += 1
        out = self._con.execute(*args, **kwargs)
        return self if out is self._con else out

    def cursor(self):
        return Counted(self._con.cursor())

    def __getattr__(self, name):
        return getattr(self._con, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._con.__exit__(*exc)


duckdb.connect = lambda *a, **k: Counted(connect(*a, **k))
from kbx.indexing.ingest import index

root, reps = sys.argv[2], int(sys.argv[3])
changed = os.path.join(root, sys.argv[4])


def timed(fresh):
    if fresh:
        shutil.rmtree(os.path.join(root, ".kbx"), ignore_errors=True)
    else:
        with open(changed, "a", encoding="utf-8") as f:
            f.write("\nOne more line.\n")
    COUNT[0] = 0
    cpu, wall = _cpu(), time.perf_counter()
    index(root)
    return _cpu() - cpu, time.perf_counter() - wall, COUNT[0]


def _cpu():  # this process and its readers (reaped when the run ends)
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


timed(True)  # imports and caches warm
first = [timed(True) for _ in range(reps)]
again = [timed(False) for _ in range(reps)]
print(json.dumps({"first": first, "changed": again}))
"""


def child(kbx: str, root: Path, reps: int, changed: str) -> dict:
    env = dict(os.environ, KBX_DUCKDB_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kbx, str(root), str(reps), changed],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
        env=env,
    )
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kbx", required=True, help="the other checkout (holds its kbx folder)")
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL, help="the eval data folder")
    ap.add_argument("--files", type=int, default=2, help="files of the Node.js corpus")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=8, help="index() calls per child and kind")
    ap.add_argument(
        "--ner", action="store_true", help="spaCy on too (as kbx[ner] installs it), not rules only"
    )
    args = ap.parse_args()
    corpus = args.eval / NODEJS
    files = sorted(p for p in corpus.rglob("*.md") if p.is_file())[: args.files]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        for p in files:
            target = root / p.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, target)
        off = '"gliner", "acronyms"' if args.ner else '"spacy", "gliner", "acronyms"'
        (root / "kbx.toml").write_text(f"[recognizers]\ndisable = [{off}]\n", encoding="utf-8")
        changed = str(files[-1].relative_to(corpus))
        rounds = [
            (child(args.kbx, root, args.reps, changed), child("", root, args.reps, changed))
            for _ in range(args.rounds)
        ]
    size = sum(p.stat().st_size for p in files)
    print(f"{len(files)} files of {corpus} ({size:,} bytes); {changed} changes", end="")
    print("; spaCy on" if args.ner else "; rule-based recognizers")
    print("| checkout | kind | CPU ms | CPU ms per round | wall ms | statements |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for i, name in ((0, f"other ({args.kbx})"), (1, "this")):
        for kind in ("first", "changed"):
            cpu = [statistics.median(c for c, _, _ in r[i][kind]) * 1000 for r in rounds]
            wall = statistics.median(w for r in rounds for _, w, _ in r[i][kind]) * 1000
            statements = statistics.median(n for r in rounds for _, _, n in r[i][kind])
            per = ", ".join(f"{m:.0f}" for m in cpu)
            label = "first index" if kind == "first" else "one file changed"
            print(
                f"| {name} | {label} | {statistics.median(cpu):.0f} | {per} | {wall:.0f} "
                f"| {statements:.0f} |"
            )


if __name__ == "__main__":
    main()
