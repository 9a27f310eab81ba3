"""The phrase component (search/proximity.py): the whole query side by side, in its order."""

from __future__ import annotations

import pytest
from helpers import indexed_files

from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search import bm25
from kbx.search.proximity import Piece, phrase_of, piece_of, rerank
from kbx.search.scoring import BM25Params
from kbx.search.search import search, words_ranking
from kbx.search.state import index_state, mapped_passages
from kbx.store.db import Index
from kbx.store.postings import analyzer_from

P = BM25Params()


def count(query: str, text: str) -> float:
    found = phrase_of(query)
    assert found is not None
    return found.count(text)


def test_the_whole_query_in_order_is_a_phrase_in_any_case_across_lines_and_punctuation():
    assert count("können verwandt werden", "Optionen können verwandt werden.") == 1
    assert count("Können Verwandt werden", "sie KÖNNEN verwandt\n       werden") == 1
    assert count("can be used", "it can, be used; twice: can be used") == 2
    assert count("können verwandt werden", "werden verwandt können") == 0  # order counts
    assert count("können verwandt werden", "können verwandt") == 0  # the whole query
    assert count("verwandt werden", "verwandtschaft werden") == 0  # whole words
    assert count("verwandt werden", "verwandte werden") == 1  # or a few letters more


def test_a_word_between_counts_half_and_two_do_not_count():
    assert count("Falls Datei nicht", "Falls eine Datei nicht existiert") == 0.5
    assert count("Falls Datei nicht", "Falls eine neue Datei nicht") == 0
    assert count("a b c", "a x b y c") == 0.25
    assert count("words far", "words" + " " * 41 + "far") == 0  # past GAP_CHARS


def test_an_english_word_runs_on_into_its_inflections_others_are_spelled():
    assert piece_of("leases") == Piece("leas", True)
    assert count("new leases", "for new lease requests") == 1
    assert count("new leasing", "new leased lines") == 1
    assert piece_of("être") == Piece("être") and piece_of("à").text == "à"
    assert count("être utilisés", "être utilisé") == 0


def test_cjk_runs_are_found_anywhere_and_a_single_word_is_no_phrase():
    assert count("いうことがありま", "ということがあります。") == 1
    assert count("信息检索", "关于信息检索的书") == 1
    assert count("信息检索", "信息和检索") == 0
    assert phrase_of("北京") is None and phrase_of("stream") is None
    assert phrase_of("人工知能") is not None  # three characters or more: pairs must meet
    assert phrase_of("") is None


def test_the_score_is_multiplied_by_the_saturated_occurrences():
    found = phrase_of("red car")
    assert found.scored("a blue car", 4.0, P) == 4.0
    assert found.scored("the red car", 4.0, P) == pytest.approx(8.0)  # once: twice the words
    three = found.scored("red car, red car, red car", 4.0, P)
    k1 = P.k1
    assert three == pytest.approx(4.0 * (1 + 3 * (k1 + 1) / (3 + k1)))
    assert found.scored("the red car", 4.0, BM25Params(phrase=0.5)) == pytest.approx(6.0)


def test_a_rerank_multiplies_the_pool_and_keeps_the_rest_below():
    rows = [(1, 9.0, 2), (2, 5.0, 2), (3, 4.0, 2), (4, 3.0, 1)]
    texts = {1: "car red", 2: "a red car", 3: "red car", 4: "red car"}
    got = rerank(rows, phrase_of("red car"), lambda us: {u: texts[u] for u in us}, P, pool=3)
    assert got == [(2, 10.0, 2), (1, 9.0, 2), (3, 8.0, 2), (4, 3.0, 1)]  # 4: past the pool


MANUAL = {
    "one.txt": "ONE\n\nOptionen können verwandt werden, um die Ausgabe zu steuern.\n",
    "two.txt": "TWO\n\nWerden Optionen verwandt, können sie die Ausgabe steuern. "
    "Verwandt werden können viele. Können. Werden. Verwandt.\n",
    "three.txt": "THREE\n\nDie Ausgabe: verwandt werden Optionen, und können auch.\n",
}


@pytest.fixture
def manual(tmp_path) -> Index:
    return indexed_files(tmp_path / "man", MANUAL)


def test_a_known_phrase_ranks_its_passage_first_where_its_words_alone_do_not(manual):
    words = search(manual, "können verwandt werden", k=3, exact=0, params=BM25Params(phrase=0))
    both = search(manual, "können verwandt werden", k=3, exact=0)
    assert words.hits[0].path != "one.txt"  # the words more often elsewhere
    assert both.hits[0].path == "one.txt"
    assert sorted(h.path for h in both.hits) == sorted(h.path for h in words.hits)


@pytest.mark.usefixtures("warm")
def test_the_phrase_in_sql_and_over_the_mapped_files_ranks_the_same(manual, monkeypatch):
    index(manual.root, db=manual.db, workers=1, registry=Registry([]))  # exports the files
    with manual.reader() as con:
        state = index_state(con)
        an = analyzer_from(state)
        placed = mapped_passages(manual, state)
        assert placed is not None
        for q in ("können verwandt werden", "Ausgabe steuern", "optionen"):
            mapped = words_ranking(con, q, an, depth=3, db=manual.db, passages=placed)
            monkeypatch.setattr(bm25, "mapped", lambda *a, **kw: None)
            sql = words_ranking(con, q, an, depth=3)  # the statement, texts from SQL
            monkeypatch.undo()
            assert mapped[1] == sql[1]
            assert [r[0] for r in mapped[0]] == [r[0] for r in sql[0]], q
            assert [r[1] for r in mapped[0]] == pytest.approx([r[1] for r in sql[0]]), q
