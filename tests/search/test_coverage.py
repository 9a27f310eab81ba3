"""How much of the query BM25's best passage holds, and the fusion weighing words by it."""

from __future__ import annotations

import math

import pytest
from helpers import indexed_files
from hypothesis import given
from hypothesis import strategies as st

from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search import bm25
from kbx.search.bm25 import coverage, rank, term_ids
from kbx.search.hybrid import ALPHA, fuse, weight_of_words
from kbx.search.scoring import idf
from kbx.search.state import index_state
from kbx.store.db import Index
from kbx.store.postings import analyzer_from

NOTES = {
    "a.md": "# Alpha\n\nThe quokka and the zebra share a burrow.\n",
    "b.md": "# Beta\n\nA zebra grazes.\n",
    "c.md": "# Gamma\n\nThe zebra, the zebra again.\n",
}


@pytest.fixture
def notes(tmp_path) -> Index:
    return indexed_files(tmp_path / "notes", NOTES)


def _unit_of(con, path: str) -> int:
    return con.execute(
        "SELECT unit_id FROM placements JOIN documents USING (doc_id) WHERE path = ?", [path]
    ).fetchone()[0]


@pytest.mark.parametrize("warmed", [False, True])
def test_coverage_is_the_share_of_the_querys_idf_a_unit_holds(notes, warmed, request):
    if warmed:
        request.getfixturevalue("warm")
        index(notes.root, db=notes.db, workers=1, registry=Registry([]))  # exports the files
    with notes.reader() as con:
        an = analyzer_from(index_state(con))
        groups = an.query("quokka zebra unheard")
        pf = bm25.mapped(con, notes.db)
        assert (pf is not None) == warmed
        ids = term_ids(con, [t for g in groups for t in g], pf)
        a, b = _unit_of(con, "a.md"), _unit_of(con, "b.md")
        assert coverage(con, groups, ids, a, pf) == 1.0  # "unheard" is in no unit: not counted
        n = con.execute("SELECT count(*) FROM units").fetchone()[0]
        q, z = idf(n, 1), idf(n, 3)
        assert math.isclose(coverage(con, groups, ids, b, pf), z / (q + z))
        assert coverage(con, [], {}, a, pf) == 0.0
        top, _ = rank(con, groups)
        assert top[0][0] == a


def test_the_words_weigh_more_the_more_of_the_query_their_best_passage_holds():
    assert weight_of_words(ALPHA, 0.0) == ALPHA and weight_of_words(ALPHA, 1.0) == 1.0
    assert ALPHA < weight_of_words(ALPHA, 0.5) < 1.0
    assert weight_of_words(ALPHA, 7.0) == 1.0 and weight_of_words(ALPHA, -1) == ALPHA


rows = st.lists(
    st.tuples(st.integers(0, 40), st.floats(0.1, 50)), max_size=15, unique_by=lambda r: r[0]
)


@given(rows, rows)
def test_a_query_its_best_passage_holds_whole_keeps_the_words_order(words, meaning):
    bm = sorted(((u, s, 1) for u, s in words), key=lambda r: (-r[1], r[0]))
    dense = sorted(((u, min(1.0, s / 50)) for u, s in meaning), key=lambda r: (-r[1], r[0]))
    fused = [r[0] for r in fuse(bm, dense, (False, False), covered=1.0)]
    best = bm[0][1] if bm else 1.0
    assert fused[: len(bm)] == [r[0] for r in bm] or any(
        a[1] / best == b[1] / best  # ties once scaled by the best may fall either way
        for a, b in zip(bm, bm[1:], strict=False)
    )
    assert fuse(bm, dense) == fuse(bm, dense, covered=0.0)
