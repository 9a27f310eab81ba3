"""The scale benchmark's query side: one worker process per system, timed in turn.

Every system answers the same query words (the query's words without kbx's query
function words, lower-cased, so no system sees an operator) for its top 10, with each
filter. kbx filters with its own filters (``compile_filters``, the placements they keep
from the entity layer's arrays or SQL (search/allowed.py), then ``rank``, on an open
index; and ``search`` end to end, opening the index per call). The peers get each filter
as the set of units read from filter tables in SQLite (indexed), the same facts kbx's
filters read: FTS5 as ``+rowid IN (SELECT ...)`` beside its MATCH, Tantivy as a
``term_set_query`` on the unit id that must match (scored 0), bm25s as a ``weight_mask``.
A worker times each query inside its own process (no IPC in the figure).
"""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from scale_build import peak_mb
from scale_corpus import ENTITY, GLOB

AFTER, BEFORE = "2021", "2021"  # kbx's --after and --before, inclusive: during 2021
FILTERS = {
    "none": "",
    "entity": f"entity {ENTITY}",
    "date": f"date {AFTER}..{BEFORE} (inclusive)",
    "path": f"path {GLOB}",
}
# The peers' filters: the units each keeps, from the filter tables (see scale_build).
FILTER_SQL = {
    "entity": ("SELECT unit FROM f.links WHERE entity = ?", [ENTITY]),
    "date": (
        "SELECT unit FROM f.dates WHERE lo >= ? AND hi <= ?",
        [f"{AFTER}-01-01", f"{int(BEFORE) + 1}-01-01"],
    ),
    "path": ("SELECT unit FROM f.paths WHERE path GLOB ?", [GLOB]),
}


@dataclass(frozen=True)
class Paths:
    """Where one corpus size keeps what the workers open."""

    root: Path
    kbx: Path
    fts5: Path
    bm25s: Path
    tantivy: Path
    filters: Path
    units: Path  # the exported units (Parquet), for bm25s' ids


def _side(paths: Paths) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.execute("ATTACH ? AS f", [str(paths.filters)])
    return con


def _kbx(paths: Paths, end_to_end: bool):
    from kbx.search.allowed import allowed
    from kbx.search.bm25 import rank
    from kbx.search.filters import Filters, compile_filters
    from kbx.search.search import facet_layer, index_state, search
    from kbx.store.db import Index
    from kbx.store.postings import analyzer_of

    asked = {
        "none": None,
        "entity": Filters(entities=[ENTITY]),
        "date": Filters(after=AFTER, before=BEFORE),
        "path": Filters(path=GLOB),
    }
    idx = Index.for_root(paths.root, paths.kbx)
    if end_to_end:
        return lambda q, f: search(idx, q, k=10, filters=asked[f], exact=0)
    stack = ExitStack()  # the connection stays open for the worker's life
    con = stack.enter_context(idx.reader())
    an = analyzer_of(con)

    def query(q: str, f: str, _open=stack):
        state = index_state(con)  # as search reads it: the generations, one statement
        compiled = compile_filters(con, asked[f])  # then the placements it keeps, once,
        keep = allowed(con, compiled, facet_layer(idx, state))  # from the arrays if current
        gen = int(state.get("postings_generation", 0))
        return rank(con, an.query(q), compiled, limit=10, db=idx.db, generation=gen, allowed=keep)

    return query


def _fts5(paths: Paths):
    con = sqlite3.connect(paths.fts5)
    con.execute("ATTACH ? AS f", [str(paths.filters)])

    def query(q: str, f: str):
        match = " OR ".join(f'"{w}"' for w in q.split())
        sql, params = FILTER_SQL.get(f, ("", []))
        # "+rowid": SQLite would otherwise hand the IN list to FTS5 as rowid constraints and
        # evaluate the MATCH once per allowed unit (44 s for one claim with the entity filter
        # at 200k units, 170 s with the date range); the filter is applied to the matches.
        where = f"AND +rowid IN ({sql})" if sql else ""
        return con.execute(
            f"SELECT rowid FROM u WHERE u MATCH ? {where} ORDER BY rank LIMIT 10",
            [match, *params],
        ).fetchall()

    return query


def _allowed(side: sqlite3.Connection, f: str) -> list[int]:
    sql, params = FILTER_SQL[f]
    return [u for (u,) in side.execute(sql, params).fetchall()]


def _bm25s(paths: Paths):
    import bm25s
    import duckdb
    import numpy as np
    import Stemmer

    retriever = bm25s.BM25.load(str(paths.bm25s))
    ids = duckdb.connect().execute(f"SELECT unit_id FROM '{paths.units}'").fetchnumpy()["unit_id"]
    stemmer = Stemmer.Stemmer("english")
    side = _side(paths)

    def query(q: str, f: str):
        tokens = bm25s.tokenize(
            [q], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )
        if not tokens[0]:
            return None
        mask = None
        if f != "none":
            mask = np.zeros(len(ids), dtype=np.float32)
            mask[np.searchsorted(ids, np.asarray(_allowed(side, f), dtype=ids.dtype))] = 1
        return retriever.retrieve(tokens, k=10, show_progress=False, weight_mask=mask)

    return query


def _tantivy(paths: Paths):
    import tantivy

    index = tantivy.Index.open(str(paths.tantivy))
    searcher = index.searcher()
    schema = index.schema
    side = _side(paths)

    def query(q: str, f: str):
        text = index.parse_query(q, ["heading", "text"])
        if f != "none":
            keep = tantivy.Query.term_set_query(schema, "uid", _allowed(side, f))
            text = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, text),
                    (tantivy.Occur.Must, tantivy.Query.const_score_query(keep, 0.0)),
                ]
            )
        return searcher.search(text, 10).hits

    return query


SYSTEMS = {
    "kbx rank (open index)": lambda p: _kbx(p, end_to_end=False),
    "kbx search (end to end)": lambda p: _kbx(p, end_to_end=True),
    "FTS5": _fts5,
    "bm25s": _bm25s,
    "Tantivy": _tantivy,
}


def _serve(name: str, paths: Paths, conn) -> None:
    try:
        fn = SYSTEMS[name](paths)
        conn.send("ready")
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        conn.send(f"error: {e!r}")
        return
    while True:
        msg = conn.recv()
        if msg[0] == "stop":
            conn.send(peak_mb())
            return
        _, queries, f = msg
        out = []
        for q in queries:
            t = time.perf_counter()
            fn(q, f)
            out.append((time.perf_counter() - t) * 1000)
        conn.send(out)


class Worker:
    """One system in its own process, answering query sets on request."""

    def __init__(self, name: str, paths: Paths):
        ctx = mp.get_context("spawn")
        self.name = name
        self.conn, theirs = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(name, paths, theirs))
        self.proc.start()
        ready = self.conn.recv()
        if ready != "ready":
            raise RuntimeError(f"{name}: {ready}")

    def run(self, queries: list[str], f: str) -> list[float]:
        self.conn.send(("run", queries, f))
        return self.conn.recv()

    def stop(self) -> float:
        """Ends the worker; returns its peak RSS in MB."""
        self.conn.send(("stop",))
        peak = self.conn.recv()
        self.proc.join()
        return peak
