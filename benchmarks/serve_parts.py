"""Where a warm search's time goes: each part of ``/api/search`` timed apart, in one
process, on a warm index (``LiveIndex``, as ``kbx serve`` holds it), for the same queries.

Parts, each per query the median of ``--repeat`` runs after a warm-up, then the p50 over
queries, wall and CPU (``process_time``: DuckDB's threads included), in ms:

* the whole call (``serve.commands.search``: k=8, the exact-phrase pass, facets), and
  without facets;
* the per-search metadata: the seven one-row statements a search made before (the
  analysis chain, the postings' generation, whether a name recognizer ran, whether the
  layer is stale, the cited files' sizes, the terms' ids again for the facets) against
  ``index_state``'s one;
* the ranking (``rank``, top 8, over the mapped postings);
* each hit's text and offsets, in SQL (``hits_for``) against the mapped passages
  (store/passages_file.py);
* the facets in SQL (``sql_facets``, the reference) against the same counts over the
  entity layer's arrays (``facet_counts``; entities/facet_arrays.py);
* the placements a date filter (``--after 2020``) keeps, in SQL against over the arrays
  (search/allowed.py), and the whole call with it;
* and the statements one search runs (counted on its cursor).

    .venv/bin/python benchmarks/serve_parts.py ROOT [--queries 30] [--repeat 3]

ROOT an indexed folder (``kbx index`` exports the arrays), e.g. the Node.js copy of
benchmarks/serve.py. ``serve.py`` prints this table too. A script: it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from common import percentile, table

from kbx import api
from kbx.search import bm25, search
from kbx.search.allowed import allowed
from kbx.search.facets import facet_counts, sql_facets
from kbx.search.filters import DocFilter, Filters, compile_filters
from kbx.serve import commands
from kbx.serve.live import LiveIndex
from kbx.store.db import is_dirty
from kbx.store.postings import GENERATION, analyzer_of


class _Counting:
    """A cursor that counts its statements."""

    def __init__(self, con, seen: list[str]):
        self._con, self._seen = con, seen

    def execute(self, sql, *args):
        self._seen.append(sql)
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


def statements(live: LiveIndex, q: str) -> int:
    """How many statements ``commands.search`` runs for ``q``."""
    seen: list[str] = []
    reader = live.reader

    def counting():
        cm = reader()

        class _Cm:
            def __enter__(self):
                return _Counting(cm.__enter__(), seen)

            def __exit__(self, *exc):
                return cm.__exit__(*exc)

        return _Cm()

    object.__setattr__(live, "reader", counting)
    try:
        commands.search(live, q)
    finally:
        object.__delattr__(live, "reader")
    return len(seen)


def _old_metadata(con, index, groups, hits) -> None:
    """The one-row statements a search made before ``index_state``."""
    analyzer_of(con)
    con.execute("SELECT value FROM kbx_meta WHERE key = ?", [GENERATION]).fetchone()
    con.execute("SELECT 1 FROM recognizer_info WHERE names LIMIT 1").fetchall()
    is_dirty(con)
    search.file_states(con, index, hits)
    bm25.term_ids(con, [t for g in groups for t in g])


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU ms of ``repeat`` runs after a warm-up."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def _runs(live: LiveIndex, con, q: str) -> dict[str, Callable[[], object]]:
    """Each part of a search for ``q``, ready to time on ``con``."""
    state = search.index_state(con)
    layer = search.facet_layer(live, state)
    if layer is None:
        raise SystemExit("the facets' arrays are missing or stale: run kbx index")
    an = analyzer_of(con)
    groups = an.query(q)
    f = DocFilter()
    ids = bm25.term_ids(con, [t for g in groups for t in g])
    gen = int(state.get(GENERATION, 0))
    pf = bm25.mapped(con, live.db, gen)
    ranked, _ = bm25.rank(con, groups, f, limit=8, db=live.db, generation=gen, ids=ids)
    hits = search.hits_for(con, ranked, groups, an)
    passages = search.mapped_passages(live, state)
    if passages is None:
        raise SystemExit("the passages' arrays are missing or stale: run kbx index")
    term_ids = list(ids.values())
    dated = compile_filters(con, Filters(after="2020"))  # a date filter, the layer's kind
    return {
        "the whole call (k=8, exact phrases, facets)": lambda: commands.search(live, q),
        "the whole call without facets": lambda: commands.search(live, q, facets=False),
        "metadata: 7 statements (before)": lambda: _old_metadata(con, live, groups, hits),
        "metadata: index_state, 1 statement (now)": lambda: search.index_state(con),
        "ranking (rank, top 8, mapped postings)": lambda: bm25.rank(
            con, groups, f, limit=8, db=live.db, generation=gen, ids=ids
        ),
        "each hit's text and offsets in SQL (hits_for: before)": lambda: search.hits_for(
            con, ranked, groups, an
        ),
        "each hit's text and offsets from the mapped passages (now)": lambda: search._hits(
            con, ranked, groups, an, f, None, passages
        ),
        "facets in SQL (sql_facets: before)": lambda: sql_facets(con, term_ids, f),
        "facets over the layer's arrays (now)": lambda: facet_counts(con, term_ids, f, layer, pf),
        "--after 2020's placements in SQL (before)": lambda: allowed(con, dated, None),
        "--after 2020's placements over the arrays (now)": lambda: allowed(con, dated, layer),
        "the whole call with --after 2020": lambda: commands.search(live, q, after="2020"),
    }


def parts(live: LiveIndex, qs: list[str], repeat: int) -> str:
    """The table: each part's p50 over ``qs``, wall and CPU ms."""
    api._stay_warm()
    got: dict[str, list[tuple[float, float]]] = {}
    counts = []
    for q in qs:
        with live.reader() as con:
            for name, fn in _runs(live, con, q).items():
                got.setdefault(name, []).append(timed(fn, repeat))
        counts.append(statements(live, q))
    rows = [
        (
            name,
            f"{percentile([w for w, _ in v], 0.5):.2f}",
            f"{percentile([c for _, c in v], 0.5):.2f}",
        )
        for name, v in got.items()
    ]
    rows.append(("statements per search (median)", f"{statistics.median(counts):.0f}", ""))
    return table(["part of a warm search", "wall p50 ms", "CPU p50 ms"], rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path)
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    from serve import queries  # the serve benchmark's one-word queries

    live = LiveIndex.of(api.Index.for_root(args.root))
    with live.reader() as con:
        texts = [t for (t,) in con.execute("SELECT text FROM units ORDER BY unit_id").fetchall()]
    one_word = next(iter(queries(texts, args.queries).values()))
    print(parts(live, one_word, args.repeat))
    live.close()


if __name__ == "__main__":
    main()
