"""The mapped files as base and delta (issue 43): after any sequence of adds, edits and
deletes, each followed by ``kbx index`` (which writes a delta, not the whole file), the
ranking over base and delta is the SQL ranker's, so are the hits read from the passages,
and both are what a freshly written base gives."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kbx import api
from kbx.indexing.ingest import index
from kbx.search import search as search_module
from kbx.search.bm25 import DEFAULT_PARAMS, rank, rank_sql, term_ids
from kbx.search.filters import DocFilter
from kbx.search.state import index_state, mapped_passages
from kbx.store import arrays, passages_delta, passages_file, postings_file
from kbx.store.postings import GENERATION, analyzer_from

pytestmark = pytest.mark.usefixtures("warm")  # tiny files: map them anyway

WORDS = ["cedar", "supplier", "approval", "river", "stone", "lamp", "violet", "harbor"]
NAMES = ["a.md", "b.md", "c.md", "d/e.md", "d/f.md"]
QUERIES = [[w] for w in WORDS] + [["cedar", "river"], ["stone", "lamp", "violet"], ["zzz"]]

paragraph = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
document = st.lists(paragraph, min_size=1, max_size=4).map(lambda ps: "\n\n".join(ps) + "\n")
edit = st.tuples(st.sampled_from(NAMES), st.none() | document)  # None: delete the file


def _write(root: Path, name: str, text: str | None) -> None:
    path = root / name
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def _rankings(idx: api.Index) -> dict:
    """Each query's ranking over the mapped postings, and the hits read from the mapped
    passages; both asserted equal to the SQL's on the way."""
    out = {}
    with idx.reader() as con:
        state = index_state(con)
        an = analyzer_from(state)
        pf = mapped_passages(idx, state)
        assert pf is not None, "the passages are mappable at the tables' generation"
        for query in QUERIES:
            groups = [g for w in query for g in an.query(w)]
            ranked, total = rank(con, groups)
            ids = term_ids(con, [t for g in groups for t in g])
            pairs = [(ids[t], i) for i, g in enumerate(groups) for t in g if t in ids]
            sql = (
                con.execute(rank_sql(pairs, DocFilter(), DEFAULT_PARAMS, None)).fetchall()
                if pairs
                else []
            )
            assert total == (sql[0][3] if sql else 0)
            assert [r[0] for r in ranked] == [r[0] for r in sql], query
            for (_, s, m), (_, ws, wm, _) in zip(ranked, sql, strict=True):
                assert math.isclose(s, ws, rel_tol=1e-9) and m == wm
            f = DocFilter()
            mapped = search_module._hits(con, ranked[:20], groups, an, f, None, pf)
            hits = search_module._hits(con, ranked[:20], groups, an, f, None, None)
            assert mapped == hits
            out[" ".join(query)] = (ranked, mapped)
    return out


def _mapped_kinds(idx: api.Index) -> tuple[type, type]:
    with idx.reader() as con:
        state = index_state(con)
        pf = postings_file.cached(idx.db, arrays.generation(con, GENERATION))
        pa = mapped_passages(idx, state)
    return type(pf), type(pa)


@settings(
    max_examples=8,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking: minutes of index runs
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    first=st.lists(st.tuples(st.sampled_from(NAMES), document), min_size=1, max_size=4),
    edits=st.lists(edit, min_size=1, max_size=4),
)
def test_base_and_delta_rank_and_read_as_sql_and_as_a_fresh_base(
    tmp_path_factory, monkeypatch, first, edits
):
    monkeypatch.setattr(postings_file, "DELTA_SHARE", 1e9)  # every change a delta
    monkeypatch.setattr(passages_delta, "DELTA_SHARE", 1e9)
    root = tmp_path_factory.mktemp("delta")
    for name, text in first:
        _write(root, name, text)
    index(root, workers=1)
    idx = api.Index.for_root(root)
    files = dict(first)
    for name, text in edits:
        _write(root, name, text)
        index(root, workers=1)
        if files.get(name) != text:  # a change: answered from base and delta
            assert _mapped_kinds(idx) == (postings_file.Merged, passages_delta.Merged)
        files[name] = text
        got = _rankings(idx)
    with idx.writer() as con:  # a compaction: the same rows as a whole base
        postings_file.compact(con, idx.db)
        passages_file.compact(con, idx.db)
    postings_file.MAPS.clear()  # this process held base and delta of that generation
    passages_file.MAPS.clear()
    assert _mapped_kinds(idx) == (postings_file.PostingsFile, passages_file.PassagesFile)
    assert not postings_file.delta_path(idx.db).exists()
    assert _rankings(idx) == got
