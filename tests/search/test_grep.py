"""The exact-phrase pass reads only the units that index the phrase's words: it must find
what reading every unit finds, the ends of the phrase included (where the text may run a
token on: ``x-foo bar`` holds ``foo bar``); and its regex, with the opening word check done
by grep, matches what the whole pattern matches."""

from __future__ import annotations

import re
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.analysis import Analyzer
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.grep import _matches, grep, phrase_terms
from kbx.search.search import phrase_parts
from kbx.store.db import Index
from kbx.store.postings import analyzer_of


def phrase_pattern(query: str) -> str:
    """The phrase as one pattern, its opening word boundary a lookbehind: the reference."""
    start, rest = phrase_parts(query)
    return (r"(?<!\w)" if start else "") + rest


TEXTS = {  # one case a file, so that each is a unit of its own
    "a1.md": "Use x-foo bar here.",
    "a2.md": "Then FOO\nBAR again.",
    "a3.md": "A foo barn is no match.",
    "b1.md": "The node.js engine.",
    "b2.md": "The x-b tree index.",
    "b3.md": "A b tree, no b-tree.",
    "c1.md": "To be or not to be.",
    "c2.md": "Run npm install.sh first.",
    "c3.md": "Then npm install.",
}


@pytest.fixture
def corpus(tmp_path: Path) -> Index:
    root = tmp_path / "root"
    root.mkdir()
    for name, text in TEXTS.items():
        (root / name).write_text(text + "\n")
    index(root, registry=Registry([]))
    return Index.for_root(root)


def test_an_end_of_the_phrase_counts_only_where_a_longer_token_keeps_it():
    an = Analyzer()
    assert phrase_terms(an, "foo bar") == [["foo"], ["bar"]]
    assert phrase_terms(an, "b tree") == [["tree"]]  # "x-b": a lone letter is no part
    assert ["b"] in phrase_terms(an, "big b tree")  # inside, the text has the same token
    assert phrase_terms(Analyzer(protected=frozenset({"node.js"})), "js engine") == [
        ["engin", "engine"]
    ]
    assert phrase_terms(an, "to be or not") == [
        ["to"],
        ["be"],
        ["or"],
        ["not"],
    ]  # all function words


@pytest.mark.parametrize(
    ("phrase", "total"),
    [
        ("foo bar", 2),
        ("js engine", 1),
        ("b tree", 2),
        ("tree index", 1),
        ("to be or not", 1),
        ("npm install", 2),
        ("install.sh first", 1),
        ("absent words", 0),
    ],
)
def test_the_phrase_pass_finds_what_reading_every_unit_finds(corpus, phrase, total):
    with corpus.reader() as con:
        needs = phrase_terms(analyzer_of(con), phrase)
    asked = {"rank_query": phrase, "max_matches": 3, "ignore_case": True}
    start, rest = phrase_parts(phrase)  # as search runs it
    narrowed = grep(corpus, rest, needs=needs, word_start=start, **asked)
    everything = grep(corpus, phrase_pattern(phrase), **asked)
    assert narrowed.total == everything.total == total
    assert [astuple(m) for m in narrowed.matches] == [astuple(m) for m in everything.matches]


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(["a", "ab", "b", "a1", "_a", "é", "14", "x.y"]), min_size=1,
                   max_size=3),
    text=st.text(alphabet="aAb1_é 4.\n\txy", max_size=40),
    ignore_case=st.booleans(),
)  # fmt: skip
def test_a_word_start_checked_by_grep_matches_as_the_lookbehind_would(words, text, ignore_case):
    """The phrase pass drops the pattern's leading ``(?<!\\w)`` and checks it itself: the
    same matches, overlapping phrases and repeated words included."""
    query = " ".join(words)
    start, rest = phrase_parts(query)
    flags = re.IGNORECASE if ignore_case else 0
    want = [
        m.span() for m in re.finditer(phrase_pattern(query), text, flags) if m.end() > m.start()
    ]
    got = [m.span() for m in _matches(re.compile(rest, flags), text, start)]
    assert got == want
