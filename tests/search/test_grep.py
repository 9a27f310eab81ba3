"""The exact-phrase pass reads only the units that index the phrase's words: it must find
what reading every unit finds, the ends of the phrase included (where the text may run a
token on: ``x-foo bar`` holds ``foo bar``)."""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path

import pytest

from kbx.analysis import Analyzer
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.grep import grep, phrase_terms
from kbx.search.search import phrase_pattern
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

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
    narrowed = grep(corpus, phrase_pattern(phrase), needs=needs, **asked)
    everything = grep(corpus, phrase_pattern(phrase), **asked)
    assert narrowed.total == everything.total == total
    assert [astuple(m) for m in narrowed.matches] == [astuple(m) for m in everything.matches]
