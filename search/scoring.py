"""BM25's parts as small pure functions, and a reference scorer over plain Python data.

Each part computes on numbers (or numpy arrays) and, handed ``Sql`` expressions instead,
writes the same formula as SQL: ``search/bm25.py`` builds its rankers, the SQL statement
and the one over the mapped postings, from these functions, so they and the reference
scorer are one definition (tests/search/test_scoring.py holds them equal on
random postings). For a unit of length ``len`` (its body's index terms) among ``N`` units
of average length ``avglen``, and query words ``g``, each a group of alternative forms:

    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))          Lucene's BM25Similarity
    tf'(t)   = tf_body(t) + w * tf_heading(t)                      BM25F, fields weighted
    sat(t)   = tf'(t) * (k1 + 1) / (tf'(t) + k1 * (1 - b + b * len / avglen))
    word(g)  = grid(max over the forms t of g of idf(t) * sat(t))  forms are alternatives
    score    = (word(g1) + word(g2) + ...) * (1 + BOOST * boosts)

(Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond", eq.
3.8 and 3.15 for BM25F's weighted field frequencies; the idf is the one Lucene adopted
so that a term in most units never scores below zero.) ``boosts`` counts the boost-only
mentions asked for that a unit holds (see search/filters.py). ``grid`` rounds a word's
score to a multiple of 2^-32 (a change below 1e-9 of any real score), so the sum of word
scores is exact in whatever order a parallel aggregate adds them: two units with the same
word scores get bit-identical totals, and ties fall to ``unit_id``, in SQL and here alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

BOOST = 0.5  # a passage holding a boost-only mention asked for scores this much more


@dataclass(frozen=True)
class BM25Params:
    """The ranking knobs; the defaults are the ones measured best in docs/BENCHMARKS.md."""

    k1: float = 1.2
    b: float = 0.75
    heading_weight: float = 1.0
    # search adds this times the best score of a passage's file (search/prior.py); rank,
    # the unit ranker, leaves it to its caller unless asked
    doc_prior: float = 1.0
    # search multiplies the score of a passage holding the whole query as a phrase by 1 +
    # this (more for more occurrences: search/proximity.py); 0: words alone
    phrase: float = 1.0


DEFAULT_PARAMS = BM25Params()


class Sql:
    """A SQL expression of type DOUBLE (or integer) that arithmetic with numbers extends,
    parenthesized so DuckDB evaluates in Python's order; numbers become DOUBLE literals
    (a bare ``1.2`` would be a DECIMAL in DuckDB and round differently)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text

    def _op(self, op: str, other: object, swap: bool = False) -> Sql:
        a, b = (literal(other), self.text) if swap else (self.text, literal(other))
        return Sql(f"({a} {op} {b})")

    def __add__(self, o):
        return self._op("+", o)

    def __radd__(self, o):
        return self._op("+", o, True)

    def __sub__(self, o):
        return self._op("-", o)

    def __rsub__(self, o):
        return self._op("-", o, True)

    def __mul__(self, o):
        return self._op("*", o)

    def __rmul__(self, o):
        return self._op("*", o, True)

    def __truediv__(self, o):
        return self._op("/", o)

    def __rtruediv__(self, o):
        return self._op("/", o, True)


def literal(x: object) -> str:
    """SQL for a number or an expression."""
    if isinstance(x, Sql):
        return x.text
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError(f"not a number or SQL expression: {x!r}")
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"not a finite number: {x!r}")
        return f"{x!r}::DOUBLE"
    return str(x)


def ln(x):
    """The natural logarithm, of a number, a numpy array or in SQL."""
    if isinstance(x, Sql):
        return Sql(f"ln({x.text})")
    return math.log(x) if isinstance(x, int | float) else _numpy().log(x)


def floor(x):
    """The largest integer not above ``x``, of a number, a numpy array or in SQL."""
    if isinstance(x, Sql):
        return Sql(f"floor({x.text})")
    return math.floor(x) if isinstance(x, int | float) else _numpy().floor(x)


def _numpy():
    import numpy  # only an array gets here: a caller that has numpy loaded already

    return numpy


# --- the parts ------------------------------------------------------------------------------


def idf(n, df):
    """Lucene's non-negative idf of a term in ``df`` of ``n`` units."""
    return ln(1 + (n - df + 0.5) / (df + 0.5))


def field_tf(tf, htf, heading_weight: float):
    """BM25F's term frequency: heading occurrences weighted, added before saturation."""
    return tf + heading_weight * htf


def saturation(ftf, length, avglen, params: BM25Params):
    """``ftf`` saturated by ``k1`` and normalized by the unit's length against the
    average (``b``); 0 when the term is absent, below ``k1 + 1`` always."""
    k1, b = float(params.k1), float(params.b)
    return ftf * (k1 + 1) / (ftf + k1 * (1 - b + b * length / avglen))


def contribution(idf_, ftf, length, avglen, params: BM25Params):
    """One form's part of a unit's score."""
    return idf_ * saturation(ftf, length, avglen, params)


GRID = 2.0**32


def grid(x):
    """``x`` rounded to the nearest multiple of 2^-32: sums of such numbers (below 2^21)
    are exact, so they do not depend on the order of addition."""
    return floor(x * GRID + 0.5) / GRID


def word_score(contributions: Iterable[float]) -> float:
    """A query word's score: the best of its forms (``command-line``, ``command`` and
    ``line`` are one word, not three), on the grid. SQL: ``grid(max(c))`` per unit and word."""
    return grid(max(contributions))


def boost(n_boosts):
    """The factor for a unit holding ``n_boosts`` of the boost-only mentions asked for."""
    return 1 + BOOST * n_boosts


# --- the reference scorer -------------------------------------------------------------------


@dataclass(frozen=True)
class Postings:
    """One unit as BM25 sees it: its length and, per term, body and heading frequencies."""

    length: int
    tf: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def score(
    postings: Mapping[int, Postings],
    query_groups: Sequence[Sequence[str]],
    params: BM25Params = DEFAULT_PARAMS,
    allowed: set[int] | None = None,
    boosts: Mapping[int, int] | None = None,
) -> dict[int, float]:
    """Each unit's score for ``query_groups`` (only units matching a form, and only the
    ``allowed`` ones when given); N, df and avglen are over every unit in ``postings``."""
    n = len(postings)
    if not n:
        return {}
    avglen = sum(p.length for p in postings.values()) / n
    df: dict[str, int] = {}
    for p in postings.values():
        for t in p.tf:
            df[t] = df.get(t, 0) + 1
    out = {}
    for unit, p in postings.items():
        if allowed is not None and unit not in allowed:
            continue
        words = []
        for group in query_groups:
            parts = [
                contribution(idf(n, df[t]), ftf, p.length, avglen, params)
                for t in dict.fromkeys(group)
                if t in p.tf and (ftf := field_tf(*p.tf[t], float(params.heading_weight))) > 0
            ]
            if parts:
                words.append(word_score(parts))
        if words:
            out[unit] = sum(words) * boost((boosts or {}).get(unit, 0))
    return out


def top(scores: Mapping[int, float], k: int | None = None) -> list[tuple[int, float]]:
    """Best first, ties by ascending unit id: the ranker's order."""
    ranked = sorted(scores.items(), key=lambda us: (-us[1], us[0]))
    return ranked if k is None else ranked[:k]
