"""What changed in the passages since the mapped base file, written after each write in
place of the whole file (store/passages_file.py), and the two read as one.

A write changes the passages of the documents it writes: their rows, their placements,
the units they place or placed. Each write logs those documents in ``kbx_meta`` in its own
transaction (``passages_file.touched``), as a step from the old generation to the new, so
the steps from the base's generation to the table's name every document changed since;
where they do not chain (a write that named none, a bump with no step, a log that grew
past its size), there is no delta and the export writes a new base. The delta holds those
documents' rows and, whole, every unit they place or placed (its text, heading, hash, kind
and all its placements), with the units deleted since as tombstones. A reader takes base
and delta only when the delta is of the table's generation and names the base's; else SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import duckdb
import numpy as np

from kbx.store import arrays
from kbx.store.passages_file import (
    BASE,
    GENERATION,
    LOG,
    PassagesFile,
    delta_path,
    mapped_path,
    placement_row,
    placement_rows,
    unit_record,
    unit_text,
)
from kbx.store.transaction import transaction

DELTA_SHARE = 0.05  # a delta of more than this share of the base's units: a new base


@dataclass(frozen=True)
class PassagesDelta:
    """The passages changed since a base, per unit of ``units`` (sorted) and per document
    of ``docs`` (sorted), in the order the delta file holds its arrays."""

    base_gen: np.ndarray  # (1,) the base's generation
    units: np.ndarray  # the units it holds whole; kind -1: deleted since the base
    text_start: np.ndarray
    text: np.ndarray
    head_start: np.ndarray
    head: np.ndarray
    unit_hash: np.ndarray
    kind: np.ndarray
    kind_off: np.ndarray
    kind_blob: np.ndarray
    place_start: np.ndarray
    pl_doc: np.ndarray
    pl_ordinal: np.ndarray
    pl_start: np.ndarray
    pl_end: np.ndarray
    pl_page: np.ndarray
    off_start: np.ndarray
    off: np.ndarray
    docs: np.ndarray  # the documents changed since the base; an empty path: deleted
    path_off: np.ndarray
    path_blob: np.ndarray
    sha: np.ndarray
    size: np.ndarray
    mtime: np.ndarray


class Merged:
    """A base and its delta read as one ``PassagesFile``: the per-row and per-document
    arrays merged in memory (a few MB at 200,000 units), the text and offset maps read
    from whichever file holds the unit or row."""

    def __init__(self, base: PassagesFile, delta: PassagesDelta):
        self.base, self.delta = base, delta
        first = len(base.kind)
        top = max(first, int(delta.units[-1]) + 1 if len(delta.units) else 0)
        self.slot = np.full(top, -1, dtype=np.int64)
        self.slot[delta.units] = np.arange(len(delta.units))
        # placements: the base's rows of units the delta does not hold, then the delta's
        base_units = base.row_units
        keep = np.flatnonzero(self.slot[base_units] < 0)
        counts = np.diff(delta.place_start)
        ours = np.repeat(delta.units, counts)
        units = np.concatenate([base_units[keep], ours])
        src = np.concatenate([keep, -1 - np.arange(len(ours), dtype=np.int64)])
        order = np.argsort(units, kind="stable")  # each unit's rows from one file, in order
        self.row_units, self.src = units[order], src[order]
        self.place_start = np.zeros(top + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.row_units, minlength=top), out=self.place_start[1:])
        for name in ("pl_doc", "pl_ordinal", "pl_start", "pl_end", "pl_page"):
            both = np.concatenate([getattr(base, name)[keep], getattr(delta, name)])
            setattr(self, name, both[order])
        n_docs = max(len(base.size), int(delta.docs[-1]) + 1 if len(delta.docs) else 0)
        self.doc_slot = np.full(n_docs, -1, dtype=np.int64)
        self.doc_slot[delta.docs] = np.arange(len(delta.docs))
        for name in ("sha", "size", "mtime"):
            column = np.zeros(n_docs, dtype=getattr(base, name).dtype)
            column[: len(base.size)] = getattr(base, name)
            column[delta.docs] = getattr(delta, name)
            setattr(self, name, column)

    def _slot(self, u: int) -> int:
        return int(self.slot[u]) if 0 <= u < len(self.slot) else -1

    def unit(self, u: int) -> tuple[str, list[str], str, str] | None:
        """A unit's text, heading path, hash and kind; None for an id the table lacks."""
        i = self._slot(u)
        if i < 0:
            return self.base.unit(u)
        return None if self.delta.kind[i] < 0 else unit_record(self.delta, i)

    def text_of(self, u: int) -> str:
        i = self._slot(u)
        if i < 0:
            return self.base.text_of(u)
        return unit_text(self.delta, i)

    def placements(self, u: int) -> range:
        return placement_rows(self.place_start, u)

    @cached_property
    def paths(self) -> _Paths:
        return _Paths(self)

    def row(self, r: int) -> tuple:
        """A placement as ``PassagesFile.row`` gives it, its offsets from the file that
        holds them."""
        s = int(self.src[r])
        f, at = (self.base, s) if s >= 0 else (self.delta, -1 - s)
        return placement_row(self, r, bytes(f.off[f.off_start[at] : f.off_start[at + 1]]))


class _Paths:
    """Each document id's path, from the delta where it holds the document."""

    def __init__(self, merged: Merged):
        self.merged = merged
        self.base = merged.base.paths
        d = merged.delta
        self.ours = arrays.Strings(d.path_off, d.path_blob)

    def __getitem__(self, d: int) -> str:
        i = int(self.merged.doc_slot[d])
        return self.base[d] if i < 0 else self.ours[i]


def changed(log: str, since: int, gen: int) -> set[int] | None:
    """The documents the log's steps changed from generation ``since`` to ``gen``; None
    where the steps do not chain from one to the other or one did not say."""
    docs: set[int] = set()
    at = since
    for step in log.split(";"):
        if not step:
            continue
        span, _, said = step.partition(":")
        old, _, new = span.partition(">")
        if int(new) <= since:
            continue  # before the base
        if int(old) != at or said == "*":
            return None
        docs.update(int(d) for d in said.split(",") if d)
        at = int(new)
    return docs if at == gen else None


def export_delta(con: duckdb.DuckDBPyConnection, db: Path) -> Path | None:
    """Write the delta of the tables' generation over the base file, from one snapshot;
    None, writing nothing, where there is no base this index exported, the log does not
    chain from it, or the delta would pass ``DELTA_SHARE`` of it (then a new base)."""
    bgen = arrays.file_generation(mapped_path(db))
    base = None if bgen is None else arrays.load_as(PassagesFile, mapped_path(db), bgen)
    if base is None:
        return None
    first = len(base.kind)
    with transaction(con):
        gen = arrays.generation(con, GENERATION)
        if arrays.generation(con, BASE) != bgen:
            return None
        row = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [LOG]).fetchone()
        docs = changed(row[0] if row else "", bgen, gen)
        if docs is None:
            return None
        doc_list = sorted(docs)
        uid = con.execute("SELECT unit_id FROM units").fetchnumpy()["unit_id"]
        uid = np.asarray(uid, dtype=np.int64)
        now = np.zeros(first, dtype=bool)
        now[uid[uid < first]] = True
        dead = np.flatnonzero((base.kind >= 0) & ~now)
        was = base.row_units[np.isin(base.pl_doc, np.asarray(doc_list, dtype=np.int32))]
        placed = con.execute(
            "SELECT DISTINCT unit_id FROM placements WHERE list_contains(?, doc_id)", [doc_list]
        ).fetchnumpy()["unit_id"]
        units = np.unique(
            np.concatenate([dead, uid[uid >= first], was, np.asarray(placed, dtype=np.int64)])
        )
        if len(units) > DELTA_SHARE * max(len(uid), 1):
            return None
        listed = ", ".join(map(str, units.tolist())) or "NULL"
        rows = con.execute(
            f"""SELECT unit_id, text, to_json(heading_path)::VARCHAR AS head, unit_hash, kind
                FROM units WHERE unit_id IN ({listed}) ORDER BY unit_id"""
        ).fetchnumpy()
        placed = con.execute(
            f"""SELECT pl.unit_id, pl.doc_id, pl.ordinal, pl.start_line, pl.end_line,
                       coalesce(pl.page, -1) AS page, pl.offsets
                FROM placements pl JOIN documents d USING (doc_id)
                WHERE pl.unit_id IN ({listed}) ORDER BY pl.unit_id, d.path, pl.ordinal"""
        ).fetchnumpy()
        held = con.execute(
            "SELECT doc_id, path, coalesce(sha256, '') AS sha, coalesce(size, 0) AS size, "
            "coalesce(mtime_ns, 0) AS mtime FROM documents WHERE list_contains(?, doc_id)",
            [doc_list],
        ).fetchall()
    arrays.save(delta_path(db), gen, _layout(bgen, units, rows, placed, doc_list, held))
    return delta_path(db)


def _layout(
    bgen: int, units: np.ndarray, rows: dict, placed: dict, doc_list: list[int], held: list
) -> list[np.ndarray]:
    """The delta's arrays, in ``PassagesDelta``'s order."""
    k = len(units)
    at = np.searchsorted(units, np.asarray(rows["unit_id"], dtype=np.int64))
    texts = [b""] * k
    heads = [b""] * k
    unit_hash = np.zeros(k, dtype="S64")
    kind = np.full(k, -1, dtype=np.int8)
    names = sorted(set(rows["kind"].tolist()))
    code = {n: i for i, n in enumerate(names)}
    for i, text, head, h, kd in zip(
        at.tolist(), rows["text"], rows["head"], rows["unit_hash"], rows["kind"], strict=True
    ):
        texts[i], heads[i] = text.encode(), head.encode()
        unit_hash[i], kind[i] = h.encode(), code[kd]
    text_off, text = arrays.Strings.pack_bytes(texts)
    head_off, head = arrays.Strings.pack_bytes(heads)
    kind_off, kind_blob = arrays.Strings.pack(names)
    pl_unit = np.searchsorted(units, np.asarray(placed["unit_id"], dtype=np.int64))
    place_start = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(pl_unit, minlength=k), out=place_start[1:])
    off_start, off = arrays.Strings.pack_bytes([bytes(b) for b in placed["offsets"]])
    by_doc = {d: (p, sha, size, mtime) for d, p, sha, size, mtime in held}
    gone = ("", "", 0, 0)
    doc_rows = [by_doc.get(d, gone) for d in doc_list]
    path_off, path_blob = arrays.Strings.pack([r[0] for r in doc_rows])
    return [
        np.array([bgen], dtype=np.int64),
        units.astype(np.int64),
        text_off,
        text,
        head_off,
        head,
        unit_hash,
        kind,
        kind_off,
        kind_blob,
        place_start,
        *(np.asarray(placed[c], dtype=np.int32) for c in _PLACED),
        off_start,
        off,
        np.asarray(doc_list, dtype=np.int64),
        path_off,
        path_blob,
        np.array([r[1] for r in doc_rows], dtype="S64").reshape(len(doc_rows)),
        np.array([r[2] for r in doc_rows], dtype=np.int64),
        np.array([r[3] for r in doc_rows], dtype=np.int64),
    ]


_PLACED = ("doc_id", "ordinal", "start_line", "end_line", "page")


def load(db: Path, gen: int) -> Merged | None:
    """The base and the delta as one, if the delta is of ``gen`` and names the base's."""
    delta = arrays.load_as(PassagesDelta, delta_path(db), gen)
    if delta is None:
        return None
    base = arrays.load_as(PassagesFile, mapped_path(db), int(delta.base_gen[0]))
    return None if base is None else Merged(base, delta)
