"""Cold start: a one-word ``kbx search`` as a fresh process, beside bare Python's start.

Every question an agent asks through the CLI is a new process, so what it waits for is
Python's start, kbx's imports, typer parsing the command line, opening the index and the
query. This runs, alternately in one loop so noise hits all alike: ``python -c pass``,
``python -c "import typer"`` plus a one-option typer app (the floor typer sets),
``kbx search WORD --json`` on the Node.js corpus, and the same query in process on a warm
connection; it reports medians and what kbx adds over bare Python and the query.

    .venv/bin/python benchmarks/cold_start.py [--eval ../shared/eval] [--runs 15]
"""

from __future__ import annotations

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


def _run(argv: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = eval_arg(__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md")
    args = ap.parse_args()
    corpus = args.eval / NODEJS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "nodejs"
        shutil.copytree(corpus, root)
        build_kbx(root, root / ".kbx" / "index.duckdb", "snowball")
        kbx = [str(REPO / ".venv" / "bin" / "kbx"), "search", QUERY, "--json"]
        idx = api.Index.for_root(root)
        api.search(idx, QUERY)  # warm
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "a one-option typer app": [sys.executable, "-c", TYPER_APP, "x", "-k", "3"],
            f"kbx search {QUERY} --json": kbx,
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        times["the query in process (warm)"] = []
        for _ in range(args.runs):
            for name, argv in cases.items():
                times[name].append(_run(argv, root))
            t = time.perf_counter()
            api.search(idx, QUERY)
            times["the query in process (warm)"].append(time.perf_counter() - t)
    med = {name: statistics.median(v) for name, v in times.items()}
    bare, query = med["python -c pass"], med["the query in process (warm)"]
    cli = med[f"kbx search {QUERY} --json"]
    rows = [(name, f"{m * 1000:.0f}") for name, m in med.items()]
    rows.append(("kbx search − (bare Python + warm query)", f"{(cli - bare - query) * 1000:.0f}"))
    section = (
        "## Cold start\n\n"
        f"`.venv/bin/python benchmarks/cold_start.py --runs {args.runs}` on the Node.js corpus "
        f"({os.cpu_count()} cores, medians of {args.runs} alternating runs):\n\n"
        + table(["process", "ms"], rows)
        + "\n\nThe aim (issue 15) is `kbx search` within 300 ms of bare Python plus the query. "
        "`tests/test_cold_start.py` keeps the models, HTTP clients and parsers out of the "
        "import of the CLI and of the search path.\n"
    )
    print(section)
    write_section(args.out, "## Cold start", section, "# Benchmarks\n")


if __name__ == "__main__":
    main()
