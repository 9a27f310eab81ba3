"""The ASCII fast paths of tokenizing find what the general patterns find, and the
language detector's shortcuts tell what its rules tell."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kbx import analysis, languages
from kbx.extract import units

# ASCII weighted toward what tokens are made of and split at
_ASCII = st.text(
    st.one_of(
        st.sampled_from("aZ09_.-/:@+' \n\t"),
        st.characters(min_codepoint=0, max_codepoint=127),
    ),
    max_size=80,
)


@given(_ASCII)
@settings(max_examples=500, deadline=None)
def test_ascii_patterns_match_the_general_ones(text):
    assert analysis.ASCII_TOKEN.findall(text) == analysis.TOKEN.findall(text)
    assert units.ASCII_TOKEN.findall(text) == units.TOKEN.findall(text)


def test_non_ascii_text_takes_the_general_pattern():
    assert units.count_tokens("会議 ab_c d.e") == 5  # each Han character a token
    assert units.count_tokens("ab_c d.e") == 3
    assert "会議" in analysis.Analyzer().terms("会議 ab")  # the pair, as CJK is indexed


def _latin_by_rule(sample: str) -> str | None:
    """``languages._latin`` as its docstring states it, one token at a time."""
    words = [w.strip(languages._PUNCT) for w in sample.lower().split()]
    words = [w for w in words if re.fullmatch(r"[^\W\d_]+", w)]
    scores = {lang: 0 for lang in languages.FUNCTION_WORDS}
    kinds: dict[str, set[str]] = {lang: set() for lang in languages.FUNCTION_WORDS}
    for w in words:
        for lang, listed in languages.FUNCTION_WORDS.items():
            if w in listed.split():
                scores[lang] += 1
                kinds[lang].add(w)
    best = max(scores, key=scores.__getitem__)
    n = scores[best]
    if best == "en" or n < 3 or n < 2 * scores["en"] or n < len(words) / 10:
        return None
    return best if len(kinds[best]) >= 2 else None


_WORDS = st.sampled_from(
    ["de", "la", "le", "et", "der", "und", "the", "of", "x1", "(de)", "'la',", "a.b", "zz"]
)


@given(st.lists(_WORDS, max_size=40).map(" ".join))
@settings(max_examples=300, deadline=None)
def test_latin_counts_as_its_rule_says(sample):
    assert languages._latin(sample) == _latin_by_rule(sample)


def test_few_letters_of_another_script_leave_latin_rules():
    french = "le chat et la souris de la maison sont dans le jardin " * 3
    assert languages.detect(french + "Жж") == "fr"  # two Cyrillic letters tell nothing
    assert languages.detect("Это исследование показывает результаты " + french[:40]) == "ru"
