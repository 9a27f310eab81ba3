"""The mapped postings' generation on a real index: a write the file has not caught up
with sends ranking back to SQL rather than to a stale answer. (That the two rankers
agree is a property test in test_scoring.py.)"""

from __future__ import annotations

import pytest
from helpers import write_corpus

from kbx.entities import facet_arrays
from kbx.indexing.ingest import index
from kbx.search import bm25
from kbx.search.bm25 import rank
from kbx.store import arrays, passages_file, postings_file
from kbx.store.db import Index
from kbx.store.postings import GENERATION, mapped_path

pytestmark = pytest.mark.usefixtures("warm")  # the files here are tiny: map them anyway


def test_a_write_the_file_has_not_caught_up_with_ranks_in_sql(tmp_path):
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    assert mapped_path(idx.db).exists()  # kbx index leaves it current
    with idx.reader() as con:
        groups = [["supplier"]]
        assert bm25.mapped(con) is not None
        before, total = rank(con, groups)
    (root / "new.md").write_text("# New\n\nA supplier of cedar, approved.\n")
    with idx.writer() as con:  # as a kbx index killed between its write and the export:
        arrays.bump(con, GENERATION)
    with idx.reader() as con:
        assert bm25.mapped(con) is None  # the file is of an older generation: not used
    index(root, workers=1)
    with idx.reader() as con:
        assert bm25.mapped(con) is not None  # the next run exported it again
        after, total_after = rank(con, groups)
    assert total_after == total + 1 and len(after) == len(before) + 1


def test_a_cut_short_file_is_not_mapped(tmp_path):
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    path = mapped_path(idx.db)
    path.write_bytes(path.read_bytes()[:-16])
    postings_file.MAPS.clear()
    with idx.reader() as con:
        assert bm25.mapped(con) is None
        assert rank(con, [["supplier"]])[1] > 0  # SQL still answers


def test_a_cold_process_neither_writes_nor_maps_a_small_indexs_files_a_warm_one_does(
    tmp_path, monkeypatch
):
    """Below MAPPED_MIN_BYTES, importing numpy would cost a ``kbx search`` process more than
    SQL's ranking, so a cold ``kbx index`` writes none of the files; a server (``stay_warm``,
    as ``kbx serve``'s warm index calls it) pays that once, and its first write makes them."""
    monkeypatch.setattr(arrays, "WARM", False)
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    files = [
        mapped_path(idx.db),
        passages_file.mapped_path(idx.db),
        facet_arrays.mapped_path(idx.db),
    ]
    assert not any(f.exists() for f in files)
    with idx.reader() as con:
        assert bm25.mapped(con) is None and rank(con, [["supplier"]])[1] > 0
    monkeypatch.setattr(arrays, "WARM", True)
    index(root, workers=1)  # nothing changed: the run only makes the files
    assert all(f.exists() for f in files)
    assert mapped_path(idx.db).stat().st_size < arrays.MAPPED_MIN_BYTES
    with idx.reader() as con:
        assert bm25.mapped(con) is not None


def test_a_cold_process_writes_and_maps_the_files_of_a_large_index(tmp_path, monkeypatch):
    monkeypatch.setattr(arrays, "WARM", False)
    monkeypatch.setattr(arrays, "MAPPED_MIN_BYTES", 64)  # this corpus counts as large
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    with idx.reader() as con:
        assert bm25.mapped(con) is not None


def test_an_export_in_many_ranges_holds_every_posting_in_order(tmp_path, monkeypatch):
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    monkeypatch.setattr(postings_file, "RANGE_ROWS", 3)  # a few postings a range
    with idx.writer() as con:
        postings_file.export(con, idx.db)
        want = con.execute(
            "SELECT term_id, unit_id, tf, htf FROM postings ORDER BY term_id, unit_id"
        ).fetchall()
        pf = postings_file.load(idx.db, arrays.generation(con, GENERATION))
    got = [
        (t, int(u), int(tf), int(htf))
        for t in range(len(pf.start) - 1)
        for u, tf, htf in zip(*pf.of(t), strict=True)
    ]
    assert got == want and len(want) > 30


def test_the_files_terms_give_the_ids_the_terms_table_gives(tmp_path):
    """Every term and some the index lacks, looked up in the mapped file's dictionary: the
    same ids as the SQL, for terms sharing their first eight bytes, non-ASCII ones
    (byte order is not code-point order past ASCII), and prefixes of terms."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text(
        "# Documentation\n\nDocumented documents: documentary documentation, café, naïve "
        "Zürich, 日本語, мир, αβγ, ǅemal, ﬁne, v18.2.0, ERR_4021_ABC, ERR_4021_ABD, "
        "abcdefgh, abcdefg.\n"
    )
    index(root, workers=1)
    idx = Index.for_root(root)
    with idx.reader() as con:
        pf = bm25.mapped(con)
        terms = [t for (t,) in con.execute("SELECT term FROM terms").fetchall()]
        asked = terms + ["documen", "documentations", "abcdefgh0", "", "zzz", "日本", "ми", "caf"]
        assert pf is not None and len(terms) > 20 and any(not t.isascii() for t in terms)
        assert pf.ids(asked) == bm25.term_ids(con, asked)
        assert pf.ids([]) == {}
