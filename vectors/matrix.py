"""The vectors as one memory-mapped matrix beside the index: what makes the exact scan
fast. DuckDB's ``list_inner_product`` reads 20k vectors in about 250 ms on two busy cores
(docs/BENCHMARKS.md), numpy's matrix product in a few; a cold process maps the file in
no time and reads only the pages it needs.

The table stays the truth: every write of vectors bumps a generation number in
``kbx_meta`` in its own transaction, and the matrix records the generation it was
exported at. A reader uses the matrix only when the two agree, else the SQL scan, so a
stale or missing file (a killed pass, a copied index) is slower, never wrong. A unit
removed since (kbx index does not touch vectors) may still have a row: the ranking
drops rows whose unit is gone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

GENERATION = "vectors_generation"  # kbx_meta key, bumped by every write of vectors


def bump(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the caller's transaction: the vectors changed."""
    con.execute(
        "INSERT INTO kbx_meta VALUES (?, '1') ON CONFLICT (key) "
        "DO UPDATE SET value = (value::BIGINT + 1)::VARCHAR",
        [GENERATION],
    )


def generation(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [GENERATION]).fetchone()
    return int(row[0]) if row else 0


def _path(db: Path, model: str, version: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model)
    return db.with_name(f"{db.name}.vectors-{safe}-{version}.npy")


@dataclass
class Matrix:
    """Unit ids (sorted) and their vectors, row for row, as of one generation."""

    ids: np.ndarray
    vectors: np.ndarray

    def scores(self, q: np.ndarray, allowed: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """(unit ids, cosines) of every row, or of the rows of ``allowed`` unit ids."""
        if not len(self.ids) or (allowed is not None and not len(allowed)):
            return self.ids[:0], np.zeros(0, dtype=np.float32)
        if allowed is None:
            return self.ids, self.vectors @ q
        at = np.minimum(np.searchsorted(self.ids, allowed), len(self.ids) - 1)
        at = np.unique(at[self.ids[at] == allowed])
        return self.ids[at], self.vectors[at] @ q


def export(con: duckdb.DuckDBPyConnection, db: Path, model: str, version: str) -> Path:
    """Write the matrix of this model's vectors at the current generation (a temporary
    file renamed into place, so a reader never maps half a file); older ones go."""
    gen = generation(con)
    rows = con.execute(
        """SELECT u.unit_id, v.vector FROM vectors v JOIN units u USING (unit_hash)
           WHERE v.model = ? AND v.version = ? ORDER BY u.unit_id""",
        [model, version],
    ).fetchnumpy()
    ids = np.asarray(rows["unit_id"], dtype=np.int64)
    vecs = (
        np.stack(rows["vector"]).astype(np.float32)
        if len(ids)
        else np.zeros((0, 0), dtype=np.float32)
    )
    path = _path(db, model, version)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.array([gen, vecs.shape[1] if vecs.ndim == 2 else 0], dtype=np.int64))
        np.save(f, ids)
        np.save(f, vecs)
    os.replace(tmp, path)
    for old in db.parent.glob(f"{db.name}.vectors-*.npy"):
        if old != path:
            old.unlink(missing_ok=True)
    return path


def load(con: duckdb.DuckDBPyConnection, db: Path, model: str, version: str) -> Matrix | None:
    """The matrix, memory-mapped, if it is of the table's current generation; else None."""
    path = _path(db, model, version)
    try:
        with open(path, "rb") as f:
            head = np.load(f)
            if int(head[0]) != generation(con):
                return None
            ids = np.load(f)
            offset = f.tell()
        vectors = _mapped(path, offset)
    except (OSError, ValueError, IndexError):
        return None
    return Matrix(ids, vectors)


def _mapped(path: Path, offset: int) -> np.ndarray:
    """The third array of the file, mapped rather than read."""
    with open(path, "rb") as f:
        f.seek(offset)
        major, _ = np.lib.format.read_magic(f)
        read = (
            np.lib.format.read_array_header_1_0
            if major == 1
            else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read(f)
        start = f.tell()
    if not shape[0]:
        return np.zeros(shape, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=start, shape=shape, order="C")
