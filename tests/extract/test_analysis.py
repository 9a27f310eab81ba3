"""The analysis chain: identifiers whole and in parts, folding, stemming by unit kind."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.analysis import Analyzer, plural_stem
from kbx.errors import BadArgument


def _terms(text: str, **kw) -> list[str]:
    return [t for _, _, t in Analyzer(**kw).tokens(text)]


@pytest.mark.parametrize(
    ("text", "whole", "parts"),
    [
        ("seL4", "sel4", []),
        ("ERR_4021", "err_4021", ["err", "4021"]),
        ("v18.2.0", "v18.2.0", ["v18", "2", "0"]),
        ("CVE-2023-12345", "cve-2023-12345", ["cve", "2023", "12345"]),
        ("10.17487/RFC8446", "10.17487/rfc8446", ["10", "17487", "rfc8446"]),
    ],
)
def test_identifiers_stay_whole_and_their_parts_are_indexed(text, whole, parts):
    terms = _terms(f"see {text}.")
    assert terms[1] == whole and terms[2:] == parts


def test_spans_point_at_the_original_characters():
    text = "Run ~/dev/node-tap now"
    for start, end, term in Analyzer("none").tokens(text):
        assert text[start:end].lower() == term


def test_case_and_accents_fold():
    assert _terms("Café CAFE café", stemmer="none") == ["cafe", "cafe", "cafe"]


def test_prose_is_stemmed_and_code_is_not():
    a = Analyzer("snowball")
    assert a.terms("connections running") == {"connect": 1, "run": 1}
    assert a.terms("connections running", code=True) == {"connections": 1, "running": 1}


def test_plural_stemmer_is_conservative():
    assert [
        plural_stem(w) for w in ["policies", "boxes", "cats", "status", "glass", "hastings"]
    ] == ["policy", "boxe", "cat", "status", "glass", "hasting"]


def test_protected_names_are_neither_stemmed_nor_split():
    a = Analyzer("snowball", frozenset({"hastings", "v18.2.0"}))
    assert a.terms("Hastings v18.2.0") == {"hastings": 1, "v18.2.0": 1}


def test_query_groups_keep_the_code_form_beside_the_stem():
    assert Analyzer("snowball").query("installing Node.js") == [
        ["instal", "installing"],
        ["node.js", "node", "js"],
    ]


def test_unknown_stemmer_lists_the_choices():
    with pytest.raises(BadArgument, match="choose from snowball, plural, none"):
        Analyzer("porter")


def test_function_words_leave_queries_unless_nothing_else_is_left():
    a = Analyzer("snowball")
    assert a.query("how do I install node") == [["instal", "install"], ["node"]]
    assert a.query("the who") == [["the"], ["who"]]
    assert a.query("how do I", stopwords=False) == [["how"], ["do"], ["i"]]


def test_possessive_s_is_not_a_term():
    assert _terms("what's new", stemmer="none") == ["what's", "what", "new"]


# Words the way documents write them: identifiers, case, accents, connectors, apostrophes,
# with any other character drawn too.
_PIECES = st.one_of(
    st.sampled_from(["v18.2.0", "ERR_4021", "seL4", "Café", "what's", "Hastings", "node.js"]),
    st.sampled_from(["Cedar", "cedars", "CVE-2023-12345", "10.17487/RFC8446", "a_b", "x’y"]),
    st.text(st.sampled_from("aZé9_.-/:@+'’ \n"), max_size=8),
    st.characters(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map(" ".join), st.booleans())
def test_terms_count_what_tokens_yields(text, code):
    """``terms`` counts through a cache of raw tokens' terms: it must give exactly what
    counting ``tokens`` gives, for a token met for the first time and again."""
    for a in (Analyzer("snowball"), Analyzer("plural"), Analyzer("none", frozenset({"cedar"}))):
        want = Counter(t for _, _, t in a.tokens(text, code))
        assert a.terms(text, code) == want
        assert a.terms(text, code) == want
