"""Search and grep on a small corpus: ranking, citations, dedup, filters, and errors."""

from __future__ import annotations

import duckdb
import pytest
from helpers import unchanged, write_corpus

from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.search.bm25 import BM25Params, rank
from kbx.search.filters import Filters
from kbx.search.grep import grep
from kbx.search.read import read
from kbx.search.search import search
from kbx.store.db import Index
from kbx.store.postings import analyzer_of


def _indexed(corpus) -> Index:
    (corpus / "kernels.md").write_text(
        "# Microkernels\n\nThe seL4 microkernel has a machine-checked proof.\n\n"
        "## Performance\n\nIPC round trips take 250 ms in the worst case.\n"
    )
    (corpus / "copy.md").write_text("# Project Cedar\n\nThe same paragraph.\n")
    (corpus / "copy2.md").write_text("# Project Cedar\n\nThe same paragraph.\n")
    index(corpus)
    return Index.for_root(corpus)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """Built once: the tests that take it only read it (checked at the end)."""
    with unchanged(_indexed(write_corpus(tmp_path_factory.mktemp("search") / "docs"))) as idx:
        yield idx


def test_hits_cite_lines_that_hold_the_words(indexed):
    r = search(indexed, "seL4 microkernel proof", k=3)
    top = r.hits[0]
    assert top.path == "kernels.md" and top.covered == 3 and top.query_terms == 3
    lines = "\n".join(read(indexed, f"{top.path}:{top.start_line}-{top.end_line}").lines)
    assert "seL4" in lines and "proof" in lines
    assert "**seL4**" in top.snippet and "**proof**" in top.snippet
    assert len(top.hash) == 64 and top.heading_path == ["Microkernels"]


def test_identifier_parts_and_wholes_both_find_it(indexed):
    assert search(indexed, "ERR_4021").hits[0].path == "web.html"
    assert search(indexed, "4021").hits[0].path == "web.html"
    assert search(indexed, "v18.2.0").hits[0].path == "web.html"


def test_stemming_matches_inflections(indexed):
    r = search(indexed, "approvals suppliers")
    assert r.hits and r.hits[0].path == "notes/cedar.md"


def test_the_same_passage_is_shown_once_with_its_other_places(indexed):
    r = search(indexed, "same paragraph")
    paths = [h.path for h in r.hits]
    assert paths.count("copy.md") + paths.count("copy2.md") == 1
    assert r.hits[0].also_in == ["copy2.md"]


def test_heading_terms_raise_a_passage(indexed):
    with indexed.reader() as con:
        groups = analyzer_of(con).query("performance")
        plain, _ = rank(con, groups, params=BM25Params(heading_weight=0.0))
        boosted, _ = rank(con, groups, params=BM25Params(heading_weight=2.0))
    assert boosted[0][1] > plain[0][1] > 0


def test_left_out_counts_and_path_filter(indexed):
    r = search(indexed, "the", k=1)
    assert len(r.hits) == 1 and r.left_out == r.total - 1 > 0
    r = search(indexed, "the", k=50, filters=Filters(path="notes/*"))
    assert r.hits and {h.path for h in r.hits} == {"notes/cedar.md"}


def test_exact_phrase_matches_come_with_the_ranking(indexed):
    r = search(indexed, "machine-checked proof")
    assert r.exact and r.exact[0].path == "kernels.md" and r.exact[0].start_line == 3


def test_bad_queries_say_why(indexed):
    with pytest.raises(BadArgument, match="query is empty"):
        search(indexed, "   ")
    assert search(indexed, "zzzzqqq").hits == []


def test_grep_matches_across_markup_and_line_breaks(indexed):
    g = grep(indexed, r"required for every vendor; see the policy")
    assert g.total == 1
    m = g.matches[0]
    assert (m.path, m.start_line, m.end_line) == ("notes/cedar.md", 9, 10)


def test_grep_orders_files_by_relevance_and_counts_what_it_left_out(indexed):
    g = grep(indexed, "Cedar", max_matches=1, rank_query="same paragraph")
    assert g.matches[0].path in ("copy.md", "copy2.md")
    assert g.total >= 2 and g.left_out == g.total - 1 and g.files >= 3
    assert g.matches[0].also_in  # copy.md and copy2.md share the passage: shown once


def test_grep_context_and_errors(indexed):
    g = grep(indexed, "ERR_\\d+", context=1)
    assert g.matches[0].context[0].startswith("6: ")
    with pytest.raises(BadArgument, match="bad regular expression"):
        grep(indexed, "(unclosed")


def test_changing_the_stemmer_rebuilds_postings_without_reading_files(corpus):
    indexed = _indexed(corpus)
    db = indexed.db
    r = index(corpus, stemmer="none")
    assert r.new == 0 and r.updated == 0
    con = duckdb.connect(str(db), read_only=True)
    stems = con.execute("SELECT count(*) FROM terms WHERE term = 'approv'").fetchone()[0]
    whole = con.execute("SELECT count(*) FROM terms WHERE term = 'approval'").fetchone()[0]
    con.close()
    assert (stems, whole) == (0, 1)
    assert search(indexed, "approval").hits


def test_a_query_word_counts_once_by_its_best_form(indexed):
    with indexed.reader() as con:
        an = analyzer_of(con)
        (group,) = an.query("v18.2.0")
        together, _ = rank(con, [group])
        unit = together[0][0]
        alone = []
        for form in group:
            rows, _ = rank(con, [[form]])
            alone.append(next((s for u, s, _ in rows if u == unit), 0.0))
    assert together[0][1] == pytest.approx(max(alone))
    assert together[0][1] < sum(alone)


def test_an_exact_phrase_is_matched_as_whole_words(tmp_path):
    root = tmp_path / "rfc"
    root.mkdir()
    (root / "a.txt").write_text("Keywords\n\nThe key words follow BCP 14 as written.\n")
    (root / "b.txt").write_text("Other\n\nThis one cites BCP 142 instead.\n")
    idx = Index.for_root(root)
    index(root, workers=1)
    r = search(idx, "BCP 14")
    assert [m.path for m in r.exact] == ["a.txt"] and r.exact_total == 1


def test_hits_say_when_their_file_changed_or_vanished(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kept.md").write_text("# Kept\n\nzeppelin notes\n")
    (root / "edited.md").write_text("# Edited\n\nzeppelin drafts\n")
    (root / "gone.md").write_text("# Gone\n\nzeppelin plans\n")
    idx = Index.for_root(root)
    index(root, workers=1)
    (root / "edited.md").write_text("# Edited\n\nsomething else entirely, longer now\n")
    (root / "gone.md").unlink()
    r = search(idx, "zeppelin", k=5)
    assert {h.path: h.file for h in r.hits} == {
        "kept.md": "indexed",
        "edited.md": "changed",
        "gone.md": "deleted",
    }
    assert any("1 cited file deleted since indexing (gone.md)" in n for n in r.notes)
    assert any("1 cited file changed since indexing (edited.md)" in n for n in r.notes)
