"""Hits read from the mapped passages file are the hits the SQL reads, and the file is used
only while it is of the tables' generation."""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import POSTS, attached, with_mapped_files

from kbx import api
from kbx.search import search as search_module
from kbx.search.bm25 import rank, term_ids
from kbx.search.filters import Filters, compile_filters
from kbx.search.grep import _mapped_files
from kbx.search.state import index_state, mapped_passages
from kbx.store import arrays, passages_file
from kbx.store.postings import GENERATION as POSTINGS
from kbx.store.postings import analyzer_from

QUERIES = ["kernel", "supplier approval", "restore drill", "seL4 proofs", "cedar", "page"]


pytestmark = pytest.mark.usefixtures("warm")  # as in a server: the files at any size


@pytest.fixture
def posts(posts):
    return with_mapped_files(posts)


def _both(idx: api.Index, query: str, filters: Filters | None = None):
    """The hits of ``query`` and the cited files' stats, from the file and from SQL."""
    with idx.reader() as con:
        state = index_state(con)
        pf = mapped_passages(idx, state)
        assert pf is not None, "the file is of the tables' generation"
        an = analyzer_from(state)
        groups = an.query(query)
        f = compile_filters(con, filters)
        ids = term_ids(con, [t for g in groups for t in g])
        ranked, _ = rank(con, groups, f, search_module.DEFAULT_PARAMS, 20, None, 0, ids)
        keep = search_module.allowed(con, f) if f.places else None
        mapped = search_module._hits(con, ranked, groups, an, f, keep, pf)
        sql = search_module._hits(con, ranked, groups, an, f, keep, None)
    return mapped, sql


def test_the_files_hits_are_the_sqls_every_format_and_a_passage_in_two_files(
    indexed_corpus,
):
    shutil.copy(indexed_corpus / "runbook.txt", indexed_corpus / "notes" / "runbook-copy.txt")
    api.index(indexed_corpus)
    idx = api.Index.for_root(indexed_corpus)
    seen = set()
    for q in QUERIES:
        mapped, sql = _both(idx, q)
        assert mapped == sql
        seen |= {(h.path, h.page is not None, bool(h.also_in)) for h in mapped[0]}
    assert any(page for _, page, _ in seen)  # a PDF's page came through
    assert any(also for _, _, also in seen)  # and a passage two files hold


def test_the_files_hits_are_the_sqls_under_a_filter(posts):
    asked = (Filters(entities=["Ann Lee"]), Filters(after="2021"), Filters(path="posts/*"))
    for filters in asked:
        for q in ("openssl", "release", "cedar fixes"):
            mapped, sql = _both(posts, q, filters)
            assert mapped == sql


def _gen(idx: api.Index) -> int:
    with idx.reader() as con:
        return arrays.generation(con, passages_file.GENERATION)


@pytest.mark.parametrize("chunk", [1, 2, 7])
def test_a_file_exported_in_chunks_holds_every_units_text_heading_and_offsets(
    posts, monkeypatch, chunk
):
    """Each chunk of units goes in as one piece: a unit, its heading and its placements'
    offset maps are where the starts say, at any chunk size (gaps in the ids included)."""
    with posts.writer() as con:
        (gone,) = con.execute("SELECT min(unit_id) + 1 FROM units").fetchone()
        con.execute("DELETE FROM placements WHERE unit_id = ?", [gone])
        con.execute("DELETE FROM units WHERE unit_id = ?", [gone])
        monkeypatch.setattr(passages_file, "CHUNK_UNITS", chunk)
        passages_file.export(con, posts.db)
        gen = arrays.generation(con, passages_file.GENERATION)
        units = con.execute(
            "SELECT unit_id, text, heading_path, unit_hash FROM units ORDER BY unit_id"
        ).fetchall()
        offsets = con.execute(
            """SELECT pl.unit_id, list(pl.offsets ORDER BY d.path, pl.ordinal)
               FROM placements pl JOIN documents d USING (doc_id) GROUP BY 1"""
        ).fetchall()
    pf = passages_file.load(posts.db, gen)
    assert pf is not None and len(units) > 2 * chunk
    assert pf.unit(gone) is None and not pf.placements(gone)
    for u, text, heading, unit_hash in units:
        assert pf.unit(u)[:3] == (text, heading, unit_hash)
    for u, blobs in offsets:
        assert [pf.row(r)[7] for r in pf.placements(u)] == [bytes(b) for b in blobs]


def test_every_change_of_a_cited_field_makes_a_new_generation_and_index_exports_it(posts):
    root = posts.root
    rel = next(iter(POSTS))
    before = _gen(posts)
    api.index(root)  # nothing changed: no new generation, no export
    assert _gen(posts) == before
    st = os.stat(root / rel)
    os.utime(root / rel, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # bytes the same
    api.index(root)
    touched = _gen(posts)
    assert touched > before
    moved = rel.replace(".md", "-moved.md")
    os.rename(root / rel, root / moved)
    api.index(root)
    assert _gen(posts) > touched
    word = POSTS[rel].split()[-1].strip(".,")
    mapped, sql = _both(posts, word)
    assert mapped == sql
    cited = {h.path for h in mapped[0]} | {p for h in mapped[0] for p in h.also_in}
    assert moved in cited and rel not in cited
    assert mapped[1][moved] == (os.stat(root / moved).st_size, os.stat(root / moved).st_mtime_ns)


def test_a_file_of_another_generation_is_not_read(posts):
    with posts.writer() as con:
        passages_file.touched(con)  # as a write that no export followed
    with posts.reader() as con:
        assert mapped_passages(posts, index_state(con)) is None
    result = api.search(posts, "openssl", k=3)  # the SQL answers
    assert result.hits and all(h.path in POSTS or h.path.startswith("filler") for h in result.hits)
    api.index(posts.root)  # the next index exports it again
    with posts.reader() as con:
        assert mapped_passages(posts, index_state(con)) is not None


@pytest.mark.parametrize("cut", [0, 100])
def test_a_file_cut_short_is_not_read(posts, cut):
    path = passages_file.mapped_path(posts.db)
    data = path.read_bytes()
    path.write_bytes(data[:cut])
    passages_file.MAPS.clear()
    with posts.reader() as con:
        assert mapped_passages(posts, index_state(con)) is None


def test_an_index_a_kbx_before_schema_8_wrote_reads_no_old_file(posts):
    """That kbx wrote documents without marking the file old: migrating marks it."""
    with attached(posts.db, read_only=False) as con:
        con.execute("UPDATE kbx_meta SET value = '7' WHERE key = 'schema_version'")
    with posts.writer():  # any writer migrates
        pass
    with posts.reader() as con:
        assert mapped_passages(posts, index_state(con)) is None


def test_an_index_built_again_beside_its_old_files_never_reads_them(posts):
    """Delete the index file (its gazetteer log and mapped files stay), edit a document,
    index again: the new index's generations are not the old one's."""
    rel = next(iter(POSTS))
    old = _gen(posts)
    posts.db.unlink()
    (posts.root / rel).write_text(POSTS[rel].replace("Cedar", "Larch"))
    api.index(posts.root)
    assert _gen(posts) != old
    mapped, sql = _both(posts, "larch")
    assert mapped == sql and [h.path for h in mapped[0]] == [rel]


def _exact(idx: api.Index, query: str, filters: Filters | None = None):
    r = api.search(idx, query, k=3, exact=50, filters=filters)
    return r.exact, r.exact_total


def test_the_exact_phrases_from_the_files_are_the_sqls(posts, indexed_corpus, monkeypatch):
    monkeypatch.setattr(arrays, "WARM", True)  # as in kbx serve: the postings mapped at any size
    shutil.copy(indexed_corpus / "runbook.txt", indexed_corpus / "notes" / "runbook-copy.txt")
    api.index(indexed_corpus)
    cases = [
        (api.Index.for_root(indexed_corpus), q, None)
        for q in ("restore drill", "supplier approval", "seL4 proofs", "the kernel")
    ] + [
        (posts, q, f)
        for q in ("OpenSSL fixes", "apple orchard", "fixes CVE")
        for f in (
            None,
            Filters(entities=["Ann Lee"]),
            Filters(after="2021"),
            Filters(path="posts/*"),
        )
    ]
    for idx, _, _ in cases:
        with idx.reader() as con:
            state = index_state(con)
            assert _mapped_files(con, idx, state, int(state[POSTINGS])) is not None
    mapped = [_exact(idx, q, f) for idx, q, f in cases]
    for idx in {idx.db: idx for idx, _, _ in cases}.values():
        passages_file.mapped_path(idx.db).unlink()
    passages_file.MAPS.clear()
    sql = [_exact(idx, q, f) for idx, q, f in cases]
    assert mapped == sql
    assert sum(total for _, total in mapped) > len(cases)  # phrases that are there, in files
    assert any(len({m.path for m in found}) > 1 for found, _ in mapped)
