"""Fusion of the BM25 and dense rankings: one ranking from several.

``kbx search --mode hybrid`` fuses by ``convex``, a weighted sum of scores each scaled by
its list's best (Bruch, Gai and Ingber, TOIS 2023). ``rrf``, reciprocal rank fusion by rank
alone (Cormack, Clarke and Büttcher, SIGIR 2009), is the usual alternative, measured beside
it: chosen on SciFact's odd-id queries and reported on its even-id ones and on the Node.js
questions, the convex combination ranked at or above RRF (docs/BENCHMARKS.md, "Dense
retrieval: the fusion").

At a fixed weight the dense list moved literal questions' answers off the top: a passage
holding every rare word of the question and another the model likes a little better tie
once scaled (Node.js literal hit@1 0.85 by words, 0.70 fused; issue 41). So BM25's weight
rises with how much of the query BM25's best passage holds (``weight_of_words``: the idf
share of the query's words it holds, ``bm25.coverage``): ``ALPHA`` where it holds none, 1
where it holds all, ``ALPHA + (1 - ALPHA) * covered ** COVERAGE_POWER`` between. A
question asked in its answer's words keeps its answer; one asked in other words, whose
best passage by words holds only part of it, is ranked by meaning as before.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np

from kbx.search.filters import DocFilter
from kbx.vectors.model import Encoder
from kbx.vectors.rank import dense_rank

DEFAULT_K = 20  # RRF k: 20 ranked SciFact train a little above 60 (docs/BENCHMARKS.md)
# BM25's weight in ``convex`` (the dense list's 1 - ALPHA) for a query its best passage by
# words holds none of. 0.4 was the best on SciFact train's odd-id queries alone; 0.6 is the
# setting among 0.4-0.7 (and COVERAGE_POWER 1-2) that keeps hybrid at or above words alone
# at hit@1 and hit@5 on every tune half (RFC dev questions of odd number, the Node.js
# questions at even positions, for literal and paraphrased alike) and, of those, best on
# SciFact's odd ids (nDCG@10 0.745, 0.754 at 0.4; BM25 0.725). docs/BENCHMARKS.md, "Hybrid
# at or above words alone", reports the other halves.
ALPHA = 0.6
# How BM25's weight rises with the share of the query its best passage holds: 2, chosen on
# the tune halves (RFC dev questions of odd number, the Node.js questions, SciFact's odd
# ids) among 1 to 4 (docs/BENCHMARKS.md, "Hybrid that keeps literal questions")
COVERAGE_POWER = 2.0
LISTS = ("bm25", "dense")  # the names of ``fuse``'s lists, as JSON's per-hit ``ranks``


@dataclass(frozen=True)
class Fused:
    """One item of a fused ranking: its fused score and its rank (from 1) in each list
    that held it, by list position (``ranks[0]`` is the first list's)."""

    key: Hashable
    score: float
    ranks: tuple[int | None, ...] = field(default=())


def rrf(
    lists: Sequence[Sequence[Hashable]],
    k: float = DEFAULT_K,
    weights: Sequence[float] | None = None,
) -> list[Fused]:
    """Fuse rankings (best first; a key repeated in one list counts at its first place).
    Ties in score go to the item with the best single rank, then to the earlier list's
    order, so the result is deterministic. ``weights`` scale each list's terms (weighted
    RRF); all 1 by default."""
    if k < 0:
        raise ValueError("k must be at least 0")
    w = list(weights) if weights is not None else [1.0] * len(lists)
    if len(w) != len(lists):
        raise ValueError("give one weight per list")
    fused = [
        Fused(
            key, sum(wi / (k + r) for wi, r in zip(w, rs, strict=True) if r is not None), tuple(rs)
        )
        for key, rs in _first_ranks(lists).items()
    ]
    return _best_first(fused)


def _first_ranks(lists: Sequence[Sequence[Hashable]]) -> dict[Hashable, list[int | None]]:
    """Each key's rank (from 1) in each list, at its first place there (None: absent), the
    keys in the order first seen: earlier lists first."""
    ranks: dict[Hashable, list[int | None]] = {}
    for i, ranking in enumerate(lists):
        for r, key in enumerate(ranking, 1):
            slot = ranks.setdefault(key, [None] * len(lists))
            if slot[i] is None:
                slot[i] = r
    return ranks


def _best_first(fused: list[Fused]) -> list[Fused]:
    """By score; a tie to the best single rank, then (the sort being stable) to the order
    ``_first_ranks`` gave."""
    return sorted(fused, key=lambda f: (-f.score, min(r for r in f.ranks if r is not None)))


def convex(
    lists: Sequence[Sequence[tuple[Hashable, float]]],
    weights: Sequence[float],
    cut: Sequence[bool] | None = None,
) -> list[Fused]:
    """Fuse scored rankings by a convex combination of theoretically scaled scores (TM2C2 of
    Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS
    2023): each list's scores become ``s / best``, 0 being the least score its scorer gives
    (BM25; a cosine, clipped there), so a list's scale depends on its best score alone, not
    on how deep it was cut as min-max scaling's would; an item's score is the weighted sum
    over the lists. An item a list lacks scores there what the list's last item does where
    the list was ``cut`` short (it ranked below: that is its score's bound, and the fusion
    then ranks as over the whole lists, docs/BENCHMARKS.md), and 0 where the list holds all
    its scorer found. A list with no score above 0 adds nothing. ``ranks`` and the order of
    ties are as in ``rrf``."""
    cuts = list(cut) if cut is not None else [False] * len(lists)
    if len(weights) != len(lists) or len(cuts) != len(lists):
        raise ValueError("give one weight (and one cut) per list")
    parts = []  # each list's weight, scaled scores, and what an item it lacks scores there
    for w, ranking, was_cut in zip(weights, lists, cuts, strict=True):
        best = max((s for _, s in ranking), default=0.0)
        scaled: dict[Hashable, float] = {}
        for key, s in ranking:
            scaled.setdefault(key, max(s, 0.0) / best if best > 0 else 0.0)
        last = max(ranking[-1][1], 0.0) / best if was_cut and best > 0 else 0.0
        parts.append((w, scaled, last))
    fused = [
        Fused(key, sum(w * m.get(key, b) for w, m, b in parts), tuple(rs))
        for key, rs in _first_ranks([[k for k, _ in ranking] for ranking in lists]).items()
    ]
    return _best_first(fused)


def dense_ranking(
    con: duckdb.DuckDBPyConnection,
    enc: Encoder,
    query: str | np.ndarray,
    f: DocFilter | None = None,
    limit: int = 100,
    db: Path | None = None,
    units: np.ndarray | None = None,
) -> list[tuple[int, float]]:
    """``(unit_id, cosine)``, best first, among the units ``f`` allows: the same allowed
    set BM25 ranks from (``DocFilter.units()``), so a filtered hybrid query never returns
    a passage the filter excludes. Boost-only conditions (``f.boosts``) do not move it.
    Pass ``db=index.db`` to scan the memory-mapped matrix when it is current, and
    ``units`` when the allowed units are known already (``dense_rank``)."""
    f = f or DocFilter()
    return dense_rank(con, enc, query, f.units(), f.params, limit, db, units)


def weight_of_words(alpha: float, covered: float) -> float:
    """BM25's weight in the fusion of a query whose share ``covered`` (0 to 1) BM25's best
    passage holds: ``alpha`` for none, rising to 1 (words alone) as it covers all of it."""
    c = min(1.0, max(0.0, covered))
    return alpha + (1 - alpha) * c**COVERAGE_POWER


def fuse(
    bm25_rows: Sequence[tuple[int, float, int]],
    dense_rows: Sequence[tuple[int, float]],
    cut: tuple[bool, bool] = (False, False),
    alpha: float | None = None,
    limit: int | None = None,
    covered: float = 0.0,
) -> list[tuple[int, float, int, dict[str, int | None]]]:
    """BM25's ``(unit_id, score, matched)`` rows and the dense ``(unit_id, cosine)`` rows,
    each the top of its ranking (``cut``: whether each list left some out), fused by
    ``convex`` (BM25 weighing ``weight_of_words(alpha, covered)``, ``alpha`` by default the
    module's ``ALPHA`` as it is at the call: more, the more of the
    query BM25's best row holds): ``(unit_id, fused score, matched, ranks)`` best first,
    where ``ranks`` names each list's rank of the unit (None: not in it) and ``matched``
    is the query terms BM25 found in it (0 for a unit only the dense list holds). The
    first three fields are what ``hits_for`` takes."""
    matched = {r[0]: r[2] for r in bm25_rows}
    a = weight_of_words(ALPHA if alpha is None else alpha, covered)
    fused = convex([[r[:2] for r in bm25_rows], dense_rows], [a, 1 - a], cut)
    return [
        (f.key, f.score, matched.get(f.key, 0), dict(zip(LISTS, f.ranks, strict=True)))
        for f in fused[:limit]
    ]
