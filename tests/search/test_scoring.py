"""The SQL ranker against the reference scorer, on random postings in a real DuckDB index.

Units, terms, postings, documents and links are written straight into a store with kbx's
schema (the postings are the random part: frequencies, lengths, which terms), then
``rank`` (the SQL) and ``scoring.score`` (plain Python) must give every matching unit the
same score, to 1e-9 relative, and the same top k in the same order. The ranker over the
mapped postings (store/postings_file.py) is held to the SQL ranker's answer the same way.
"""

from __future__ import annotations

import math

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.search import bm25
from kbx.search.bm25 import rank
from kbx.search.filters import Filters, compile_filters
from kbx.search.scoring import BM25Params, Postings, field_tf, score, top
from kbx.store import arrays, postings_file
from kbx.store.db import rows_select
from kbx.store.postings import GENERATION
from kbx.store.schema import ensure_schema

VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "missing"]  # "missing": no postings
INDEXED = VOCAB[:-1]

freqs = st.tuples(st.integers(0, 6), st.integers(0, 3)).filter(lambda f: f != (0, 0))
unit = st.builds(
    Postings,
    length=st.integers(0, 60),
    tf=st.dictionaries(st.sampled_from(INDEXED), freqs, max_size=len(INDEXED)),
)
units = st.lists(unit, min_size=1, max_size=25).filter(lambda us: any(u.length for u in us))
groups = st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3), min_size=1, max_size=4)
params = st.builds(
    BM25Params,
    k1=st.floats(0.1, 3.0),
    b=st.floats(0.0, 1.0),
    heading_weight=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7]),
)


@pytest.fixture(scope="module")
def con():
    """One in-memory store with kbx's schema; each example replaces its rows."""
    c = duckdb.connect()
    ensure_schema(c, "/nowhere")
    yield c
    c.close()


def insert(con: duckdb.DuckDBPyConnection, table: str, columns: list[str], rows: list[tuple]):
    """Rows into ``table`` in one statement; columns not named take their constants below."""
    if not rows:
        return
    select, ps = rows_select(columns, rows)
    fill = {
        "units": "*, 'h' || unit_id, '', 0, 'prose', []::VARCHAR[]",
        "documents": "*, 'ok'",
        "placements": "*, 0, 1, 1, ''::BLOB",
        "links": "*, false",
    }
    extra = {
        "units": ["unit_hash", "text", "n_tokens", "kind", "heading_path"],
        "documents": ["status"],
        "placements": ["ordinal", "start_line", "end_line", "offsets"],
        "links": ["filter"],
    }
    names = ", ".join(columns + extra.get(table, []))
    con.execute(f"INSERT INTO {table} ({names}) SELECT {fill.get(table, '*')} FROM ({select})", ps)


def load(con: duckdb.DuckDBPyConnection, us: list[Postings], where: list[str], boosted: list[int]):
    """Unit ``i + 1`` is ``us[i]``, alone in the document ``{where[i]}/u{i}.md``; it names
    the entities ``e:one`` (and ``e:two``) ``boosted[i]`` times, which the test's boost-only
    conditions ask for."""
    for table in ("postings", "terms", "units", "placements", "documents", "links", "entities"):
        con.execute(f"DELETE FROM {table}")
    term_id = {t: i + 1 for i, t in enumerate(INDEXED)}
    insert(con, "terms", ["term_id", "term"], [(i, t) for t, i in term_id.items()])
    ids = range(1, len(us) + 1)
    insert(
        con, "units", ["unit_id", "n_terms"], [(i, u.length) for i, u in zip(ids, us, strict=True)]
    )
    insert(
        con,
        "postings",
        ["term_id", "unit_id", "tf", "htf"],
        sorted((term_id[t], i, *f) for i, u in zip(ids, us, strict=True) for t, f in u.tf.items()),
    )
    insert(con, "documents", ["doc_id", "path"], [(i, f"{where[i - 1]}/u{i}.md") for i in ids])
    insert(con, "placements", ["doc_id", "unit_id"], [(i, i) for i in ids])
    insert(
        con,
        "entities",
        ["entity_id", "type", "label", "source"],
        [("e:one", "WORD", "One", "name"), ("e:two", "WORD", "Two", "name")],
    )
    insert(
        con,
        "links",
        ["doc_id", "unit_id", "entity_id"],
        [(i, i, e) for i in ids for e in ("e:one", "e:two")[: boosted[i - 1]]]
        + [(0, None, "e:one"), (0, None, "e:two")],  # a document with no units: boost-only
    )


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    us=units,
    query=groups,
    p=params,
    k=st.integers(1, 8),
)
def test_the_sql_ranker_scores_and_orders_as_the_reference_scorer(con, data, us, query, p, k):
    n = len(us)
    where = data.draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))
    boosted = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    filtered = data.draw(st.booleans())
    load(con, us, where, boosted)
    f = compile_filters(con, Filters(path="a/*" if filtered else None))
    for e in ("e:one", "e:two"):  # boost-only conditions, as a boost-only type adds them
        f.boosts.append(("unit_id IN (SELECT unit_id FROM links WHERE entity_id = ? "
                         "AND unit_id IS NOT NULL)", [e]))
    assert len(f.boosts) == 2 and len(f.clauses) == int(filtered)

    ranked, total = rank(con, query, f, p)
    allowed = {i + 1 for i in range(n) if where[i] == "a"} if filtered else None
    want = score(
        dict(zip(range(1, n + 1), us, strict=True)),
        query,
        p,
        allowed,
        dict(zip(range(1, n + 1), boosted, strict=True)),
    )

    got = {u: s for u, s, _ in ranked}
    assert set(got) == set(want) and total == len(want)
    assert all(close(got[u], want[u]) for u in want), [(u, got[u], want[u]) for u in want]
    head, _ = rank(con, query, f, p, limit=k)
    assert [u for u, _, _ in head] == [u for u, _ in top(want, k)]
    for u, _, matched in ranked:  # words covered: those with a form the unit counts
        tf = us[u - 1].tf
        counted = {t for t, f in tf.items() if field_tf(*f, p.heading_weight) > 0}
        assert matched == sum(bool(counted & set(g)) for g in query)


@pytest.fixture(scope="module")
def disk(tmp_path_factory):
    """One store on disk (the file lives beside it); each example replaces its rows."""
    db = tmp_path_factory.mktemp("mapped") / "index.duckdb"
    c = duckdb.connect(str(db))
    ensure_schema(c, "/nowhere")
    yield c, db
    c.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), us=units, query=groups, p=params, k=st.integers(1, 8))
def test_the_mapped_ranker_gives_the_sql_rankers_answer(disk, warm, data, us, query, p, k):
    # warm: the file is tiny, map it anyway
    con, db = disk
    n = len(us)
    where = data.draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))
    load(con, us, where, [0] * n)
    arrays.bump(con, GENERATION)  # the rows changed: any earlier file is stale
    f = compile_filters(con, Filters(path="a/*" if data.draw(st.booleans()) else None))
    assert bm25.mapped(con) is None
    want, want_total = rank(con, query, f, p)
    want_head, _ = rank(con, query, f, p, limit=k)

    postings_file.export(con, db)
    assert bm25.mapped(con) is not None
    got, total = rank(con, query, f, p)
    head, _ = rank(con, query, f, p, limit=k)

    assert total == want_total and [u for u, _, _ in got] == [u for u, _, _ in want]
    for (u, s, m), (_, ws, wm) in zip(got, want, strict=True):
        assert math.isclose(s, ws, rel_tol=1e-9) and m == wm, (u, s, ws, m, wm)
    assert [u for u, _, _ in head] == [u for u, _, _ in want_head]
