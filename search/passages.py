"""Turning a stored placement into a cited passage: lines, snippet, marked terms."""

from __future__ import annotations

import unicodedata

from kbx.analysis import TOKEN, Analyzer, has_cjk, token_cache
from kbx.densest import tightest
from kbx.extract.textmap import Segment, locate

SNIPPET_CHARS = 240
FOCUS_CHARS = 160  # the window a hit's focus (its best lines) is chosen in


SPAN_TOKENS = 200_000  # distinct raw tokens whose terms are remembered per analyzer and kind


def each(select: str, keys: list[tuple[int, ...]]) -> str:
    """``select`` once per key (integers), as one UNION ALL: DuckDB reads a row found by
    an equality on its own, where an IN list or a join reads whole columns (the text of
    every unit, the offset map of every placement: 100 ms at 200k units against 5)."""
    return " UNION ALL ".join(select.format(*(int(k) for k in key)) for key in keys)


def matches(
    text: str, forms: set[str], analyzer: Analyzer, code: bool, matched: list[str] | None = None
) -> list[tuple[int, int]]:
    """Spans of ``text`` whose terms are among the query's forms (a whole identifier
    wins over its parts); each span's term appended to ``matched`` when given."""
    spans: list[tuple[int, int]] = []
    # the terms of each raw token seen, spans relative to it: words recur across passages,
    # and analyzing each once is most of the cost of marking ten hits (the cache found once
    # per passage: an lru_cache per token hashed the analyzer each time)
    langs = (None,) if code else (None, *analyzer.languages)  # as each may have stemmed it
    cache = token_cache(analyzer, code, f"spans:{langs}")
    for m in TOKEN.finditer(text):
        at, raw = m.start(), m.group()
        found = cache.get(raw)
        if found is None:
            if len(cache) >= SPAN_TOKENS:
                cache.clear()
            terms = _spans(analyzer, raw, code, langs)
            found = cache[raw] = (terms, frozenset(t for _, _, t in terms))
        terms, words = found
        if forms.isdisjoint(words):  # most tokens (a CJK run: all its pairs at once)
            continue
        for s, e, term in terms:
            if term not in forms:
                continue
            if (
                spans
                and spans[-1][0] <= at + s <= spans[-1][1]
                and (at + s < spans[-1][1] or _cjk_pair(term))
            ):  # inside the last (a part of its whole), or a CJK pair overlapping it
                if _cjk_pair(term):
                    spans[-1] = (spans[-1][0], max(spans[-1][1], at + e))
                continue
            spans.append((at + s, at + e))
            if matched is not None:
                matched.append(term)
    return spans


def _spans(analyzer: Analyzer, raw: str, code: bool, langs: tuple) -> tuple:
    """The terms of one raw token with their spans, as analyzed in each language, in
    order of their start (a whole before its parts)."""
    if len(langs) == 1:
        return tuple(analyzer.tokens(raw, code))
    found = dict.fromkeys(t for lang in langs for t in analyzer.tokens(raw, code, lang))
    return tuple(sorted(found, key=lambda t: t[0]))


def _cjk_pair(term: str) -> bool:
    return not term.isascii() and has_cjk(term)


def snippet_window(
    text: str,
    spans: list[tuple[int, int]],
    size: int = SNIPPET_CHARS,
    words: list[int] | None = None,
) -> tuple[int, int]:
    """The ``[start, end)`` of a window of about ``size`` characters around the densest
    matches (``densest``; ``words``: the query word each span matches): a little before
    the hit's focus, so that it holds the focus whole."""
    if len(text) <= size:
        return 0, len(text)
    at = densest(spans, min(size, FOCUS_CHARS), words) if spans else 0
    start = max(0, spans[at][0] - size // 6) if spans else 0
    end = min(len(text), start + size)
    start = max(0, min(start, end - size))
    if start > 0:  # snap to word boundaries
        sp = text.find(" ", start)
        start = sp + 1 if 0 <= sp < start + 20 else start
    if end < len(text):
        sp = text.rfind(" ", start, end)
        end = sp if sp > start + size // 2 else end
    return cluster_start(text, start), cluster_start(text, end)


def densest(spans: list[tuple[int, int]], size: int, words: list[int] | None = None) -> int:
    """The index of the first span of ``tightest``'s run: where the densest matches start."""
    return tightest(spans, size, words)[0]


def focus(
    spans: list[tuple[int, int]], words: list[int], size: int = FOCUS_CHARS
) -> tuple[int, int] | None:
    """The ``[start, end)`` of the densest matches (``tightest`` in ``size`` characters):
    the shortest text holding the most of the query's words close together, whose lines a
    hit cites as its focus. None without a match."""
    if not spans:
        return None
    i, j = tightest(spans, size, words)
    return spans[i][0], max(e for _, e in spans[i : j + 1])


def cluster_start(text: str, i: int) -> int:
    """``i``, or the start of the grapheme cluster it falls inside: a cut never parts a
    letter from its combining marks (Devanagari's vowel signs, Thai's tones) or the halves
    of a sequence joined by U+200D."""
    while 0 < i < len(text) and (
        unicodedata.category(text[i])[0] == "M" or "\u200d" in (text[i], text[i - 1])
    ):
        i -= 1
    return i


def mark(text: str, spans: list[tuple[int, int]], start: int, end: int) -> str:
    """``text[start:end]`` with matched spans wrapped in ``**``, and ellipses where cut."""
    out, pos = [], start
    for s, e in spans:
        if s < start or e > end:
            continue
        out.append(text[pos:s])
        out.append(f"**{text[s:e]}**")
        pos = e
    out.append(text[pos:end])
    body = " ".join("".join(out).split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


def line_span(segments: list[Segment], text: str, start: int, end: int) -> tuple[int, int]:
    """Original lines of clean text ``[start, end)``."""
    a = locate(segments, text, start).line
    b = locate(segments, text, max(start, end - 1)).line
    return a, max(a, b)
