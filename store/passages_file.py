"""The units' text and placements as memory-mapped arrays beside the index: what a search
reads its hits from (text, heading, hash, the file and lines of each placement, the offset
map) without a DuckDB lookup per hit, which costs about half a millisecond of CPU each
where reading a mapped row costs microseconds (docs/BENCHMARKS.md, "Serving").

Per unit id, as compressed sparse rows (``X_start[u]:X_start[u + 1]``): the text and the
heading path (JSON) as UTF-8 bytes, and the unit's placements, sorted by path and ordinal
as the SQL orders them, each with its document, ordinal, lines, page (-1: none) and offset
map. Per document id: path, SHA-256, size and mtime as indexed.

The file is of one generation (store/arrays.py): every write of documents, units or
placements bumps it (``touched``) in its own transaction, ``kbx index`` exports it, and a
search reads it only when the generations agree; else the SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kbx.store import arrays
from kbx.store.transaction import transaction

if TYPE_CHECKING:  # numpy loads with the first file written or mapped
    import numpy as np

GENERATION = "passages_generation"  # kbx_meta key: bumped by every write of what it holds
CHUNK_UNITS = 20_000  # units (and their placements) read at a time by ``export``
LOG = "passages_log"  # kbx_meta key: the documents each write changed, for the delta
LOG_CHARS = 8_000  # a longer log (hundreds of documents changed) gives way to a new base
BASE = "passages_base"  # kbx_meta key: the generation of the base file this index exported


def mapped_path(db: Path) -> Path:
    return db.with_name(f"{db.name}.passages.npy")


def touched(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[int] | None = None) -> None:
    """Inside the caller's transaction: documents, units or placements changed, those of
    ``doc_ids`` (units that went with no document: none), or of documents not said (None),
    which the next export writes whole. Logged for the delta (``LOG``) as the step from
    the old generation to the new, so a chain of steps from the base's generation to the
    table's says every document changed since; a bump with no step breaks the chain."""
    old = arrays.generation(con, GENERATION)
    arrays.bump(con, GENERATION)
    new = arrays.generation(con, GENERATION)
    said = "*" if doc_ids is None else ",".join(map(str, sorted(set(doc_ids))))
    step = f"{old}>{new}:{said};"
    (n,) = con.execute(  # past LOG_CHARS the log starts again: broken, so a new base
        "UPDATE kbx_meta SET value = CASE WHEN strlen(value) > ? THEN '' ELSE value END || ? "
        "WHERE key = ?",
        [LOG_CHARS, step, LOG],
    ).fetchone()
    if not n:
        con.execute("INSERT INTO kbx_meta VALUES (?, ?)", [LOG, step])


@dataclass(frozen=True)
class PassagesFile:
    """The passages of one generation, in the order the file holds its arrays."""

    text_start: np.ndarray  # per unit id
    text: np.ndarray
    head_start: np.ndarray  # per unit id: its heading path as JSON
    head: np.ndarray
    unit_hash: np.ndarray  # per unit id, ASCII
    kind: np.ndarray  # per unit id: an index into the kinds, -1 where no unit has the id
    kind_off: np.ndarray
    kind_blob: np.ndarray
    place_start: np.ndarray  # per unit id: its placements' rows
    pl_doc: np.ndarray
    pl_ordinal: np.ndarray
    pl_start: np.ndarray
    pl_end: np.ndarray
    pl_page: np.ndarray  # -1: no page
    off_start: np.ndarray  # per placement row: its offset map
    off: np.ndarray
    path_off: np.ndarray  # per document id
    path_blob: np.ndarray
    sha: np.ndarray  # per document id, ASCII
    size: np.ndarray
    mtime: np.ndarray

    def unit(self, u: int) -> tuple[str, list[str], str, str] | None:
        """A unit's text, heading path, hash and kind; None for an id the file lacks."""
        if not 0 <= u < len(self.kind) or self.kind[u] < 0:
            return None
        return unit_record(self, u)

    @cached_property
    def paths(self) -> arrays.Strings:
        """Each document id's path."""
        return arrays.Strings(self.path_off, self.path_blob)

    @cached_property
    def row_units(self) -> np.ndarray:
        """Each placement row's unit id (int64), found once per map."""
        import numpy as np

        counts = np.diff(self.place_start)
        return np.repeat(np.arange(len(counts), dtype=np.int64), counts)

    def text_of(self, u: int) -> str:
        """A unit's text alone (``unit`` decodes its heading too)."""
        return unit_text(self, u)

    def placements(self, u: int) -> range:
        """The rows of a unit's placements, by path and ordinal (empty for an id it lacks)."""
        return placement_rows(self.place_start, u)

    def row(self, r: int) -> tuple:
        """A placement as ``_hits`` reads it from SQL (``placement_row``)."""
        return placement_row(self, r, bytes(self.off[self.off_start[r] : self.off_start[r + 1]]))


def unit_text(f, i: int) -> str:
    """The text of unit row ``i`` of a file or a delta (their unit arrays are alike)."""
    return bytes(f.text[f.text_start[i] : f.text_start[i + 1]]).decode()


def unit_record(f, i: int) -> tuple[str, list[str], str, str]:
    """Unit row ``i`` of a file or a delta: its text, heading path, hash and kind."""
    import json

    head = json.loads(bytes(f.head[f.head_start[i] : f.head_start[i + 1]]))
    kind = arrays.Strings(f.kind_off, f.kind_blob)[int(f.kind[i])]
    return unit_text(f, i), head, f.unit_hash[i].decode(), kind


def placement_rows(place_start, u: int) -> range:
    """The placement rows of unit ``u`` by ``place_start`` (empty for an id it lacks)."""
    if not 0 <= u < len(place_start) - 1:
        return range(0)
    return range(int(place_start[u]), int(place_start[u + 1]))


def placement_row(view, r: int, offsets: bytes) -> tuple:
    """Placement row ``r`` of ``view`` (a file, or a base merged with its delta) as ``_hits``
    reads it from SQL: unit id aside, ``(doc_id, ordinal, path, sha256, start_line,
    end_line, page, offsets, size, mtime_ns)``."""
    d = int(view.pl_doc[r])
    page = int(view.pl_page[r])
    return (
        d,
        int(view.pl_ordinal[r]),
        view.paths[d],
        view.sha[d].decode(),
        int(view.pl_start[r]),
        int(view.pl_end[r]),
        None if page < 0 else page,
        offsets,
        int(view.size[d]),
        int(view.mtime[d]),
    )


def export(con: duckdb.DuckDBPyConnection, db: Path) -> Path:
    """Write the file of the current generation from one snapshot (its own transaction, so
    the generation and the rows agree), the text and offset maps read ``CHUNK_UNITS``
    units at a time into the mapped file: the writer's memory stays that of a chunk."""
    import numpy as np

    path = mapped_path(db)
    with transaction(con):
        gen = arrays.generation(con, GENERATION)
        units = con.execute(
            """SELECT unit_id, strlen(text) AS n, strlen(to_json(heading_path)::VARCHAR) AS h,
                      unit_hash, kind FROM units ORDER BY unit_id"""
        ).fetchnumpy()
        placed = con.execute(
            """SELECT pl.unit_id, pl.doc_id, pl.ordinal, pl.start_line, pl.end_line,
                      coalesce(pl.page, -1) AS page, octet_length(pl.offsets) AS n
               FROM placements pl JOIN documents d USING (doc_id)
               ORDER BY pl.unit_id, d.path, pl.ordinal"""
        ).fetchnumpy()
        docs = con.execute(
            "SELECT doc_id, path, coalesce(sha256, '') AS sha, coalesce(size, 0) AS size, "
            "coalesce(mtime_ns, 0) AS mtime FROM documents ORDER BY doc_id"
        ).fetchnumpy()
        ids = np.asarray(units["unit_id"], dtype=np.int64)
        top = int(ids.max()) + 1 if len(ids) else 1
        text_start = _starts(ids, units["n"], top)
        head_start = _starts(ids, units["h"], top)
        kinds = sorted(set(units["kind"].tolist()))
        code = {k: i for i, k in enumerate(kinds)}
        kind = np.full(top, -1, dtype=np.int8)
        kind[ids] = [code[k] for k in units["kind"].tolist()]
        unit_hash = np.zeros(top, dtype="S64")
        unit_hash[ids] = units["unit_hash"].astype("S64")
        pl_unit = np.asarray(placed["unit_id"], dtype=np.int64)
        place_start = np.zeros(top + 1, dtype=np.int64)
        np.cumsum(np.bincount(pl_unit, minlength=top), out=place_start[1:])
        off_start = np.zeros(len(pl_unit) + 1, dtype=np.int64)
        np.cumsum(placed["n"], out=off_start[1:])
        doc_ids = np.asarray(docs["doc_id"], dtype=np.int64)
        n_docs = int(doc_ids.max()) + 1 if len(doc_ids) else 1
        paths = [""] * n_docs
        for d, p in zip(doc_ids.tolist(), docs["path"].tolist(), strict=True):
            paths[d] = p
        sha = np.zeros(n_docs, dtype="S64")
        sha[doc_ids] = docs["sha"].astype("S64")
        size = np.zeros(n_docs, dtype=np.int64)
        size[doc_ids] = docs["size"]
        mtime = np.zeros(n_docs, dtype=np.int64)
        mtime[doc_ids] = docs["mtime"]
        columns = {
            "text_start": text_start,
            "text": ((int(text_start[-1]),), np.uint8),
            "head_start": head_start,
            "head": ((int(head_start[-1]),), np.uint8),
            "unit_hash": unit_hash,
            "kind": kind,
            **dict(zip(("kind_off", "kind_blob"), arrays.Strings.pack(kinds), strict=True)),
            "place_start": place_start,
            "pl_doc": placed["doc_id"].astype(np.int32),
            "pl_ordinal": placed["ordinal"].astype(np.int32),
            "pl_start": placed["start_line"].astype(np.int32),
            "pl_end": placed["end_line"].astype(np.int32),
            "pl_page": placed["page"].astype(np.int32),
            "off_start": off_start,
            "off": ((int(off_start[-1]),), np.uint8),
            **dict(zip(("path_off", "path_blob"), arrays.Strings.pack(paths), strict=True)),
            "sha": sha,
            "size": size,
            "mtime": mtime,
        }
        order = [f.name for f in fields(PassagesFile)]
        layout = [
            c if isinstance(c, tuple) else (c.shape, c.dtype) for c in map(columns.get, order)
        ]
        tmp, maps = arrays.create(path, gen, layout)
        for m, c in zip(maps, map(columns.get, order), strict=True):
            if not isinstance(c, tuple):
                m[...] = c
        text, head, off = (maps[order.index(name)] for name in ("text", "head", "off"))
        for lo in range(0, top, CHUNK_UNITS):
            hi = min(lo + CHUNK_UNITS, top)
            # A chunk's rows are contiguous in each array (an absent id has length 0), so
            # each goes in as one joined piece.
            texts, heads = con.execute(
                "SELECT coalesce(string_agg(text, '' ORDER BY unit_id), ''), "
                "coalesce(string_agg(to_json(heading_path)::VARCHAR, '' ORDER BY unit_id), '') "
                "FROM units WHERE unit_id >= ? AND unit_id < ?",
                [lo, hi],
            ).fetchone()
            _put(text, int(text_start[lo]), texts.encode())
            _put(head, int(head_start[lo]), heads.encode())
            blobs = con.execute(
                """SELECT pl.offsets FROM placements pl JOIN documents d USING (doc_id)
                   WHERE pl.unit_id >= ? AND pl.unit_id < ?
                   ORDER BY pl.unit_id, d.path, pl.ordinal""",
                [lo, hi],
            ).fetchall()
            _put(off, int(off_start[place_start[lo]]), b"".join(b for (b,) in blobs))
    arrays.publish(tmp, path, maps)
    return path


def _starts(ids: np.ndarray, lengths: np.ndarray, top: int) -> np.ndarray:
    """CSR starts over ``top`` ids from each present id's length."""
    import numpy as np

    n = np.zeros(top, dtype=np.int64)
    n[ids] = lengths
    start = np.zeros(top + 1, dtype=np.int64)
    np.cumsum(n, out=start[1:])
    return start


def _put(into: np.ndarray, at: int, data: bytes) -> None:
    import numpy as np

    into[at : at + len(data)] = np.frombuffer(data, dtype=np.uint8)


def load(db: Path, gen: int) -> PassagesFile | None:
    """The passages of generation ``gen``: the base file when it is of ``gen`` (and of this
    layout), else the base and its delta read as one (store/passages_delta.py) when the
    delta is of ``gen``; else None."""
    base = arrays.load_as(PassagesFile, mapped_path(db), gen)
    if base is not None or arrays.file_generation(delta_path(db)) != gen:
        return base
    from kbx.store import passages_delta

    return passages_delta.load(db, gen)


def delta_path(db: Path) -> Path:
    return db.with_name(f"{db.name}.passages.delta.npy")


MAPS = arrays.Maps(load)


def cached(db: Path, gen: int) -> PassagesFile | None:
    """``load``, kept for the process while the generation holds: a server maps once."""
    return MAPS.get(db, gen)


def refresh(con: duckdb.DuckDBPyConnection, db: Path) -> bool:
    """Make the passages of the tables' generation mappable unless they are: a delta over
    the base where the log says what changed (store/passages_delta.py), else a new base,
    after which the log starts again; whether it wrote a file."""
    from kbx.store import passages_delta

    gen = arrays.generation(con, GENERATION)
    if cached(db, gen) is not None:  # mapped here: a server's searches find it so
        if arrays.file_generation(mapped_path(db)) == gen != arrays.generation(con, BASE):
            _based(con, gen)  # the base of this generation is this index's
        return False
    if passages_delta.export_delta(con, db) is None:
        compact(con, db)
    if arrays.WARM:
        cached(db, gen)
    return True


def compact(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    """Write the base file whole, of the tables' generation, and drop the delta."""
    _based(con, arrays.file_generation(export(con, db)))
    delta_path(db).unlink(missing_ok=True)


def _based(con: duckdb.DuckDBPyConnection, gen: int | None) -> None:
    """Note the base of ``gen`` as this index's and start the log again (a writer's: no
    write comes between the base's export and this)."""
    with transaction(con):
        con.execute("DELETE FROM kbx_meta WHERE key IN (?, ?)", [BASE, LOG])
        con.execute("INSERT INTO kbx_meta VALUES (?, ?)", [BASE, str(gen)])
