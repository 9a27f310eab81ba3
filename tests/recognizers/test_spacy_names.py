"""What the spaCy recognizer refuses to call a name on technical text, and keeps on news."""

from __future__ import annotations

import pytest

from kbx.recognizers.spacy_ner import SpacyRecognizer, in_tag, looks_like_code


@pytest.mark.parametrize(
    ("span", "code"),
    [
        ("doc", True),  # a name is written with a capital
        ("npm team", True),
        ("v0.12", True),  # letters and digits in one word
        ("SSH1", True),
        ("F5 Networks", True),
        ("node::Realm", True),  # a colon inside a word
        ("node:fs", True),
        ("Area 51", False),
        ("Formula 1", False),
        ("U.S.", False),
        ("AT&T", False),
        ("Ōsaka", False),
        ("Joyee Cheung", False),
    ],
)
def test_lower_case_letter_digit_and_colon_spans_are_not_names(span, code):
    assert looks_like_code(span) is code


@pytest.mark.parametrize(
    ("text", "span", "tag"),
    [
        ("[8ae28] - (SEMVER-MAJOR) fs: drop it", "SEMVER", True),
        ("the DHE-RSA-AES128 suite", "DHE", True),
        ("a Moscow-based bank", "Moscow", False),
        ("SEMVER alone", "SEMVER", False),
        ("(NATO)", "NATO", False),
    ],
)
def test_a_part_of_a_capitalized_hyphenated_tag_is_not_a_name(text, span, tag):
    start = text.index(span)
    assert in_tag(text, start, start + len(span)) is tag


def test_spacy_drops_tags_and_lower_case_names_but_keeps_news_names():
    spacy_ner = SpacyRecognizer()
    texts = [  # the raw model calls SEMVER an organisation here
        "[0518b9edf3] - (SEMVER-MAJOR) assert: multiple improvements (Ruben Bridgewater) #21628",
        "Talks between Germany and NATO resumed in Brussels, Angela Merkel said.",
    ]
    changelog, news = ({m.text for m in ms} for ms in spacy_ner.recognize(texts))
    assert "SEMVER" not in changelog
    assert {"Germany", "NATO", "Brussels", "Angela Merkel"} <= news
