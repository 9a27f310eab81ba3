"""Page furniture: running heads, footers and page numbers, the lines at a page's top or
bottom that recur there on many pages. A PDF's pages and a paginated text file's (an RFC,
a manual printed to text: pages parted by form feeds) carry them alike. Left in, each page
makes a passage of them ("gnuplot 5.4 21"), which a dense ranker puts first for any
question on the manual's name, and they put the document's title words into whichever
passage runs over a page break ("RFC 7862  NFSv4.2  November 2016"), splitting its
paragraph besides.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

EDGE_LINES = 2  # lines at a page's top and at its bottom where furniture sits
FURNITURE_SHARE = 0.25  # of the pages (and at least 3): a line repeated that often is the page's
_LINE = re.compile(r"[^\n]*\S[^\n]*")
_DIGITS = re.compile(r"\d+")


def _edges(page: str) -> list[tuple[str, re.Match]]:
    lines = list(_LINE.finditer(page))
    return [("top", m) for m in lines[:EDGE_LINES]] + [("bottom", m) for m in lines[-EDGE_LINES:]]


def _keys(side: str, line: str, page: int) -> set[tuple]:
    """What a line at a page's edge has in common with the furniture of other pages: the
    line itself, and its words with its first or last number less the page's index, so
    ``gnuplot 5.4 21`` on page 21 and ``gnuplot 5.4 22`` on page 22 are one footer and
    ``86 THE AMSMATH PACKAGE`` one head with the next page's ``87 …``; numbers that do not
    count the pages (a table's rows, a list's) make no furniture."""
    words = " ".join(line.split()).lower()
    numbers = _DIGITS.findall(line)
    if not numbers:
        return {(side, words)}
    shape = _DIGITS.sub("#", words)
    first, last = int(numbers[0][:9]) - page, int(numbers[-1][:9]) - page
    return {(side, words), (side, shape, 0, first), (side, shape, -1, last)}


def furniture(pages: list[str]) -> list[list[tuple[int, int]]]:
    """Per page, the ``[start, end)`` of the lines that are page furniture: lines at a
    page's top or bottom that recur there (their page numbers aside) on a quarter of the
    pages or more."""
    seen: Counter[tuple] = Counter()
    for i, page in enumerate(pages):
        seen.update({k for side, m in _edges(page) for k in _keys(side, m.group(), i)})
    need = max(3, FURNITURE_SHARE * len(pages))
    return [
        sorted(
            {
                m.span()
                for side, m in _edges(page)
                if any(seen[k] >= need and (i or len(k) > 2) for k in _keys(side, m.group(), i))
            }  # the first page keeps a running head's words: there they are its title
        )
        for i, page in enumerate(pages)
    ]


def paragraphs(
    text: str, start: int, end: int, cuts: list[tuple[int, int]], gap: re.Pattern
) -> Iterator[tuple[int, str]]:
    """``(offset, paragraph)`` of ``text[start:end]`` parted by ``gap``, the sorted ``cuts``
    (``furniture``'s, as offsets into ``text``) left out."""
    for a, b in _kept(start, end, cuts):
        pos = a
        for m in gap.finditer(text, a, b):
            if m.start() > pos:
                yield pos, text[pos : m.start()]
            pos = m.end()
        if b > pos:
            yield pos, text[pos:b]


def _kept(start: int, end: int, cuts: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The ``[a, b)`` stretches of ``[start, end)`` outside the sorted ``cuts``."""
    at = start
    for a, b in cuts:
        if b > at and a < end:
            yield at, max(at, min(a, end))
            at = max(at, b)
    yield at, end
