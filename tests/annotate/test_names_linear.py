"""The names pass in time linear in a document (issue 43): one Aho-Corasick pass finds what
a pattern alternating every name (``re.IGNORECASE``, longest first) and a search per name
found, and a document of thousands of names is read in seconds."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.annotate.names import Found, Unit, Words, _in_lower_case, ignoring_case, in_context

# letters whose case ``re`` folds in its own ways (dotted and dotless i, long s, the Kelvin
# sign, a sharp s), word and non-word characters, and a line break
ALPHABET = "aAbBiIİısSſkKKßẞéÉ_1 .-'\n"
forms = st.lists(st.text(ALPHABET, min_size=1, max_size=4), min_size=1, max_size=6)
texts = st.text(ALPHABET, max_size=60)


def _alternation(forms: list[str]) -> re.Pattern:
    """The pattern the names pass used before: every form as a word, longest first."""
    return re.compile(
        "|".join(rf"(?<!\w){re.escape(t)}(?!\w)" for t in sorted(forms, key=len, reverse=True)),
        re.IGNORECASE,
    )


@settings(max_examples=400, deadline=None)
@given(forms, texts)
def test_the_longest_form_at_each_place_as_the_alternation_finds_it(forms, text):
    want = [m.span() for m in _alternation(forms).finditer(text)]
    assert Words(forms, ignore_case=True).leftmost_longest(text) == want


@settings(max_examples=400, deadline=None)
@given(forms, texts)
def test_every_place_a_form_is_written_as_a_word(forms, text):
    want = {
        (m.start(), m.start() + len(t))
        for t in forms
        for m in re.finditer(rf"(?=(?<!\w){re.escape(t)}(?!\w))", text)
    }
    assert set(Words(forms).spans(text)) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(ALPHABET, min_size=3, max_size=5), max_size=5), st.lists(texts, max_size=3))
def test_the_lower_cases_a_document_writes_as_a_search_per_name_finds_them(names, units):
    text = "\n".join(units)
    got = _in_lower_case(units, names)
    for name in names:
        if name[0].isupper():
            written = re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", text) is not None
            assert (name.lower() in got) == written


@given(st.text(ALPHABET, max_size=40))
def test_case_is_ignored_one_character_for_one(text):
    folded = ignoring_case(text)
    assert len(folded) == len(text)
    for a, b in zip(text, folded, strict=True):
        assert re.fullmatch(re.escape(a), b, re.IGNORECASE)


def _signers(n: int) -> list[Unit]:
    """A changelog's entries: each signed by one of ``n`` people, each naming two others."""
    units = []
    for i in range(n):
        text = (
            f"  * Fix a bug reported by Person{(i * 7) % n} Surname{(i * 7) % n} and "
            f"Person{(i * 3) % n}.\n\n -- Person{i} Surname{i} <p{i}@example.org>  "
            "Mon, 01 Jan 2024 00:00:00 +0000"
        )
        name = f"Person{i} Surname{i}"
        at = text.index(name)
        found = (Found(at, at + len(name), "PERSON", name, name, "spacy"),)
        units.append(Unit(f"u{i}", text, found))
    return units


def test_thousands_of_names_in_one_document_take_about_as_long_as_they_are_many():
    small, large = _signers(1_000), _signers(8_000)
    times = []
    for units in (small, large):
        started = time.process_time()
        names = in_context(units)
        times.append(time.process_time() - started)
    assert len(names) > len(large)  # carried and written-in names too
    # 8x the document: well under 64x (a pattern of every name took about that)
    assert times[1] < 20 * max(times[0], 0.05), times
