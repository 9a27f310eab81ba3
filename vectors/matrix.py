"""The vectors as one memory-mapped matrix beside the index: what makes the exact scan
fast. DuckDB's ``list_inner_product`` reads 20k vectors in about 250 ms on two busy cores
(docs/BENCHMARKS.md), numpy's matrix product in a few; a cold process maps the file in
no time and reads only the pages it needs.

The table stays the truth: every write of vectors bumps a generation number in
``kbx_meta`` in its own transaction, and the matrix records the generation it was
exported at. A reader uses the matrix only when the two agree, else the SQL scan, so a
stale or missing file (a killed pass, a copied index) is slower, never wrong. One write
is apart: the later windows of units that have their first (run.py's second stage) bump
a generation of their own (``LATER``), so the matrix of the first stage stays in use
while they come, each of its units ranking by the windows it held at the export, and the
pass exports it again as they come and at its end (``holds_all``). A unit has a row per
window of the model; the rows' unit ids are the map back to units. A unit removed since
(kbx index does not touch vectors) may still have a row: the ranking drops rows whose
unit is gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from kbx.store import arrays
from kbx.store.db import VECTORS as GENERATION

LATER = "vectors_later_generation"  # kbx_meta key: bumped by adding later windows alone


def bump(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the caller's transaction: the vectors changed."""
    arrays.bump(con, GENERATION)


def bump_later(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the caller's transaction: units that had their first window got later ones,
    and nothing else changed, so the matrix is still one a search may use."""
    arrays.bump(con, LATER)


def generation(con: duckdb.DuckDBPyConnection) -> int:
    return arrays.generation(con, GENERATION)


def _path(db: Path, model: str, version: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model)
    return db.with_name(f"{db.name}.vectors-{safe}-{version}.npy")


@dataclass
class Matrix:
    """Row by row, the unit id (sorted, so a unit's windows are consecutive rows: the map
    from a row to its unit) and the vector, as of one generation."""

    ids: np.ndarray
    vectors: np.ndarray

    def scores(self, q: np.ndarray, allowed: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """(unit ids, cosine of each unit's best window) of every unit, or of the units of
        ``allowed``; ids ascending."""
        if not len(self.ids) or (allowed is not None and not len(allowed)):
            return self.ids[:0], np.zeros(0, dtype=np.float32)
        if allowed is None:
            return best_per_unit(self.ids, self.vectors @ q)
        allowed = np.unique(allowed)
        lo = np.searchsorted(self.ids, allowed, "left")
        n = np.searchsorted(self.ids, allowed, "right") - lo
        lo, n = lo[n > 0], n[n > 0]
        rows = np.repeat(lo - (np.cumsum(n) - n), n) + np.arange(n.sum())  # the units' rows
        return best_per_unit(self.ids[rows], self.vectors[rows] @ q)


def best_per_unit(ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's best score, for rows sorted by unit id: a unit ranks by its best window."""
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return ids[starts], np.maximum.reduceat(scores, starts)


def export(con: duckdb.DuckDBPyConnection, db: Path, model: str, version: str) -> Path:
    """Write the matrix of this model's vectors at the current generation (a temporary
    file renamed into place, so a reader never maps half a file); older ones go."""
    gen, later = generation(con), arrays.generation(con, LATER)
    rows = con.execute(
        """SELECT u.unit_id, v.vector FROM vectors v JOIN units u USING (unit_hash)
           WHERE v.model = ? AND v.version = ? AND len(v.vector) > 0 ORDER BY u.unit_id""",
        [model, version],
    ).fetchnumpy()
    ids = np.asarray(rows["unit_id"], dtype=np.int64)
    vecs = (
        np.stack(rows["vector"]).astype(np.float32)
        if len(ids)
        else np.zeros((0, 0), dtype=np.float32)
    )
    path = _path(db, model, version)
    arrays.save(path, gen, [ids, vecs, np.array([later], dtype=np.int64)])
    for old in db.parent.glob(f"{db.name}.vectors-*.npy"):
        if old != path:
            old.unlink(missing_ok=True)
    return path


def load(con: duckdb.DuckDBPyConnection, db: Path, model: str, version: str) -> Matrix | None:
    """The matrix, memory-mapped, if it is of the table's current generation; else None."""
    found = arrays.load(_path(db, model, version), generation(con))
    return Matrix(np.asarray(found[0]), found[1]) if found else None


def holds_all(con: duckdb.DuckDBPyConnection, db: Path, model: str, version: str) -> bool:
    """Whether the matrix is current and holds every window embedded, the later ones too."""
    found = arrays.load(_path(db, model, version), generation(con))
    return (
        found is not None and len(found) == 3 and int(found[2][0]) == arrays.generation(con, LATER)
    )
