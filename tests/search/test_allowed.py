"""A search handed the placements its filter keeps once (search/allowed.py), over the
mapped postings and the entity layer's arrays, answers exactly as the SQL does: hits,
scores, totals, exact matches and facets (the property test of the allowed sets
themselves is in test_facet_arrays.py)."""

from __future__ import annotations

from helpers import with_mapped_files

from kbx.search import bm25
from kbx.search.filters import Filters
from kbx.search.search import search
from kbx.store import arrays


def test_a_search_handed_the_allowed_set_answers_as_the_sql(posts, monkeypatch):
    """The Node.js-like fixture, warm (mapped postings and the layer's arrays) against
    cold (the SQL): the same hits, scores and facets for every filter."""
    queries = ["openssl", "release notes", "security"]
    filters = [
        Filters(after="2020"),
        Filters(path="*.md", before="2030"),
        Filters(types=["DATE"]),
    ]
    cold = [search(posts, q, filters=f, facets=True) for q in queries for f in filters]
    monkeypatch.setattr(arrays, "WARM", True)
    with_mapped_files(posts)
    with posts.reader() as con:
        assert bm25.mapped(con) is not None
    warm = [search(posts, q, filters=f, facets=True) for q in queries for f in filters]
    assert any(r.hits for r in cold)
    for a, b in zip(cold, warm, strict=True):
        assert [(h.unit, h.path, h.start_line, h.score) for h in a.hits] == [
            (h.unit, h.path, h.start_line, h.score) for h in b.hits
        ]
        assert (a.total, a.facets, a.exact_total) == (b.total, b.facets, b.exact_total)
