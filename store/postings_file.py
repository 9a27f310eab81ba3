"""The postings as memory-mapped arrays beside the index: what ranks a query in a
millisecond where the ranking statement costs DuckDB's planning and a scan of each
term's postings (see store/arrays.py for the generation that keeps the file honest).

Laid out as compressed sparse rows by term: the postings of term ``t`` are rows
``start[t]:start[t + 1]`` of ``unit``, ``tf`` and ``htf``, sorted by unit; ``length[u]``
is unit ``u``'s BM25 length (0 where no unit has that id). ``n`` and ``avglen`` are
over the units table, as the SQL ranker computes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from kbx.store import arrays
from kbx.store.postings import GENERATION, mapped_path
from kbx.store.transaction import transaction


@dataclass(frozen=True)
class PostingsFile:
    """The postings of one generation, term by term."""

    n: int
    avglen: float
    start: np.ndarray
    unit: np.ndarray
    tf: np.ndarray
    htf: np.ndarray
    length: np.ndarray

    def of(self, term_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(units, tf, htf)`` of one term (empty for a term the file does not know)."""
        if not 0 <= term_id < len(self.start) - 1:
            return self.unit[:0], self.tf[:0], self.htf[:0]
        a, b = int(self.start[term_id]), int(self.start[term_id + 1])
        return self.unit[a:b], self.tf[a:b], self.htf[a:b]


def _small(values: np.ndarray) -> np.ndarray:
    """``values`` (non-negative integers) in the smallest unsigned type that holds them."""
    top = int(values.max()) if len(values) else 0
    return values.astype(np.min_scalar_type(top))


def export(con: duckdb.DuckDBPyConnection, db: Path) -> Path:
    """Write the file of the current generation, in one read of the table (its own
    snapshot, so the generation and the rows agree)."""
    with transaction(con):  # a read: one snapshot for the generation and every row
        gen = arrays.generation(con, GENERATION)
        n, avglen = con.execute(
            "SELECT count(*), coalesce(avg(n_terms), 0)::DOUBLE FROM units"
        ).fetchone()
        lengths = con.execute("SELECT unit_id, n_terms FROM units").fetchnumpy()
        rows = con.execute(
            "SELECT term_id, unit_id, tf, htf FROM postings ORDER BY term_id, unit_id"
        ).fetchnumpy()
        top = con.execute("SELECT coalesce(max(term_id), 0) FROM terms").fetchone()[0]
    ids = np.asarray(lengths["unit_id"], dtype=np.int64)
    length = np.zeros(int(ids.max()) + 1 if len(ids) else 1, dtype=np.int32)
    length[ids] = lengths["n_terms"]
    terms = np.asarray(rows["term_id"], dtype=np.int64)
    start = np.searchsorted(terms, np.arange(int(top) + 2)).astype(np.int64)
    path = mapped_path(db)
    arrays.save(
        path,
        gen,
        [
            np.array([n], dtype=np.int64),
            np.array([avglen], dtype=np.float64),
            start,
            np.asarray(rows["unit_id"], dtype=np.int32),
            _small(np.asarray(rows["tf"])),
            _small(np.asarray(rows["htf"])),
            length,
        ],
    )
    return path


def load(db: Path, gen: int) -> PostingsFile | None:
    """The file, mapped, if it is of generation ``gen``; else None."""
    found = arrays.load(mapped_path(db), gen)
    if found is None:
        return None
    n, avglen, *rest = found
    return PostingsFile(int(n[0]), float(avglen[0]), *rest)


_CACHE: dict[Path, tuple[int, PostingsFile]] = {}  # a process's maps, one per index


def cached(db: Path, gen: int) -> PostingsFile | None:
    """``load``, kept for the process while the generation holds: a server maps once."""
    hit = _CACHE.get(db)
    if hit is not None and hit[0] == gen:
        return hit[1]
    pf = load(db, gen)
    if pf is None:
        _CACHE.pop(db, None)
    else:
        _CACHE[db] = (gen, pf)
    return pf


def refresh(con: duckdb.DuckDBPyConnection, db: Path) -> bool:
    """Export the file if it is not of the table's generation; whether it did."""
    if load(db, arrays.generation(con, GENERATION)) is not None:
        return False
    export(con, db)
    return True
