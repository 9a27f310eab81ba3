"""kbx's ranking before and after a change, on one cached index of the scale benchmark.

The ranker and filters of revision ``--before`` (``git show REV:search/bm25.py`` and
``search/filters.py``, loaded as modules beside this checkout's) and this checkout's
``compile_filters`` then ``rank`` (top 10) run alternately in one process, on the same
open connection and the same claims, with each filter; both see the same store, so only
the query path differs. Figures: per-query median over ``--repeat`` passes after a
warm-up, then p50 and p90 over queries, wall and CPU (``process_time``, all of DuckDB's
threads), in ms.

    .venv/bin/python benchmarks/scale_before.py --db /tmp/kbx-scale/kbx-42500.duckdb \\
        [--before 30f448d] [--queries 50] [--repeat 3]
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from common import eval_arg, percentile, table
from scale import load_pool, query_sets
from scale_corpus import ENTITY
from scale_systems import AFTER, BEFORE, GLOB

from kbx.search import bm25, filters
from kbx.search.filters import Filters
from kbx.store.postings import analyzer_of

REPO = Path(__file__).resolve().parents[1]
ASKED = {
    "none": None,
    "entity": Filters(entities=[ENTITY]),
    "date": Filters(after=AFTER, before=BEFORE),
    "path": Filters(path=GLOB),
}


def old_modules(rev: str, tmp: Path):
    """Revision ``rev``'s filters and bm25 modules (its bm25 importing its own filters)."""
    loaded = {}
    for name in ("filters", "bm25"):
        text = subprocess.run(
            ["git", "show", f"{rev}:search/{name}.py"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        text = text.replace("from kbx.search.filters import", "from kbx_before_filters import")
        path = tmp / f"kbx_before_{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"kbx_before_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded["filters"], loaded["bm25"]


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, required=True, help="a kbx index the scale benchmark built")
    p.add_argument("--cache", type=Path, default=Path("/tmp/kbx-scale"))
    p.add_argument("--before", default="30f448d", help="the revision to compare with")
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    pool = load_pool(args.eval.resolve(), args.cache.resolve())
    claims = next(iter(query_sets(args.eval.resolve(), pool, args.queries).values()))
    con = duckdb.connect(str(args.db), read_only=True)
    an = analyzer_of(con)
    with tempfile.TemporaryDirectory() as tmp:
        old_filters, old_bm25 = old_modules(args.before, Path(tmp))
        paths = {
            f"before ({args.before})": (old_filters.compile_filters, old_bm25.rank),
            "after (this checkout)": (filters.compile_filters, bm25.rank),
        }
        wall: dict[tuple, list[list[float]]] = {}
        cpu: dict[tuple, list[list[float]]] = {}
        for rep in range(args.repeat + 1):
            for f in ASKED:
                for name, (compile_, rank) in paths.items():
                    w, c = [], []
                    for q in claims:
                        t0, c0 = time.perf_counter(), time.process_time()
                        rank(con, an.query(q), compile_(con, ASKED[f]), limit=10)
                        w.append((time.perf_counter() - t0) * 1000)
                        c.append((time.process_time() - c0) * 1000)
                    if rep:
                        wall.setdefault((name, f), []).append(w)
                        cpu.setdefault((name, f), []).append(c)
    rows = []
    for (name, f), runs in wall.items():
        per_w = [statistics.median(x) for x in zip(*runs, strict=True)]
        per_c = [statistics.median(x) for x in zip(*cpu[(name, f)], strict=True)]
        rows.append(
            [f, name]
            + [f"{percentile(per_w, q):.1f}" for q in (0.5, 0.9)]
            + [f"{percentile(per_c, q):.1f}" for q in (0.5, 0.9)]
        )
    units = con.execute("SELECT count(*) FROM units").fetchone()[0]
    print(f"kbx rank, top 10, {len(claims)} claims, {units:,} units:\n")
    print(table(["filter", "query path", "wall p50", "wall p90", "CPU p50", "CPU p90"], rows, 2))


if __name__ == "__main__":
    main()
