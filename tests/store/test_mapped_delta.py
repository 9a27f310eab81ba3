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
from kbx.store.postings import GENERATION, analyzer_from, analyzer_of, rebuild_postings

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
            postings, passages = _mapped_kinds(idx)
            assert passages is passages_delta.Merged
            with idx.reader() as con:  # the units changed, unless only their placements
                moved = arrays.generation(con, GENERATION) != arrays.file_generation(
                    postings_file.mapped_path(idx.db)
                )
            assert postings is (postings_file.Merged if moved else postings_file.PostingsFile)
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


def test_the_log_names_the_documents_only_where_its_steps_chain():
    log = "5>7:1,2;7>9:;9>12:4;"
    assert passages_delta.changed(log, 5, 12) == {1, 2, 4}
    assert passages_delta.changed(log, 7, 12) == {4}  # the steps before the base left out
    assert passages_delta.changed(log, 5, 13) is None  # a later bump with no step
    assert passages_delta.changed("5>7:1;8>9:2;", 5, 9) is None  # a bump between
    assert passages_delta.changed("5>7:*;", 5, 7) is None  # a write that named none
    assert passages_delta.changed("", 5, 5) == set()


def _edited(tmp_path: Path) -> api.Index:
    root = tmp_path / "docs"
    _write(root, "a.md", "cedar river\n\nstone lamp\n")
    _write(root, "b.md", "violet harbor\n")
    index(root, workers=1)
    _write(root, "a.md", "cedar violet\n\nstone lamp\n")
    return api.Index.for_root(root)


def _files(idx: api.Index) -> tuple[bool, bool]:
    """Whether each delta file exists, postings and passages."""
    return postings_file.delta_path(idx.db).exists(), passages_file.delta_path(idx.db).exists()


def test_an_edit_writes_deltas_and_the_base_stays(tmp_path, monkeypatch):
    monkeypatch.setattr(postings_file, "DELTA_SHARE", 1e9)
    monkeypatch.setattr(passages_delta, "DELTA_SHARE", 1e9)
    idx = _edited(tmp_path)
    base = postings_file.mapped_path(idx.db).stat().st_mtime_ns
    index(idx.root, workers=1)
    assert _files(idx) == (True, True)
    assert postings_file.mapped_path(idx.db).stat().st_mtime_ns == base
    _rankings(idx)


@pytest.mark.parametrize("why", ["not this index's base", "postings analyzed again", "no step"])
def test_a_delta_that_could_be_wrong_is_a_new_base(tmp_path, monkeypatch, why):
    """A base the index did not note (a predecessor's file beside it), postings rewritten
    in place, a write that bumped the passages with no step of the log: each makes the
    export whole, never a delta over what it cannot see."""
    monkeypatch.setattr(postings_file, "DELTA_SHARE", 1e9)
    monkeypatch.setattr(passages_delta, "DELTA_SHARE", 1e9)
    idx = _edited(tmp_path)
    with idx.writer() as con:
        if why == "not this index's base":
            keys = [postings_file.BASE, passages_file.BASE]
            con.execute("DELETE FROM kbx_meta WHERE key IN (?, ?)", keys)
        elif why == "postings analyzed again":
            units = [u for (u,) in con.execute("SELECT unit_id FROM units").fetchall()]
            rebuild_postings(con, analyzer_of(con), units)
        else:
            arrays.bump(con, passages_file.GENERATION)
    index(idx.root, workers=1)
    postings_whole = why != "no step"
    passages_whole = why != "postings analyzed again"
    assert _files(idx) == (not postings_whole, not passages_whole)
    _rankings(idx)
