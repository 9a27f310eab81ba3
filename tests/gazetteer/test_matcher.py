"""The gazetteer's matcher, entry checks and protected-name check, without a database."""

from __future__ import annotations

import pytest

from kbx.analysis import Analyzer
from kbx.errors import BadArgument
from kbx.gazetteer.entries import Entry, check_name, check_type, version_of
from kbx.gazetteer.matcher import GazetteerRecognizer
from kbx.gazetteer.protect import damage

APPLE = Entry("Q312", "Apple Inc.", "ORG", ("Apple Inc.", "Apple"))
CEDAR = Entry("gz:project-cedar", "Project Cedar", "PROJECT", ("Project Cedar", "Cedar"))
NJI = Entry("gz:nji", "Node.js Interactive", "EVENT", ("Node.js Interactive",), ignore_case=True)


def _found(entries, text):
    (ms,) = GazetteerRecognizer(entries).recognize([text])
    return [(m.text, m.key, m.type) for m in ms]


def test_longest_leftmost_match_wins_and_keys_name_the_entity():
    assert _found([APPLE], "Apple Inc. bought apples; Apple agreed.") == [
        ("Apple Inc.", "Q312", "ORG"),
        ("Apple", "Q312", "ORG"),
    ]


def test_word_boundaries_are_respected():
    assert _found([CEDAR], "Cedars, CedarDB, xCedar and Cedar-2 and (Cedar).") == [
        ("Cedar", "gz:project-cedar", "PROJECT"),
        ("Cedar", "gz:project-cedar", "PROJECT"),
    ]


def test_case_rules_are_per_entry():
    text = "cedar wood; NODE.JS INTERACTIVE and node.js interactive"
    assert [t for t, *_ in _found([CEDAR, NJI], text)] == [
        "NODE.JS INTERACTIVE",
        "node.js interactive",
    ]


def test_offsets_survive_characters_whose_lower_case_is_longer():
    text = "İİ Node.js Interactive"  # 'İ'.lower() is two characters
    (ms,) = GazetteerRecognizer([NJI]).recognize([text])
    assert [text[m.start : m.end] for m in ms] == ["Node.js Interactive"]


def test_the_version_follows_what_matching_depends_on():
    base = version_of([APPLE, CEDAR])
    assert version_of([CEDAR, APPLE]) == base
    assert version_of([APPLE, Entry(*CEDAR.__dict__.values())]) == base
    protected = Entry(CEDAR.entry_id, CEDAR.name, CEDAR.type, CEDAR.aliases, protected=True)
    assert version_of([APPLE, protected]) == base  # protection changes analysis, not matches
    more = Entry(CEDAR.entry_id, CEDAR.name, CEDAR.type, (*CEDAR.aliases, "PC"))
    assert version_of([APPLE, more]) != base
    assert version_of([]) != base


def test_entries_are_checked():
    with pytest.raises(BadArgument, match="empty"):
        check_name("   ")
    with pytest.raises(BadArgument, match="no letters or digits"):
        check_name("--")
    assert check_name("  Project   Cedar ") == "Project Cedar"
    with pytest.raises(BadArgument, match="unknown type 'foo'; choose from PERSON"):
        check_type("foo")
    assert check_type("work-of-art") == "WORK_OF_ART"


def test_damage_finds_split_and_over_stemmed_names():
    a = Analyzer()
    (split,) = damage("io.js", a, lambda t: 0)
    assert split.word == "io.js" and "split into io, js" in split.why
    frequent = {"well": 40, "wells": 3}
    (stem,) = damage("H. G. Wells", a, lambda t: frequent.get(t, 0))
    assert stem.word == "wells" and "'well'" in stem.why
    assert damage("Wells", a, lambda t: 3) == []  # the stem is rare: nothing to protect
    assert damage("seL4", a, lambda t: 0) == []  # the chain already keeps it whole


def test_an_alias_two_entries_share_names_neither_unless_one_pins_it():
    corps = Entry("Q213710", "Apple Corps", "ORG", ("Apple Corps", "Apple"))
    text = "Apple Inc. and Apple Corps agreed; Apple paid."
    assert _found([APPLE, corps], text) == [
        ("Apple Inc.", "Q312", "ORG"),
        ("Apple Corps", "Q213710", "ORG"),
    ]  # "Apple" alone: whose? No mention, and no shorter match inside it either
    pinned = Entry("Q312", "Apple Inc.", "ORG", ("Apple Inc.", "Apple"), pinned=("apple",))
    assert _found([pinned, corps], text)[-1] == ("Apple", "Q312", "ORG")
    assert version_of([pinned, corps]) != version_of([APPLE, corps])
