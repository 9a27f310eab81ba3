"""The exact-phrase pass reads only the units that index the phrase's words: it must find
what reading every unit finds, the ends of the phrase included (where the text may run a
token on: ``x-foo bar`` holds ``foo bar``); and its regex, with the opening word check done
by grep, matches what the whole pattern matches."""

from __future__ import annotations

import re
import time
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inprocess import run_cli

from kbx.analysis import Analyzer
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.grep import _Clock, _matches, grep, phrase_terms
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
    got = [m.span() for m in _matches(re.compile(rest, flags), text, start, _Clock(None, rest))]
    assert got == want


def test_a_pattern_that_backtracks_without_end_stops_at_its_timeout(tmp_path):
    """``(a|aa)+$`` on fifty a's and a '!' takes Python's ``re`` some 10^10 steps (a
    Fibonacci number of ways to split the a's): without a limit a server thread would
    run on for hours. A user's pattern stops at its time, as a clear error; the index
    still answers an ordinary one, as ``re`` would match it."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Runs\n\n" + "a" * 50 + "!\n\nSupplier approval, then aa.\n")
    index(root, registry=Registry([]), workers=1)
    idx = Index.for_root(root)
    started = time.monotonic()
    with pytest.raises(BadArgument, match=r"ran past 0.2 s .*--timeout"):
        grep(idx, r"(a|aa)+$", timeout=0.2)
    assert time.monotonic() - started < 30  # stopped: unbounded, it runs for hours
    g = grep(idx, r"supplier\s+appr\w+", ignore_case=True)
    text = (root / "a.md").read_text()
    assert [m.match for m in g.matches] == [
        m.group() for m in re.finditer(r"supplier\s+appr\w+", text, re.IGNORECASE)
    ]
    with pytest.raises(BadArgument, match="--timeout must be more than 0"):
        grep(idx, "a", timeout=0)


def test_kbx_grep_past_its_timeout_is_one_line_and_exit_2(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Runs\n\n" + "a" * 50 + "!\n")
    index(root, registry=Registry([]), workers=1)
    r = run_cli("grep", "(a|aa)+$", "--timeout", "0.2", cwd=root)
    assert r.returncode == 2 and "ran past 0.2 s" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
