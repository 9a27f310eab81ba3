"""A hit's focus: the shortest run of matches holding as many distinct query words as any
window of the size holds, whose lines a hit cites first, and which its snippet holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.densest import tightest
from kbx.search.passages import focus, snippet_window


def brute(spans: list[tuple[int, int]], size: int, words: list[int]) -> tuple[int, int]:
    """The same rule, by trying every run."""
    runs = [(i, j) for i in range(len(spans)) for j in range(i, len(spans))]
    fits = [r for r in runs if spans[r[1]][1] - spans[r[0]][0] <= size]
    most = max(len(set(words[i : j + 1])) for i, j in fits)

    def extent(r: tuple[int, int]) -> int:
        return spans[r[1]][1] - spans[r[0]][0]

    held = [r for r in runs if len(set(words[r[0] : r[1] + 1])) >= most]
    return min(held, key=lambda r: (extent(r), r[1]))


@st.composite
def matched(draw) -> tuple[list[tuple[int, int]], list[int]]:
    gaps = draw(st.lists(st.integers(1, 40), min_size=1, max_size=12))
    spans, at = [], 0
    for g in gaps:
        spans.append((at + g, at + g + 4))
        at += g + 4
    return spans, draw(st.lists(st.integers(0, 3), min_size=len(spans), max_size=len(spans)))


@settings(max_examples=300, deadline=None)
@given(m=matched(), size=st.integers(4, 120))
def test_tightest_is_the_shortest_run_with_the_most_words(m, size):
    spans, words = m
    i, j = tightest(spans, size, words)
    bi, bj = brute(spans, size, words)
    assert len(set(words[i : j + 1])) == len(set(words[bi : bj + 1]))
    assert spans[j][1] - spans[i][0] == spans[bj][1] - spans[bi][0]


def test_distinct_words_win_over_repeats_of_one():
    text = "pump pump pump pump and later the bleed valve of the tank"
    spans = [(0, 4), (5, 9), (10, 14), (15, 19), (34, 39), (40, 45), (53, 57)]
    words = [0, 0, 0, 0, 1, 2, 3]
    a, b = focus(spans, words, size=40)
    assert text[a:b] == "bleed valve of the tank"
    assert focus([], [], size=40) is None
    a, b = snippet_window(text, spans, size=30, words=words)
    assert "bleed valve" in text[a:b]  # the snippet holds the focus, not the first pumps
