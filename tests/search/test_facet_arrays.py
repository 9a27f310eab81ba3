"""Facets over the entity layer's arrays (entities/facet_arrays.py) against the SQL that is
their reference, on random stores, and the generation that decides which one counts.

A random store holds units placed in random documents (some in several, some twice in
one), links of units and of whole documents (filtering or not, some to no entity),
mentions of recognizers of every grade, dates of passages and of documents (some across a
year), cited works' years and quantities of several dimensions. For random query terms and
every kind of filter, ``facet_counts`` over the exported arrays must equal ``sql_facets``:
the same counts, the same values in the same order (ties included), the same dates.
"""

from __future__ import annotations

import json
from datetime import date, timedelta

import duckdb
import numpy as np
import pytest
from helpers import with_mapped_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.entities import facet_arrays
from kbx.entities.build import settle
from kbx.errors import BadArgument
from kbx.search import search as search_module
from kbx.search.allowed import allowed
from kbx.search.facets import facet_counts, sql_facets
from kbx.search.filters import Filters, compile_filters
from kbx.search.search import index_state, search
from kbx.store import arrays
from kbx.store.db import mark_dirty, rows_select
from kbx.store.schema import ensure_schema

ENTITIES = ["doi:10.1/a", "doi:10.1/b", "e:ann", "e:bo", "e:cedar", "e:zed"]  # e:zed: unlinked
TYPES = {"doi:10.1/a": "DOI", "doi:10.1/b": "DOI", "e:ann": "PERSON", "e:bo": "PERSON"}
# (name, types, filter, boost_types, names): every grade a mention's type can have
RECOGNIZERS = [
    ("rules", ["DATE", "QUANTITY", "DOI"], True, [], False),
    ("fuzzy", ["TOPIC", "DATE"], True, ["TOPIC"], False),
    ("weak", ["HINT"], False, [], False),
    ("ner", ["PERSON"], True, [], True),
]
QUANTITIES = [("mass", "kg"), ("data", "B"), ("money", "USD"), ("kg / m ** 2", "kg / m ** 2")]
VALUES = [0.0, 5e-7, 0.001, 0.5, 1.0, 2.0, 999.0, 1e3, 4e9, 1e12, -3.0]
ASKED = [
    Filters(),
    Filters(path="a/*"),
    Filters(after="2020"),
    Filters(after="2019-06", before="2021", date_from="mentioned"),
    Filters(before="2021-03-02", date_from="document"),
    Filters(quantities=["mass>1kg"]),
    Filters(quantities=["mass=0.001kg..2kg", "size<=4GB"]),
    Filters(quantities=["usd>=1000"]),
    Filters(entities=["e:ann"]),
    Filters(authors=["e:bo"], after="2020"),
    Filters(types=["DATE"], path="b/*"),
    Filters(meta=["kind=note"]),
]

day = st.dates(date(2018, 11, 1), date(2022, 2, 1))
interval = st.tuples(day, st.sampled_from([1, 3, 31, 60, 400]))


pytestmark = pytest.mark.usefixtures("warm")  # as in a server: the files at any size


@pytest.fixture
def posts(posts):
    return with_mapped_files(posts)


@st.composite
def stores(draw):
    """Rows of a random store: each table's rows as ``(columns, rows)``."""
    n_units = draw(st.integers(1, 14))
    n_docs = draw(st.integers(1, 6))
    units = range(1, n_units + 1)
    docs = range(1, n_docs + 1)
    where = {d: draw(st.sampled_from(["a", "b"])) for d in docs}
    placed = draw(
        st.lists(st.tuples(st.sampled_from(docs), st.sampled_from(units)), min_size=1, max_size=25)
    )
    ents = draw(st.lists(st.sampled_from(ENTITIES), min_size=1, unique=True))
    links = draw(
        st.lists(
            st.tuples(
                st.sampled_from(docs),
                st.none() | st.sampled_from(units),
                st.sampled_from([*ENTITIES, "e:gone"]),
                st.booleans(),
            ),
            max_size=30,
        )
    )
    authored = draw(  # who wrote a passage, or (no unit) a whole document
        st.lists(
            st.tuples(
                st.sampled_from(docs),
                st.none() | st.sampled_from(units),
                st.sampled_from([*ENTITIES, "e:gone"]),
            ),
            max_size=12,
        )
    )
    mentions = draw(
        st.lists(
            st.tuples(
                st.sampled_from(units),
                st.sampled_from(RECOGNIZERS).flatmap(
                    lambda r: st.tuples(st.just(r[0]), st.sampled_from(r[1]))
                ),
            ),
            max_size=30,
        )
    )
    dates = draw(
        st.lists(
            st.tuples(st.sampled_from(docs), st.none() | st.sampled_from(units), interval),
            max_size=20,
        )
    )
    quantities = draw(
        st.lists(
            st.tuples(
                st.sampled_from(units),
                st.sampled_from(QUANTITIES),
                st.sampled_from(VALUES),
                st.sampled_from([0.0, 0.0, 1.5, 1e3]),
            ),
            max_size=20,
        )
    )
    postings = draw(
        st.lists(st.tuples(st.integers(1, 4), st.sampled_from(units)), min_size=1, max_size=40)
    )
    years = {e: draw(st.none() | st.sampled_from([2019, 2020, 2021])) for e in ents}
    return {
        "units": (
            ["unit_id", "unit_hash", "heading_path", "text", "n_tokens", "kind", "n_terms"],
            [(u, f"h{u}", [], f"unit {u}", 2, "prose", 2) for u in units],
        ),
        "documents": (
            ["doc_id", "path", "status", "meta"],
            [
                (d, f"{where[d]}/d{d}.md", "ok", json.dumps({"kind": ["note", "log"][d % 2]}))
                for d in docs
            ],  # fmt: skip
        ),
        "placements": (
            ["doc_id", "ordinal", "unit_id", "start_line", "end_line", "offsets"],
            [(d, i, u, 1, 1, b"") for i, (d, u) in enumerate(placed)],
        ),
        "entities": (
            ["entity_id", "type", "label", "source", "meta"],
            [
                (
                    e,
                    TYPES.get(e, "PROJECT"),
                    e.split(":")[-1].title(),
                    "gazetteer",
                    json.dumps({"year": years[e]}) if years[e] else None,
                )
                for e in ents
            ],  # fmt: skip
        ),
        "aliases": (["entity_id", "alias"], [(e, e) for e in ents]),
        "links": (["doc_id", "unit_id", "entity_id", "filter"], sorted(set(links), key=str)),
        "authored": (["doc_id", "unit_id", "entity_id"], sorted(set(authored), key=str)),
        "recognizer_info": (
            ["name", "version", "types", "filter", "boost_types", "names"],
            [(n, "1", ts, f, b, names) for n, ts, f, b, names in RECOGNIZERS],
        ),
        "mentions": (
            [
                "unit_hash",
                "recognizer",
                "version",
                "start_char",
                "end_char",
                "type",
                "text",
                "confidence",
            ],
            [(f"h{u}", r, "1", i, i + 1, t, "x", 1.0) for i, (u, (r, t)) in enumerate(mentions)],
        ),  # fmt: skip
        "passage_dates": (
            ["doc_id", "unit_id", "lo", "hi"],
            sorted({(d, u, lo, lo + timedelta(days=n)) for d, u, (lo, n) in dates}, key=str),
        ),
        "passage_quantities": (
            ["unit_id", "dimension", "unit", "lo", "hi"],
            sorted({(u, dim, si, v, v + w) for u, (dim, si), v, w in quantities}),
        ),
        "terms": (["term_id", "term"], [(t, f"t{t}") for t in range(1, 5)]),
        "postings": (
            ["term_id", "unit_id", "tf", "htf"],
            sorted({(t, u, 1, 0) for t, u in postings}),
        ),
    }


@pytest.fixture(scope="module")
def store_and_file(tmp_path_factory):
    """One store in memory, each example replacing its rows, and where its arrays go."""
    con = duckdb.connect()
    ensure_schema(con, "/nowhere")
    yield con, tmp_path_factory.mktemp("facets") / "index.duckdb"
    con.close()


def load(con: duckdb.DuckDBPyConnection, store: dict) -> None:
    for table, (columns, rows) in store.items():
        con.execute(f"DELETE FROM {table}")
        if rows:
            select, params = rows_select(columns, rows)
            con.execute(f"INSERT INTO {table} ({', '.join(columns)}) {select}", params)
    con.execute("DELETE FROM kbx_meta WHERE key = 'entities_dirty'")
    facet_arrays.touched(con)  # the layer changed: the file of the last example is stale


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(store=stores(), data=st.data())
def test_the_arrays_count_what_the_sql_counts(store_and_file, store, data):
    con, db = store_and_file
    load(con, store)
    gen = arrays.generation(con, facet_arrays.GENERATION)
    assert facet_arrays.load(db, gen) is None
    facet_arrays.export(con, db)
    layer = facet_arrays.load(db, gen)
    assert layer is not None
    terms = data.draw(st.lists(st.integers(1, 5), max_size=3))  # 5: a term with no postings
    also = data.draw(st.lists(st.integers(1, 16), max_size=4))  # a dense list's units; 15+: none
    for asked in data.draw(
        st.lists(st.sampled_from(range(len(ASKED))), min_size=2, max_size=3, unique=True)
    ):
        try:
            f = compile_filters(con, ASKED[asked])
        except BadArgument:  # a quantity or entity this store does not hold
            continue
        want = sql_facets(con, terms, f)
        assert facet_counts(con, terms, f, layer) == want, ASKED[asked]
        assert facet_counts(con, terms, f, layer, also=also) == sql_facets(con, terms, f, also)


def test_search_counts_over_the_arrays_only_while_the_layer_is_settled(posts, monkeypatch):
    counted = []
    real = search_module.facet_counts

    def spy(con, ids, f, layer, *rest):
        counted.append(layer is not None)
        return real(con, ids, f, layer, *rest)

    monkeypatch.setattr(search_module, "facet_counts", spy)
    over_arrays = search(posts, "openssl", facets=True).facets
    with posts.writer() as con:
        mark_dirty(con)  # a write since the last rebuild: the arrays may be behind it
    assert search(posts, "openssl", facets=True).facets == over_arrays
    with posts.writer() as con:
        settle(con)  # the rebuild bumps the generation and exports the file again
        assert "entities_dirty" not in index_state(con)
    search(posts, "openssl", facets=True)
    assert counted == [True, False, True]


def test_a_file_of_another_generation_is_not_used(posts):
    with posts.writer() as con:
        gen = arrays.generation(con, facet_arrays.GENERATION)
        assert facet_arrays.load(posts.db, gen) is not None  # kbx index exported it
        facet_arrays.touched(con)  # as a rebuild killed before its export leaves it
        now = arrays.generation(con, facet_arrays.GENERATION)
        assert now > gen and facet_arrays.load(posts.db, now) is None
        assert facet_arrays.refresh(con, posts.db) and not facet_arrays.refresh(con, posts.db)
        assert facet_arrays.load(posts.db, now) is not None


# What a filter keeps (search/allowed.py), entity, type and date conditions read from the
# arrays, alone and combined with those that stay SQL (path, metadata, quantities).
KEPT_ASKED = [
    *(Filters(entities=[e]) for e in ENTITIES),
    Filters(entities=["e:ann", "doi:10.1/a"]),
    *(Filters(types=[t]) for t in ("DATE", "DOI", "PERSON", "PROJECT", "QUANTITY")),
    Filters(after="2020"),
    Filters(before="2020-02-10"),
    Filters(after="2019-06", before="2021", date_from="mentioned"),
    Filters(before="2021-03-02", date_from="document"),
    Filters(entities=["e:bo"], after="2019", path="a/*"),
    Filters(types=["DATE"], path="b/*", quantities=["mass>1kg"]),
    Filters(entities=["doi:10.1/b"], meta=["kind=note"]),
    Filters(path="a/*"),
    Filters(path="*", meta=["kind!=note"]),
    Filters(types=["DATE"], meta=["kind=note"], quantities=["mass>1kg"]),
]


def _placed(con) -> np.ndarray:
    got = con.execute(
        "SELECT pl.unit_id::BIGINT << 32 | pl.doc_id AS k FROM placements pl "
        "JOIN documents USING (doc_id)"
    ).fetchnumpy()
    return np.asarray(got["k"], dtype=np.int64)


def _sql_units(con, f) -> set[int]:
    return {u for (u,) in con.execute(f.units(), f.params).fetchall()}


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(store=stores(), data=st.data())
def test_the_arrays_keep_what_the_sql_keeps(store_and_file, store, data):
    con, db = store_and_file
    load(con, store)
    facet_arrays.export(con, db)
    layer = facet_arrays.load(db, arrays.generation(con, facet_arrays.GENERATION))
    assert layer is not None
    for i in data.draw(st.lists(st.sampled_from(range(len(KEPT_ASKED))), min_size=3, max_size=6)):
        try:
            f = compile_filters(con, KEPT_ASKED[i])
        except BadArgument:  # an entity or quantity this store does not hold
            continue
        by_sql, by_arrays = allowed(con, f, None), allowed(con, f, layer)
        if not f.places:  # only boost-only recognizers name it
            assert by_sql is None and by_arrays is None
            continue
        # A random store may link a passage no document places (kbx's rebuild never does):
        # the SQL keeps that pair, the arrays hold only placed passages.
        placed = _placed(con)
        assert np.array_equal(by_arrays.keys, by_sql.keys[np.isin(by_sql.keys, placed)])
        assert set(by_sql.units.tolist()) == _sql_units(con, f), KEPT_ASKED[i]
