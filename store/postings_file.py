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
from kbx.store.db import set_meta
from kbx.store.postings import GENERATION, REWRITTEN, mapped_path
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
        return lookup(self.term_prefix, self.term_off, self.term_blob, self.term_id, forms)

    def of(self, term_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(units, tf, htf)`` of one term (empty for a term the file does not know)."""
        if not 0 <= term_id < len(self.start) - 1:
            return self.unit[:0], self.tf[:0], self.htf[:0]
        a, b = int(self.start[term_id]), int(self.start[term_id + 1])
        return self.unit[a:b], self.tf[a:b], self.htf[a:b]


def lookup(
    prefix: np.ndarray, off: np.ndarray, blob: np.ndarray, term_id: np.ndarray, forms: list[str]
) -> dict[str, int]:
    """The ids of those ``forms`` a dictionary of terms in byte order holds."""
    forms = list(dict.fromkeys(forms))
    if not forms or not len(term_id):
        return {}
    keys = prefixes(*arrays.Strings.pack(forms))
    lo = np.searchsorted(prefix, keys, side="left")
    hi = np.searchsorted(prefix, keys, side="right")
    terms = arrays.Strings(off, blob)
    out = {}
    for form, a, b in zip(forms, lo.tolist(), hi.tolist(), strict=True):
        i = terms.find(form, a, b) if a < b else None
        if i is not None:
            out[form] = int(term_id[i])
    return out


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


def load_base(db: Path, gen: int) -> PostingsFile | None:
    """The base file alone, mapped, if it is of generation ``gen``; else None."""
    found = arrays.load_as(PostingsFile, mapped_path(db), gen)  # another layout: None
    if found is None:
        return None
    return replace(found, n=int(found.n[0]), avglen=float(found.avglen[0]))


def load(db: Path, gen: int) -> PostingsFile | Merged | None:
    """The postings of generation ``gen``: the base file when it is of ``gen``, else the
    base and the delta when the delta is of ``gen`` and extends that base; else None."""
    base = load_base(db, gen)
    if base is not None:
        return base
    delta = arrays.load_as(PostingsDelta, delta_path(db), gen)
    if delta is None:
        return None
    base = load_base(db, int(delta.base_gen[0]))
    return None if base is None else Merged(base, delta)


MAPS = arrays.Maps(load)


def cached(db: Path, gen: int) -> PostingsFile | Merged | None:
    """``load``, kept for the process while the generation holds: a server maps once."""
    return MAPS.get(db, gen)


def refresh(con: duckdb.DuckDBPyConnection, db: Path) -> bool:
    """Make the postings of the table's generation mappable unless they are: a delta over
    the base where one covers what changed (``export_delta``), else a new base; whether
    it wrote a file."""
    gen = arrays.generation(con, GENERATION)
    if cached(db, gen) is not None:  # mapped here: a server's searches find it so
        if arrays.file_generation(mapped_path(db)) == gen != arrays.generation(con, BASE):
            set_meta(con, BASE, str(gen))  # the base of this generation is this index's
        return False
    if export_delta(con, db) is None:
        compact(con, db)
    if arrays.WARM:
        cached(db, gen)
    return True


def compact(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    """Write the base file whole, of the table's generation, and drop the delta."""
    set_meta(con, BASE, str(arrays.file_generation(export(con, db))))
    delta_path(db).unlink(missing_ok=True)


# --- the delta -------------------------------------------------------------------------------
#
# What changed since the base, written after each write in place of the whole file: the
# postings of the units added since (their ids past every id the base knew, since unit ids
# come from a sequence), the base's units deleted since (tombstones), the terms added since
# (ids past the base's), and the statistics over the table now. A unit's postings change
# in place only when ``rebuild_postings`` analyzes it again: that records its generation
# (``REWRITTEN``), and a delta never spans one. The index notes the base it exported
# (``BASE``), so a delta never extends a file its predecessor left beside it. A reader
# takes base and delta only when the delta is of the table's generation and names the
# base's; else SQL, as for a stale base.

DELTA_SHARE = 0.05  # a delta past this share of the base's postings or units: a new base
BASE = "postings_base"  # kbx_meta key: the generation of the base file this index exported


def delta_path(db: Path) -> Path:
    return db.with_name(f"{db.name}.postings.delta.npy")


@dataclass(frozen=True)
class PostingsDelta:
    """The postings changed since a base, in the order the delta file holds them."""

    base_gen: np.ndarray  # (1,) the base's generation
    n: np.ndarray  # (1,) over the units table now
    avglen: np.ndarray  # (1,)
    length: np.ndarray  # per unit id from len(base.length): the units added since
    dead: np.ndarray  # the base's units deleted since, sorted
    terms: np.ndarray  # the term ids holding postings of added units, sorted
    start: np.ndarray  # per one of ``terms``: its rows of unit, tf and htf
    unit: np.ndarray
    tf: np.ndarray
    htf: np.ndarray
    term_prefix: np.ndarray  # the terms added since, in byte order, as the base holds its own
    term_off: np.ndarray
    term_blob: np.ndarray
    term_id: np.ndarray


class Merged:
    """A base and its delta read as one ``PostingsFile``: ``n``, ``avglen``, ``length``,
    ``ids`` and ``of`` as the table holds them now. A term's postings are the base's, less
    the deleted units, then the delta's: each sorted by unit, the delta's ids past the
    base's, so the two together are sorted too."""

    def __init__(self, base: PostingsFile, delta: PostingsDelta):
        self.base, self.delta = base, delta
        self.n, self.avglen = int(delta.n[0]), float(delta.avglen[0])
        self.length = np.concatenate([base.length, delta.length])
        self.alive = None
        if len(delta.dead):
            self.alive = np.ones(len(base.length), dtype=bool)
            self.alive[delta.dead] = False

    def ids(self, forms: list[str]) -> dict[str, int]:
        """The ids of those ``forms`` the table holds now: a term added since the base is
        the delta's (one deleted and added again has a new id), and a base's term whose
        postings all went is not held (the table deleted it)."""
        d = self.delta
        out = lookup(d.term_prefix, d.term_off, d.term_blob, d.term_id, forms)
        rest = [f for f in forms if f not in out]
        for form, t in self.base.ids(rest).items():
            if self.alive is None or len(self.of(t)[0]):
                out[form] = t
        return out

    def of(self, term_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(units, tf, htf)`` of one term as the table holds them now."""
        units, tf, htf = self.base.of(term_id)
        if self.alive is not None and len(units):
            keep = self.alive[units]
            units, tf, htf = units[keep], tf[keep], htf[keep]
        d = self.delta
        i = int(np.searchsorted(d.terms, term_id))
        if i < len(d.terms) and int(d.terms[i]) == term_id:
            a, b = int(d.start[i]), int(d.start[i + 1])
            if not len(units):
                return d.unit[a:b], d.tf[a:b], d.htf[a:b]
            units = np.concatenate([units, d.unit[a:b]])
            tf = np.concatenate([tf, d.tf[a:b]])
            htf = np.concatenate([htf, d.htf[a:b]])
        return units, tf, htf


def _narrow(column: np.ndarray) -> np.ndarray:
    """A column of counts in the smallest type that holds it, as ``export`` stores them."""
    return np.asarray(column, dtype=np.min_scalar_type(int(column.max()) if len(column) else 0))


def export_delta(con: duckdb.DuckDBPyConnection, db: Path) -> Path | None:
    """Write the delta of the table's generation over the base file, from one snapshot;
    None, writing nothing, where there is no base to extend, postings were rewritten in
    place since it, or the delta would pass ``DELTA_SHARE`` of it (then a new base)."""
    bgen = arrays.file_generation(mapped_path(db))
    base = None if bgen is None else load_base(db, bgen)
    if base is None:
        return None
    first = len(base.length)  # the ids the base knew: [0, first)
    with transaction(con):
        gen = arrays.generation(con, GENERATION)
        if arrays.generation(con, BASE) != bgen or arrays.generation(con, REWRITTEN) > bgen:
            return None
        n, avglen = con.execute(
            "SELECT count(*), coalesce(avg(n_terms), 0)::DOUBLE FROM units"
        ).fetchone()
        ids = con.execute("SELECT unit_id, n_terms FROM units").fetchnumpy()
        uid = np.asarray(ids["unit_id"], dtype=np.int64)
        now = np.zeros(first, dtype=bool)
        now[uid[uid < first]] = True
        dead = np.flatnonzero((base.length > 0) & ~now).astype(np.int32)
        new = uid >= first
        if len(dead) > DELTA_SHARE * max(n, 1) or new.sum() > DELTA_SHARE * max(n, 1):
            return None
        length = np.zeros(int(uid[new].max()) + 1 - first if new.any() else 0, dtype=np.int32)
        length[uid[new] - first] = np.asarray(ids["n_terms"])[new]
        rows = con.execute(  # one scan of the postings' unit ids: about 0.15 s at 36M
            "SELECT term_id, unit_id, tf, htf FROM postings WHERE unit_id >= ? "
            "ORDER BY term_id, unit_id",
            [first],
        ).fetchnumpy()
        if len(rows["unit_id"]) > DELTA_SHARE * max(len(base.unit), 1):
            return None
        terms = con.execute(
            "SELECT term, term_id FROM terms WHERE term_id > ? ORDER BY term",
            [len(base.start) - 2],  # the base's last term id
        ).fetchnumpy()
    term_ids = np.asarray(rows["term_id"], dtype=np.int64)
    held, counts = np.unique(term_ids, return_counts=True)
    start = np.zeros(len(held) + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    off, blob = arrays.Strings.pack(list(terms["term"]))
    arrays.save(
        delta_path(db),
        gen,
        [
            np.array([bgen], dtype=np.int64),
            np.array([n], dtype=np.int64),
            np.array([avglen], dtype=np.float64),
            length,
            dead,
            held,
            start,
            np.asarray(rows["unit_id"], dtype=np.int32),
            _narrow(rows["tf"]),
            _narrow(rows["htf"]),
            prefixes(off, blob),
            off,
            blob,
            np.asarray(terms["term_id"], dtype=np.int64),
        ],
    )
    return delta_path(db)
