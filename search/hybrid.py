"""Reciprocal rank fusion: one ranking from several, by rank alone.

RRF (Cormack, Clarke and Büttcher, SIGIR 2009): an item's score is the sum over the lists
that hold it of ``1 / (k + rank)``, ranks from 1. It needs no score calibration between
BM25 and cosine, which live on unrelated scales; ``k`` damps the weight of the very top
ranks (60 in the paper; docs/BENCHMARKS.md compares 20 and 60 on kbx's data).
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
LISTS = ("bm25", "dense")  # the names of ``fuse``'s lists, as JSON's per-hit ``ranks``


@dataclass(frozen=True)
class Fused:
    """One item of a fused ranking: its RRF score and its rank (from 1) in each list that
    held it, by list position (``ranks[0]`` is the first list's)."""

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
    ranks: dict[Hashable, list[int | None]] = {}
    for i, ranking in enumerate(lists):
        for r, key in enumerate(ranking, 1):
            slot = ranks.setdefault(key, [None] * len(lists))
            if slot[i] is None:
                slot[i] = r
    fused = [
        Fused(
            key, sum(wi / (k + r) for wi, r in zip(w, rs, strict=True) if r is not None), tuple(rs)
        )
        for key, rs in ranks.items()
    ]
    order = {key: n for n, key in enumerate(ranks)}  # first seen: earlier lists first
    fused.sort(key=lambda f: (-f.score, min(r for r in f.ranks if r is not None), order[f.key]))
    return fused


def minmax_sum(lists: Sequence[Sequence[tuple[Hashable, float]]]) -> list[tuple[Hashable, float]]:
    """Score fusion, the comparison RRF is measured against: each list's scores scaled to
    [0, 1] by its own best and worst, summed (an item missing from a list scores 0 there;
    CombSUM of Fox and Shaw 1994 over min-max scores, the convex combination with equal
    weights that Bruch, Gai and Ingber, TOIS 2023, find beats RRF). Best first, ties by
    key order of first appearance."""
    total: dict[Hashable, float] = {}
    for ranking in lists:
        if not ranking:
            continue
        hi, lo = max(s for _, s in ranking), min(s for _, s in ranking)
        seen = set()
        for key, s in ranking:
            if key not in seen:
                seen.add(key)
                total[key] = total.get(key, 0.0) + ((s - lo) / (hi - lo) if hi > lo else 1.0)
    order = {key: n for n, key in enumerate(total)}
    return sorted(total.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def dense_ranking(
    con: duckdb.DuckDBPyConnection,
    enc: Encoder,
    query: str | np.ndarray,
    f: DocFilter | None = None,
    limit: int = 100,
    db: Path | None = None,
) -> list[tuple[int, float]]:
    """``(unit_id, cosine)``, best first, among the units ``f`` allows: the same allowed
    set BM25 ranks from (``DocFilter.units()``), so a filtered hybrid query never returns
    a passage the filter excludes. Boost-only conditions (``f.boosts``) do not move it.
    Pass ``db=index.db`` to scan the memory-mapped matrix when it is current."""
    f = f or DocFilter()
    return dense_rank(con, enc, query, f.units(), f.params, limit, db)


def fuse(
    bm25_rows: Sequence[tuple[int, float, int]],
    dense_rows: Sequence[tuple[int, float]],
    k: float = DEFAULT_K,
    limit: int | None = None,
) -> list[tuple[int, float, int, dict[str, int | None]]]:
    """BM25's ``(unit_id, score, matched)`` rows and the dense ``(unit_id, cosine)`` rows
    fused by ``rrf``: ``(unit_id, rrf score, matched, ranks)`` best first, where ``ranks``
    names each list's rank of the unit (None: not in it) and ``matched`` is the query
    terms BM25 found in it (0 for a unit only the dense list holds). The first three
    fields are what ``hits_for`` takes."""
    matched = {r[0]: r[2] for r in bm25_rows}
    fused = rrf([[r[0] for r in bm25_rows], [r[0] for r in dense_rows]], k)
    return [
        (f.key, f.score, matched.get(f.key, 0), dict(zip(LISTS, f.ranks, strict=True)))
        for f in fused[:limit]
    ]
