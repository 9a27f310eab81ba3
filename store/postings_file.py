"""The postings as memory-mapped arrays beside the index: what ranks a query in a
millisecond where the ranking statement costs DuckDB's planning and a scan of each
term's postings (see store/arrays.py for the generation that keeps the file honest).

Laid out as compressed sparse rows by term: the postings of term ``t`` are rows
``start[t]:start[t + 1]`` of ``unit``, ``tf`` and ``htf``, sorted by unit; ``length[u]``
is unit ``u``'s BM25 length (0 where no unit has that id). ``n`` and ``avglen`` are
over the units table, as the SQL ranker computes them. The terms themselves, sorted in
byte order with their ids, find a query's forms without a statement (about a millisecond
each at any size): the first eight bytes of each as one big-endian number narrow the
search for all of them in one ``searchsorted``, the bytes settle it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    term_prefix: np.ndarray  # per term in byte order: its first 8 bytes, big-endian
    term_off: np.ndarray
    term_blob: np.ndarray
    term_id: np.ndarray

    def ids(self, forms: list[str]) -> dict[str, int]:
        """The ids of those ``forms`` the index holds, as ``term_ids`` reads them."""
        import numpy as np

        forms = list(dict.fromkeys(forms))
        if not forms:
            return {}
        keys = prefixes(*arrays.Strings.pack(forms))
        lo = np.searchsorted(self.term_prefix, keys, side="left")
        hi = np.searchsorted(self.term_prefix, keys, side="right")
        terms = arrays.Strings(self.term_off, self.term_blob)
        out = {}
        for form, a, b in zip(forms, lo.tolist(), hi.tolist(), strict=True):
            i = terms.find(form, a, b) if a < b else None
            if i is not None:
                out[form] = int(self.term_id[i])
        return out

    def of(self, term_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(units, tf, htf)`` of one term (empty for a term the file does not know)."""
        if not 0 <= term_id < len(self.start) - 1:
            return self.unit[:0], self.tf[:0], self.htf[:0]
        a, b = int(self.start[term_id]), int(self.start[term_id + 1])
        return self.unit[a:b], self.tf[a:b], self.htf[a:b]


def export(con: duckdb.DuckDBPyConnection, db: Path) -> Path:
    """Write the file of the current generation from one snapshot of the table (its own
    read transaction, so the generation and the rows agree), the postings read a range
    of terms at a time into the mapped file: the writer's memory stays that of a range."""
    path = mapped_path(db)
    with transaction(con):
        gen = arrays.generation(con, GENERATION)
        n, avglen, top_tf, top_htf = con.execute(
            """SELECT (SELECT count(*) FROM units),
                      (SELECT coalesce(avg(n_terms), 0)::DOUBLE FROM units),
                      (SELECT coalesce(max(tf), 0) FROM postings),
                      (SELECT coalesce(max(htf), 0) FROM postings)"""
        ).fetchone()
        lengths = con.execute("SELECT unit_id, n_terms FROM units").fetchnumpy()
        dfs = con.execute(
            "SELECT term_id, count(*) AS df FROM postings GROUP BY term_id"
        ).fetchnumpy()
        top = con.execute("SELECT coalesce(max(term_id), 0) FROM terms").fetchone()[0]
        terms = con.execute("SELECT term, term_id FROM terms ORDER BY term").fetchnumpy()
        term_off, term_blob = arrays.Strings.pack(list(terms["term"]))
        ids = np.asarray(lengths["unit_id"], dtype=np.int64)
        length = np.zeros(int(ids.max()) + 1 if len(ids) else 1, dtype=np.int32)
        length[ids] = lengths["n_terms"]
        df = np.zeros(int(top) + 1, dtype=np.int64)
        df[np.asarray(dfs["term_id"], dtype=np.int64)] = dfs["df"]
        start = np.zeros(int(top) + 2, dtype=np.int64)
        np.cumsum(df, out=start[1:])
        total = int(start[-1])
        tmp, maps = arrays.create(
            path,
            gen,
            [
                ((1,), np.int64),
                ((1,), np.float64),
                (start.shape, np.int64),
                ((total,), np.int32),
                ((total,), np.min_scalar_type(int(top_tf))),
                ((total,), np.min_scalar_type(int(top_htf))),
                (length.shape, np.int32),
                ((len(term_off) - 1,), np.uint64),
                (term_off.shape, np.int64),
                (term_blob.shape, np.uint8),
                ((len(term_off) - 1,), np.int64),
            ],
        )
        maps[0][0], maps[1][0] = n, avglen
        maps[2][:], maps[6][:] = start, length
        maps[7][:], maps[8][:], maps[9][:] = prefixes(term_off, term_blob), term_off, term_blob
        maps[10][:] = terms["term_id"]
        t = 0
        while t <= top:  # terms [t, u): about RANGE_ROWS postings, at least one term
            u = max(t + 1, int(np.searchsorted(start, start[t] + RANGE_ROWS, side="right")) - 1)
            u = min(u, int(top) + 1)
            rows = con.execute(
                "SELECT unit_id, tf, htf FROM postings WHERE term_id >= ? AND term_id < ? "
                "ORDER BY term_id, unit_id",
                [t, u],
            ).fetchnumpy()
            a, b = int(start[t]), int(start[u])
            maps[3][a:b], maps[4][a:b], maps[5][a:b] = rows["unit_id"], rows["tf"], rows["htf"]
            t = u
    arrays.publish(tmp, path, maps)
    return path


RANGE_ROWS = 2_000_000  # postings read at a time by ``export``


def prefixes(offsets: np.ndarray, blob: np.ndarray) -> np.ndarray:
    """Each string of a packed column as its first 8 bytes read as a big-endian number,
    zeros after a shorter one: in the strings' byte order, never decreasing."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    head = np.zeros((n, 8), dtype=np.uint8)
    for k in range(8):
        has = np.flatnonzero(lengths > k)
        head[has, k] = blob[offsets[has] + k]
    return head.view(">u8").ravel().astype(np.uint64)


def load(db: Path, gen: int) -> PostingsFile | None:
    """The file, mapped, if it is of generation ``gen``; else None."""
    found = arrays.load_as(PostingsFile, mapped_path(db), gen)  # another layout: None
    if found is None:
        return None
    return replace(found, n=int(found.n[0]), avglen=float(found.avglen[0]))


MAPS = arrays.Maps(load)


def cached(db: Path, gen: int) -> PostingsFile | None:
    """``load``, kept for the process while the generation holds: a server maps once."""
    return MAPS.get(db, gen)


def refresh(con: duckdb.DuckDBPyConnection, db: Path) -> bool:
    """Export the file if it is not of the table's generation; whether it did."""
    return arrays.refresh(con, db, GENERATION, load, export)
