"""kbx's query path before and after a change, side by side in one process on one index.

The search modules of revision ``--before`` (``git show REV:search/NAME.py``, loaded as
modules beside this checkout's, each importing the others of its revision) and this
checkout's run alternately, on the same index and queries, so only the query path
differs and the machine's load falls on both alike. Two paths:

* ``rank`` (default): ``compile_filters`` then ``rank`` (top 10) on one open connection
  (each revision finds the placements the filter keeps first, as its search does, where
  it has ``search/allowed.py``),
  for the claims of the scale benchmark, with each of its filters (``--db`` a cached index);
* ``--search ROOT``: ``search`` as ``kbx serve`` answers it (k=8, the exact-phrase pass,
  facets) on a warm connection, for one-word and two-to-three-word queries drawn from the
  index's own text (the Node.js index of benchmarks/serve.py, say).

Figures: per-query median over ``--repeat`` passes after a warm-up, then p50 and p90 over
queries, wall and CPU (``process_time``, all of DuckDB's threads), in ms.

    .venv/bin/python benchmarks/scale_before.py --db /tmp/kbx-scale/kbx-42500.duckdb \\
        [--before 30f448d] [--queries 50] [--repeat 3]
    .venv/bin/python benchmarks/scale_before.py --search ROOT --before 5bedb7d
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
from kbx.search.allowed import allowed
from kbx.search.filters import Filters
from kbx.search.state import facet_layer, index_state
from kbx.store import arrays
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

REPO = Path(__file__).resolve().parents[1]
ASKED = {
    "none": None,
    "entity": Filters(entities=[ENTITY]),
    "date": Filters(after=AFTER, before=BEFORE),
    "path": Filters(path=GLOB),
}


RANKING = ("filters", "allowed", "bm25")
SEARCH = ("filters", "allowed", "bm25", "passages", "facets", "grep", "search")


def old_modules(rev: str, tmp: Path, names: tuple[str, ...] = RANKING) -> dict:
    """Revision ``rev``'s search modules ``names`` (in import order) that it has, each
    importing the others of its revision."""
    loaded = {}
    there = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{rev}:search"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    names = tuple(n for n in names if f"{n}.py" in there)
    for name in names:
        text = subprocess.run(
            ["git", "show", f"{rev}:search/{name}.py"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for other in names:
            text = text.replace(
                f"from kbx.search.{other} import", f"from kbx_before_{other} import"
            )
        path = tmp / f"kbx_before_{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"kbx_before_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded


def timed(paths: dict, cases: dict, repeat: int) -> list[list]:
    """Rows of p50/p90 wall and CPU per case and path: ``paths`` maps a label to a
    function of a query and a case's value, ``cases`` a case to its value and queries."""
    wall: dict[tuple, list[list[float]]] = {}
    cpu: dict[tuple, list[list[float]]] = {}
    for rep in range(repeat + 1):
        for case, (value, queries) in cases.items():
            for name, fn in paths.items():
                w, c = [], []
                for q in queries:
                    t0, c0 = time.perf_counter(), time.process_time()
                    fn(q, value)
                    w.append((time.perf_counter() - t0) * 1000)
                    c.append((time.process_time() - c0) * 1000)
                if rep:
                    wall.setdefault((case, name), []).append(w)
                    cpu.setdefault((case, name), []).append(c)
    rows = []
    for (case, name), runs in wall.items():
        per_w = [statistics.median(x) for x in zip(*runs, strict=True)]
        per_c = [statistics.median(x) for x in zip(*cpu[(case, name)], strict=True)]
        rows.append(
            [case, name]
            + [f"{percentile(per_w, q):.1f}" for q in (0.5, 0.9)]
            + [f"{percentile(per_c, q):.1f}" for q in (0.5, 0.9)]
        )
    return rows


def search_path(root: Path, before: str, n: int, repeat: int, tmp: Path) -> None:
    """``search`` of ``before`` beside this checkout's, as the server answers it."""
    from kbx.search.search import search as search_now
    from kbx.serve.live import LiveIndex
    from kbx.store.db import Index
    from serve import queries as draw

    old = old_modules(before, tmp, SEARCH)["search"]
    live = LiveIndex.of(Index.for_root(root))
    with live.reader() as con:
        texts = [t for (t,) in con.execute("SELECT text FROM units ORDER BY unit_id").fetchall()]
    cases = {name: (None, qs) for name, qs in draw(texts, n).items()}
    paths = {
        f"before ({before})": lambda q, _: old.search(live, q, facets=True),
        "after (this checkout)": lambda q, _: search_now(live, q, facets=True),
    }
    rows = timed(paths, cases, repeat)
    live.close()
    print(f"kbx search (k=8, exact-phrase pass, facets) on a warm index, {root}:\n")
    print(table(["queries", "query path", "wall p50", "wall p90", "CPU p50", "CPU p90"], rows, 2))


def _rank_now(con, an, q: str, asked, layer):
    """This checkout's ranking as a search runs it: the filter compiled, the placements
    it keeps found once (from the entity layer's arrays when current), then ``rank``."""
    f = filters.compile_filters(con, asked)
    return bm25.rank(con, an.query(q), f, limit=10, allowed=allowed(con, f, layer))


def _rank_before(old: dict, con, an, q: str, asked, layer):
    """The revision's ranking as its search ran it: with its placements found first
    where it had ``search/allowed.py``, else the filter's SQL inside the ranking."""
    f = old["filters"].compile_filters(con, asked)
    if "allowed" not in old:
        return old["bm25"].rank(con, an.query(q), f, limit=10)
    keep = old["allowed"].allowed(con, f, layer)
    return old["bm25"].rank(con, an.query(q), f, limit=10, allowed=keep)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, help="a kbx index the scale benchmark built")
    p.add_argument("--search", type=Path, metavar="ROOT", help="time search on ROOT's index")
    p.add_argument("--cache", type=Path, default=Path("/tmp/kbx-scale"))
    p.add_argument("--before", default="30f448d", help="the revision to compare with")
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    if not (args.db or args.search):
        p.error("give --db (the ranking) or --search ROOT (the search)")
    with tempfile.TemporaryDirectory() as tmp:
        if args.search:
            search_path(args.search.resolve(), args.before, args.queries, args.repeat, Path(tmp))
            return
        pool = load_pool(args.eval.resolve(), args.cache.resolve())
        claims = next(iter(query_sets(args.eval.resolve(), pool, args.queries).values()))
        con = duckdb.connect(str(args.db), read_only=True)
        an = analyzer_of(con)
        old = old_modules(args.before, Path(tmp))
        arrays.stay_warm()  # a long-lived process, as the scale workers are
        layer = facet_layer(Index(args.db.resolve(), args.db.parent), index_state(con))
        fns = {
            f"before ({args.before})": lambda q, f: _rank_before(old, con, an, q, f, layer),
            "after (this checkout)": lambda q, f: _rank_now(con, an, q, f, layer),
        }
        rows = timed(fns, {f: (asked, claims) for f, asked in ASKED.items()}, args.repeat)
        units = con.execute("SELECT count(*) FROM units").fetchone()[0]
    print(f"kbx rank, top 10, {len(claims)} claims, {units:,} units:\n")
    print(table(["filter", "query path", "wall p50", "wall p90", "CPU p50", "CPU p90"], rows, 2))


if __name__ == "__main__":
    main()
