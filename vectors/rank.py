"""The dense ranking: exact cosine of the query's vector with each allowed unit's best
window (a long unit has several vectors: model.py), so a passage whose answer lies past
the model's first 256 tokens still ranks by it.

Exact, not approximate: a folder's units fit one scan (docs/BENCHMARKS.md times it), and
the filters narrow the scan itself, so a filtered query ranks only what the filter allows,
exactly as BM25 does, with no candidate list cut short before the filter.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np

from kbx.vectors import matrix
from kbx.vectors.model import Encoder


def dense_rank(
    con: duckdb.DuckDBPyConnection,
    enc: Encoder,
    query: str | np.ndarray,
    allowed: str | None = None,
    params: Sequence = (),
    limit: int = 100,
    db: Path | None = None,
    units: np.ndarray | None = None,
) -> list[tuple[int, float]]:
    """``(unit_id, cosine)`` of the ``limit`` units nearest ``query`` (text, or its vector)
    by their best window, best first, ties by unit id. ``allowed`` is SQL of the units to
    rank from (one column, ``unit_id``, with ``params``: what ``DocFilter.units()``
    gives); None ranks them all.
    Only vectors of ``enc``'s model and version count: a unit without one is not ranked,
    and a window still to be embedded (vectors/run.py) counts for nothing.
    With ``db`` (the index file), the matrix exported beside it is scanned when it is
    current (matrix.py); the SQL scan otherwise. Both give the same ranking. ``units``:
    the ids ``allowed`` selects, sorted, where the caller has them already (a search's
    BM25 side found them over the entity layer's arrays), so the matrix scan needs no
    statement for them."""
    q = enc.query(query) if isinstance(query, str) else np.asarray(query, dtype=np.float32)
    m = matrix.load(con, db, enc.name, enc.version) if db is not None else None
    if m is not None:
        return _from_matrix(con, m, q, allowed, params, limit, units)
    where = f"AND u.unit_id IN ({allowed})" if allowed else ""
    return [
        (int(u), float(s))
        for u, s in con.execute(
            f"""SELECT u.unit_id, max(list_inner_product(v.vector, ?::FLOAT[])) AS s
                FROM vectors v JOIN units u USING (unit_hash)
                WHERE v.model = ? AND v.version = ? AND len(v.vector) > 0 {where}
                GROUP BY u.unit_id ORDER BY s DESC, u.unit_id LIMIT {int(limit)}""",
            [q.tolist(), enc.name, enc.version, *params],
        ).fetchall()
    ]


def _top(ids: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The ``n`` best, by score and then unit id, as the SQL orders them."""
    if n <= 0:
        return []
    if len(ids) > n:
        cut = np.argpartition(-scores, n - 1)[:n]
        floor = scores[cut].min()
        cut = np.flatnonzero(scores >= floor)  # every row tied at the cut competes
        ids, scores = ids[cut], scores[cut]
    order = np.lexsort((ids, -scores))[:n]
    return [(int(ids[i]), float(scores[i])) for i in order]


def _from_matrix(
    con: duckdb.DuckDBPyConnection,
    m: matrix.Matrix,
    q: np.ndarray,
    allowed: str | None,
    params: Sequence,
    limit: int,
    units: np.ndarray | None = None,
) -> list[tuple[int, float]]:
    if units is None and allowed:
        units = np.array(
            sorted(u for (u,) in con.execute(allowed, list(params)).fetchall()), dtype=np.int64
        )
    if units is not None:  # the allowed units: each stored now, so none is dropped below
        ids, scores = m.scores(q, units)
        return _top(ids, scores, limit)
    ids, scores = m.scores(q)
    want = limit
    while True:  # rows of units removed since the export are dropped
        top = _top(ids, scores, want)
        alive = {
            u
            for (u,) in con.execute(
                "SELECT unit_id FROM units WHERE list_contains(?, unit_id)", [[u for u, _ in top]]
            ).fetchall()
        }
        found = [t for t in top if t[0] in alive]
        if len(found) >= limit or want >= len(ids):
            return found[:limit]
        want *= 4
