"""A document's relevance as a prior for its passages (issue 41).

Units follow a document's structure, so a long plain-text file (an RFC) is cut into many
small sections, and a question's words are spread over the file: its topic words in the
abstract and introduction, the answer's own words in one section deep inside. Ranked
alone, the passages of the file that is right compete with the best passages of other
files that share a few words. A passage therefore scores its own BM25 score plus
``weight`` times the best score of any passage of its file:

    score'(p) = score(p) + weight * max(score(q) for q in the file of p)

Within a file the order is BM25's, and the files' order by their best passage is
unchanged (the best passage of a file scores ``(1 + weight)`` times its own); what moves
is how a file's further passages interleave with other files' passages. A passage placed
in several files takes the best of them. Measured in docs/BENCHMARKS.md ("Passages within
a file"): RFC dev paraphrased hit@5 0.60 -> 0.76, literal 0.96 -> 1.00; SciFact
unchanged (one passage a document); Node.js unchanged before per-language stemming, one
paraphrased question of 20 lower after it. ``BM25Params(doc_prior=0)`` is plain BM25.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import duckdb

from kbx.store.passages_file import PassagesFile

if TYPE_CHECKING:  # numpy: only where the ranking runs over the mapped postings
    import numpy as np

Row = tuple[int, float, int]  # (unit_id, score, words matched), as ``bm25.rank`` gives
POOL = 1000  # units ranked first; every unit only when the bound below cannot rule it out
# The most units the prior ever ranks: past it the answer is the widest pool's, not proven
# (a common word matched in 200k passages is not ranked whole on every search).
WIDEST = 20 * POOL


def docs_of(
    con: duckdb.DuckDBPyConnection, units: list[int], passages: PassagesFile | None = None
) -> dict[int, list[int]]:
    """The documents placing each of ``units``: from the mapped passages when current, else
    one statement."""
    if passages is not None:
        out = {}
        for u in units:
            out[u] = [int(passages.pl_doc[r]) for r in passages.placements(u)]
        return out
    rows = con.execute(
        "SELECT unit_id, list(doc_id) FROM placements "
        "WHERE unit_id IN (SELECT unnest(?::BIGINT[])) GROUP BY unit_id",
        [units],
    ).fetchall()
    return {int(u): list(ds) for u, ds in rows}


def with_prior(
    rows: list[Row], docs: dict[int, list[int]], weight: float, limit: int | None = None
) -> list[Row]:
    """``rows`` (every matching unit, so that each file's best is among them) rescored by
    their files' best scores, best first, ties by unit id, the first ``limit``."""
    if weight <= 0 or not rows:
        return rows[:limit]
    best: dict[int, float] = {}
    for u, s, _ in rows:
        for d in docs.get(u, ()):
            if s > best.get(d, float("-inf")):
                best[d] = s
    out = [
        (u, s + weight * max((best[d] for d in docs.get(u, ())), default=0.0), m)
        for u, s, m in rows
    ]
    out.sort(key=lambda r: (-r[1], r[0]))
    return out[:limit]


def rescored(hit: np.ndarray, s: np.ndarray, passages: PassagesFile, weight: float) -> np.ndarray:
    """``with_prior``'s scores over arrays: ``s``, the scores of every matching unit
    ``hit``, plus ``weight`` times the best of them in each unit's files (the best of its
    files for a unit placed in several; nothing for a unit placed nowhere), read from the
    mapped placements in one pass over the matching units' rows. The same operations on
    the same numbers as ``with_prior``, so the same scores to the bit; the order is the
    caller's (best first, ties by unit id)."""
    import numpy as np

    starts = passages.place_start
    known = hit < len(starts) - 1
    idx = np.flatnonzero(known)
    a = starts[hit[idx]]
    counts = starts[hit[idx] + 1] - a
    owner = np.repeat(idx, counts)  # each placement row's position in ``hit``
    first = np.repeat(a - (np.cumsum(counts) - counts), counts)
    rows = first + np.arange(len(owner))
    docs = passages.pl_doc[rows].astype(np.int64)
    best = np.zeros(int(docs.max()) + 1 if len(docs) else 0)  # scores are above 0
    np.maximum.at(best, docs, s[owner])
    prior = np.zeros(len(hit))
    np.maximum.at(prior, owner, best[docs])
    return s + weight * prior


def rank_with_prior(
    ranker: Callable[[int | None], tuple[list[Row], int]],
    files: Callable[[list[int]], dict[int, list[int]]],
    weight: float,
    depth: int | None,
) -> tuple[list[Row], int]:
    """The best ``depth`` units with the prior, and how many matched. ``ranker(limit)`` is
    BM25's ranking cut at ``limit`` (None: every unit), ``files`` gives the units' files.

    A pool of the best ``POOL`` units (or ``8 * depth``) is enough when it provably holds
    the answer: a unit outside it scores at most the pool's last score plus ``weight``
    times the best score of all, so when the ``depth``-th rescored unit is above that, no
    unit outside can pass it. Every unit of the pool knows its file's best, which scores
    at least as high and so is in the pool too (or ties, and counts through itself).
    Otherwise every unit is ranked (the exact answer, at some cost), up to ``WIDEST`` units:
    a query matching more takes the answer of its best ``WIDEST``, whose cost is bounded."""
    if weight <= 0:
        return ranker(depth)
    if depth is None:
        rows, total = ranker(None)
        return with_prior(rows, files([r[0] for r in rows]), weight), total
    rows, total = ranker(max(POOL, 8 * depth))
    if len(rows) < total:
        out = with_prior(rows, files([r[0] for r in rows]), weight, depth)
        if len(out) == depth and out[-1][1] > rows[-1][1] + weight * rows[0][1]:
            return out, total
        rows, total = ranker(None if total <= WIDEST else WIDEST)
    return with_prior(rows, files([r[0] for r in rows]), weight, depth), total
