"""The dense ranking: exact cosine of the query's vector with each allowed unit's.

Exact, not approximate: a folder's units fit one scan (docs/BENCHMARKS.md times it), and
the filters narrow the scan itself, so a filtered query ranks only what the filter allows,
exactly as BM25 does, with no candidate list cut short before the filter.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np

from kbx.vectors.model import Encoder


def dense_rank(
    con: duckdb.DuckDBPyConnection,
    enc: Encoder,
    query: str | np.ndarray,
    allowed: str | None = None,
    params: Sequence = (),
    limit: int = 100,
) -> list[tuple[int, float]]:
    """``(unit_id, cosine)`` of the ``limit`` units nearest ``query`` (text, or its vector),
    best first, ties by unit id. ``allowed`` is SQL of the units to rank from (one column,
    ``unit_id``, with ``params``: what ``DocFilter.units()`` gives); None ranks them all.
    Only vectors of ``enc``'s model and version count: a unit without one is not ranked."""
    q = enc.query(query) if isinstance(query, str) else np.asarray(query, dtype=np.float32)
    where = f"AND u.unit_id IN ({allowed})" if allowed else ""
    return [
        (int(u), float(s))
        for u, s in con.execute(
            f"""SELECT u.unit_id, list_inner_product(v.vector, ?::FLOAT[]) AS s
                FROM vectors v JOIN units u USING (unit_hash)
                WHERE v.model = ? AND v.version = ? {where}
                ORDER BY s DESC, u.unit_id LIMIT {int(limit)}""",
            [q.tolist(), enc.name, enc.version, *params],
        ).fetchall()
    ]
