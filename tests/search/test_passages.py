"""Marking matches token by token (with each raw token analyzed once) finds the same spans
as walking the analyzer's terms over the whole text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.analysis import Analyzer
from kbx.search.passages import matches

WORDS = ["Installing", "install", "command-line", "line", "v18.2.0", "ERR_4021", "Café", "what's"]
texts = st.lists(st.sampled_from([*WORDS, " ", ", ", "\n", "—", "x"]), max_size=40).map("".join)


def walked(text: str, forms: set[str], an: Analyzer, code: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for start, end, term in an.tokens(text, code):
        if term in forms and not (spans and spans[-1][0] <= start < spans[-1][1]):
            spans.append((start, end))
    return spans


@settings(max_examples=200, deadline=None)
@given(
    text=texts, query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), code=st.booleans()
)
def test_matches_are_the_analyzer_walk(text: str, query: list[str], code: bool):
    an = Analyzer()
    forms = {t for g in an.query(" ".join(query), stopwords=False) for t in g}
    got = matches(text, forms, an, code)
    assert got == walked(text, forms, an, code)
    assert all(text[a:b].strip() for a, b in got)


def test_a_whole_identifier_wins_over_its_parts():
    an = Analyzer()
    text = "run command-line tools from the command line"
    forms = {t for g in an.query("command-line") for t in g}
    assert [text[a:b] for a, b in matches(text, forms, an, False)] == [
        "command-line",
        "command",
        "line",
    ]
