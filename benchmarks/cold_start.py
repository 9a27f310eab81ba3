"""Cold start: a one-word ``kbx search`` as a fresh process, beside bare Python's start.

Every question an agent asks through the CLI is a new process, so what it waits for is
Python's start, kbx's imports, typer parsing the command line, opening the index and the
query. This runs, alternately in one loop so noise hits all alike: ``python -c pass``,
``python -c "import typer"`` plus a one-option typer app (the floor typer sets), ``kbx
search WORD`` (text) and ``kbx search WORD --json`` (which adds the facets) on the Node.js
corpus, and the same two queries in process on a warm connection. It reports medians of
wall time and of CPU time (user + system, the child's own: on a shared machine the wall
time grows with the load, the CPU time much less), and what kbx adds over bare Python and
the query. ``--compare DIR`` also times kbx search with PYTHONPATH=DIR: an older commit
unpacked as DIR/kbx (``git archive OLD | tar -x -C DIR/kbx``), or another typer installed
there (``pip install --target DIR``), in the same loop; its rows are named after DIR.
``--embedded DIR`` also times the default (hybrid) and a BM25 ``kbx search`` in DIR, a folder
``kbx embed`` has given vectors (embedding Node.js takes about 20 minutes here, so the
script takes one made already), with its hybrid query in process; ``--compare`` applies.

    .venv/bin/python benchmarks/cold_start.py [--eval ../shared/eval] [--runs 15] [--compare DIR]
        [--embedded DIR]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import NODEJS, REPO, build_kbx, eval_arg, table, write_section

from kbx import api

QUERY = "stream"
TYPER_APP = """
import typer
app = typer.Typer()
@app.command()
def search(q: str, k: int = typer.Option(10, "-k"), as_json: bool = typer.Option(False, "--json")):
    pass
app()
"""
TYPER_ARGV = [sys.executable, "-c", TYPER_APP, "x", "-k", "3"]
KBX = REPO / ".venv" / "bin" / "kbx"
STAGES = """
import contextlib, io, json, sys, time
cpu = [("Python's own start", time.process_time())]
def stage(name):
    cpu.append((name, time.process_time()))
import typer, typer.main
stage("import typer")
import kbx.cli.app
stage("import kbx.cli.app (the rest)")
import duckdb
stage("import duckdb")
import numpy
stage("import numpy (the mapped postings)")
from kbx import api
api.search, api.Index, api.Filters, api.to_json
stage("kbx's search modules")
sys.argv = ["kbx", "search", sys.argv[1]]
with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
    kbx.cli.app.main()
stage("typer builds and parses the command; open the index; the query; print")
print(json.dumps([cpu[0], *((n, b - a) for (_, a), (n, b) in zip(cpu, cpu[1:]))]))
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``argv``."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise RuntimeError(f"{argv[:4]} exited {p.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def _stages(cwd: Path) -> list[tuple[str, float]]:
    """CPU seconds of each stage of a text ``kbx search`` in a fresh process, in the order
    the command meets them (the first stage is what Python spent before the script)."""
    p = subprocess.run(
        [sys.executable, "-c", STAGES, QUERY], cwd=cwd, capture_output=True, text=True, check=True
    )
    return json.loads(p.stdout.splitlines()[-1])


def _warm(fn) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = eval_arg(__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument(
        "--compare",
        type=Path,
        action="append",
        default=[],
        help="also time kbx search with PYTHONPATH=DIR (an older kbx as DIR/kbx, or another "
        "typer); repeatable",
    )
    ap.add_argument(
        "--embedded", type=Path, help="a folder with an embedded index: time hybrid there too"
    )
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md")
    args = ap.parse_args()
    corpus = args.eval / NODEJS
    load_before = os.getloadavg()[0]
    text, as_json = f"kbx search {QUERY}", f"kbx search {QUERY} --json"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "nodejs"
        shutil.copytree(corpus, root)
        build_kbx(root, root / ".kbx" / "index.duckdb", "snowball")
        idx = api.Index.for_root(root)
        queries = {  # what each process asks, in process on a warm connection
            "the text query in process (warm)": lambda: api.search(idx, QUERY, k=5, exact=1),
            "the --json query in process (warm)": lambda: api.search(idx, QUERY, facets=True),
        }
        cases: dict[str, tuple[list[str], Path, dict[str, str] | None]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], root, None),
            "a one-option typer app": (TYPER_ARGV, root, None),
            text: ([str(KBX), "search", QUERY], root, None),
            as_json: ([str(KBX), "search", QUERY, "--json"], root, None),
        }
        pairs = [(text, "the text query in process (warm)"),
                 (as_json, "the --json query in process (warm)")]  # fmt: skip
        if args.embedded:
            hybrid, bm25 = f"{text} (hybrid, embedded index)", f"{text} --mode bm25 (same index)"
            cases[hybrid] = ([str(KBX), "search", QUERY], args.embedded, None)
            cases[bm25] = ([str(KBX), "search", QUERY, "--mode", "bm25"], args.embedded, None)
            embedded = api.Index.for_root(args.embedded)
            query = "the hybrid text query in process (warm)"
            queries[query] = lambda: api.search(embedded, QUERY, k=5, exact=1)
            pairs.append((hybrid, query))
        for q in queries.values():
            q()
        for other in args.compare:
            env = os.environ | {"PYTHONPATH": str(other.resolve())}
            for name, (argv, cwd, _) in list(cases.items())[2:]:
                cases[f"{name} ({other.name})"] = (argv, cwd, env)
        times: dict[str, list[tuple[float, float]]] = {n: [] for n in [*cases, *queries]}
        staged: dict[str, list[float]] = {}
        for _ in range(args.runs):
            for name, (argv, cwd, env) in cases.items():
                times[name].append(_run(argv, cwd, env))
            for name, q in queries.items():
                times[name].append(_warm(q))
            for name, seconds in _stages(root):
                staged.setdefault(name, []).append(seconds)
    wall = {n: statistics.median(w for w, _ in v) for n, v in times.items()}
    cpu = {n: statistics.median(c for _, c in v) for n, v in times.items()}
    rows = [(n, f"{wall[n] * 1000:.0f}", f"{cpu[n] * 1000:.0f}") for n in times]
    bare = "python -c pass"
    for name, query in pairs:
        for shown in (name, *(f"{name} ({other.name})" for other in args.compare)):
            if shown in times:
                over = [m[shown] - m[bare] - m[query] for m in (wall, cpu)]
                rows.append(
                    (f"{shown} − (bare Python + warm query)", *(f"{x * 1000:.0f}" for x in over))
                )
    section = (
        "## Cold start\n\n"
        f"`.venv/bin/python benchmarks/cold_start.py --runs {args.runs}"
        + "".join(f" --compare {other.name}" for other in args.compare)
        + (f" --embedded {args.embedded}" if args.embedded else "")
        + f"` on the Node.js corpus, {time.strftime('%Y-%m-%d')} ({os.cpu_count()} cores, "
        f"load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after; medians "
        f"of {args.runs} alternating runs; CPU is the process's user + system time):\n\n"
        + table(["process", "wall ms", "CPU ms"], rows)
        + "\n\nWhere a text `kbx search` spends its CPU, stage by stage in one process (medians "
        "of the same runs; a module another stage already loaded costs nothing there):\n\n"
        + table(
            ["stage", "CPU ms"],
            [(n, f"{statistics.median(v) * 1000:.0f}") for n, v in staged.items()],
        )
        + "\n\nThe aim (issue 15) is `kbx search` within 300 ms of bare Python plus the query. "
        "`tests/test_cold_start.py` keeps the models, HTTP clients, parsers and rich out of "
        "the import of the CLI and of the search path, and builds only the command a "
        "process runs.\n"
    )
    print(section)
    write_section(args.out, "## Cold start", section, "# Benchmarks\n")


if __name__ == "__main__":
    main()
