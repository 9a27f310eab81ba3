"""The query's words side by side, in its order: a phrase component for the ranking.

BM25 scores each query word alone, so a passage holding three common words anywhere ranks
with every other passage holding them, where the one holding them as a phrase is what was
asked for: a known item (German ``können verwandt werden``, French ``être utilisés
également``: words of every manual page, the phrase of one; a Japanese run of kana pairs,
each pair in many passages), or a sentence pasted from the passage itself. A passage that
holds the whole query in order (``Phrase.count``: each word followed by the next, at most
``BETWEEN`` word apart, so ``Falls Datei nicht`` finds ``Falls eine Datei nicht``; a run of
Chinese, Japanese or Korean characters whole) has its score by words (BM25 and the file
prior, search/prior.py) multiplied:

    score'(p) = score(p) * (1 + w * n (k1 + 1) / (n + k1))

with ``w`` the weight (``BM25Params.phrase``, 1) and ``n`` the phrase's occurrences (one
with a word between counts half), saturated as BM25 saturates a term's: once, the score
doubles; more often, it grows up to ``k1 + 2`` times. Words match as the text spells them, in
any case; a word of ASCII letters also with its inflections (``leases``: ``leas…``, the
stretch it shares with its English stem, and up to ``RUN_ON`` letters more).

Pairs of neighbouring words (the sequential dependence model of Metzler and Croft, SIGIR
2005) were tried first and cost English questions what they gave German and French
phrases: a question's words side by side in other passages ("character set", "header
field") are no evidence; the whole query side by side is (docs/BENCHMARKS.md, "Every script
searchable"). Only the best ``POOL`` passages of the words' ranking are looked at: a rerank,
a text read and tested for each word (``in``) before any is followed. Applied before the
prior instead (a phrase then lifts its file's other passages too), it ranked the same but
one German probe (1st against 2nd), and a small index, ranked in SQL, must then hand every
matching unit to Python: not kept.
"""

from __future__ import annotations

import os.path
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from kbx.analysis import TOKEN, pieces
from kbx.search.scoring import BM25Params

POOL = 100  # passages of the words' ranking that the phrase component reranks
BETWEEN = 1  # words that may stand between two of the query's (each such counts half)
GAP_CHARS = 40  # characters between two words: spaces, a line break and its indent
RUN_ON = 4  # letters an English word's stem may run on by (``leas``: leases, leasing)

Row = tuple  # (unit_id, score, matched, ...), as ``bm25.rank`` gives
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Piece:
    """A query word as the text spells it, lower case: whole (``prefix``: or running on by
    up to ``RUN_ON`` letters, an English word's inflections), or a CJK run, found anywhere
    (``cjk``)."""

    text: str
    prefix: bool = False
    cjk: bool = False

    def spans(self, low: str) -> list[tuple[int, int]]:
        """Where ``low`` (a lower-cased text) holds the piece, as ``(start, end)``."""
        out = []
        w, n = self.text, len(low)
        i = low.find(w)
        while i >= 0:
            j = i + len(w)
            if self.cjk:
                out.append((i, j))
            elif i == 0 or not low[i - 1].isalnum():
                if self.prefix:  # an inflection's few letters, not a longer word
                    stop = min(n, j + RUN_ON + 1)
                    while j < stop and low[j].isalnum():
                        j += 1
                if j == n or not low[j].isalnum():
                    out.append((i, j))
            i = low.find(w, i + 1)
        return out


@dataclass(frozen=True)
class Phrase:
    """The query as a phrase: its pieces in order."""

    pieces: tuple[Piece, ...]

    def count(self, text: str) -> float:
        """The occurrences of the whole phrase in ``text``: each piece followed by the next
        within ``GAP_CHARS`` and at most ``BETWEEN`` words (each word between halving the
        occurrence). Every piece is looked for (``in``) before any is followed."""
        low = text.lower()
        if not all(p.text in low for p in self.pieces):
            return 0.0
        ends = [(e, 1.0) for _, e in self.pieces[0].spans(low)]
        for piece in self.pieces[1:]:
            nxt = []
            for start, end in piece.spans(low):
                got = 0.0
                for p, c in ends:
                    if p <= start and start - p <= GAP_CHARS:
                        between = len(_WORD.findall(low, p, start))
                        if between <= BETWEEN:
                            got = max(got, c / 2**between)
                if got:
                    nxt.append((end, got))
            if not nxt:
                return 0.0
            ends = nxt
        return sum(c for _, c in ends)

    def scored(self, text: str, score: float, params: BM25Params) -> float:
        """A passage's words' ``score`` with the phrase component, weighing
        ``params.phrase``."""
        n = self.count(text)
        if not n:
            return score
        k1 = float(params.k1)
        return score * (1 + float(params.phrase) * n * (k1 + 1) / (n + k1))


@cache
def _english_stem(word: str) -> str:
    import Stemmer

    return Stemmer.Stemmer("english").stemWord(word)


def piece_of(word: str, cjk: bool = False) -> Piece:
    """``word`` as a ``Piece``: a word of ASCII letters, four or more, as the stretch it
    shares with its English stem, if three letters or more (``leases``: ``leas…``, which
    finds ``leased`` and ``leasing`` too)."""
    low = word.lower()
    if cjk:
        return Piece(low, cjk=True)
    if low.isascii() and low.isalpha() and len(low) > 3:
        stem = os.path.commonprefix([low, _english_stem(low)])
        if len(stem) >= 3:
            return Piece(stem, True)
    return Piece(low)


def phrase_of(query: str) -> Phrase | None:
    """The query's pieces in order, or None where it is no phrase: a single word (a CJK run
    of three characters or more is one: its pairs of characters must be neighbours)."""
    found = tuple(
        piece_of(piece, cjk) for m in TOKEN.finditer(query) for _, piece, cjk in pieces(m)
    )
    if not found or (len(found) == 1 and not (found[0].cjk and len(found[0].text) > 2)):
        return None
    return Phrase(found)


def rerank(
    rows: list[Row],
    found: Phrase,
    texts: Callable[[list[int]], dict[int, str]],
    params: BM25Params,
    pool: int = POOL,
) -> list[Row]:
    """``rows`` (best first, ties by unit id) with the phrase bonus added to the first
    ``pool`` of them, in the new order; the rest keep their place below."""
    if not rows:
        return rows
    head, tail = rows[:pool], rows[pool:]
    text = texts([int(r[0]) for r in head])
    scored = [(r[0], found.scored(text.get(int(r[0]), ""), r[1], params), *r[2:]) for r in head]
    scored.sort(key=lambda r: (-r[1], r[0]))
    return scored + tail
