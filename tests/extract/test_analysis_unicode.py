"""Every term of any Unicode text is one non-empty word: the ingest joins terms with spaces,
so a letter that folds into a space (U+FDFA, U+037A, Arabic presentation forms) or into
nothing (U+FF9E) once stopped a whole ``kbx index``."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.analysis import Analyzer
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.search import search
from kbx.store.db import Index

# The code points whose folding (lower case, NFKD, accents dropped) holds a space or is empty.
# fmt: off
FOLD_BREAKERS = (
    "\u037a", "\ufc5e", "\ufc5f", "\ufc60", "\ufc61", "\ufc62", "\ufc63", "\ufdfa", "\ufdfb",
    "\ufe70", "\ufe72", "\ufe74", "\ufe76", "\ufe78", "\ufe7a", "\ufe7c", "\ufe7e", "\uff9e",
    "\uff9f",
)
# fmt: on
ANALYZERS = [Analyzer(s) for s in ("snowball", "plural", "none")]
# All of Unicode (surrogates aside), with the fold breakers drawn often: st.text would
# merge the two alphabets and all but never draw from the short list.
ANY_TEXT = st.lists(st.one_of(st.sampled_from(FOLD_BREAKERS), st.characters()), max_size=40).map(
    "".join
)


def _bad(terms) -> list[str]:
    """The empty terms and those holding whitespace: ``t.split()`` is ``[t]`` for exactly
    the others (it splits at every character ``str.isspace`` holds), checked in C."""
    return [t for t in terms if t.split() != [t]]


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_index_and_query_terms_are_one_word(text):
    for a in ANALYZERS:
        for code in (False, True):
            assert _bad(t for _, _, t in a.tokens(text, code)) == []
            assert _bad(a.terms(text, code)) == []
        assert _bad(t for group in a.query(text) for t in group) == []
        assert all(group for group in a.query(text))


def test_every_code_point_alone_and_inside_a_word():
    """Every assigned code point: unassigned (Cn) and private-use (Co) ones have no case,
    decomposition or accent mapping, so each folds to itself, one non-space character; the
    surrogates (Cs) are not text. That leaves 145k of the 1.1M, a seventh of the time."""
    chars = [
        c
        for c in map(chr, range(sys.maxunicode + 1))
        if unicodedata.category(c) not in ("Cn", "Co", "Cs")
    ]
    a = Analyzer("snowball")
    for text in (" ".join(chars), " ".join(f"x{c}y" for c in chars)):
        assert _bad(t for _, _, t in a.tokens(text)) == []


@pytest.mark.parametrize("char", FOLD_BREAKERS)
def test_a_fold_breaker_leaves_its_neighbours_indexed(char):
    terms = [t for _, _, t in Analyzer("none").tokens(f"alpha {char} omega")]
    assert terms[0] == "alpha" and terms[-1] == "omega"


def test_a_ligature_is_indexed_as_the_words_it_folds_to():
    terms = [t for _, _, t in Analyzer("none").tokens("x \ufdfa y")]
    assert terms == ["x", "صلى", "الله", "عليه", "وسلم", "y"]
    assert Analyzer("none").query("\ufdfa") == [["صلى", "الله", "عليه", "وسلم"]]


def test_a_folder_of_fold_breakers_indexes_and_is_searchable(tmp_path: Path):
    root = tmp_path / "arabic"
    root.mkdir()
    (root / "salawat.md").write_text(
        "# Salawat\n\nThe ligature \ufdfa and \ufdfb sit beside quinceword here.\n"
    )
    (root / "greek.md").write_text("# Greek\n\nIota \u037a subscript, \ufe70\ufe72 marks.\n")
    (root / "kana.txt").write_text("Halfwidth \uff9e\uff9f marks near plumword.\n")
    r = index(root, registry=Registry([]), workers=1)
    assert (r.new, r.failed, r.skipped) == (3, 0, 0)
    idx = Index.for_root(root)
    assert [h.path for h in search(idx, "quinceword").hits] == ["salawat.md"]
    assert [h.path for h in search(idx, "plumword").hits] == ["kana.txt"]
    assert [h.path for h in search(idx, "\ufdfa").hits] == ["salawat.md"]
    assert [h.path for h in search(idx, "iota subscript").hits] == ["greek.md"]
