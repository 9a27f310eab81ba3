"""Derived arrays beside the index, memory-mapped, each file valid for one generation.

A table stays the truth; a file of arrays exported from it is what makes a read fast
(numpy over a mapped file, where DuckDB pays for planning, scanning and decompressing).
Every write of the table bumps a generation number in ``kbx_meta`` inside its own
transaction, and the file records the generation it was exported at: a reader uses the
file only when the two agree, else the SQL path, so a stale or missing file (a killed
export, a copied index) is slower, never wrong. A file is written under a temporary name
and renamed into place, so a reader never maps half of one; a map of the old file stays
valid while it is open.

The postings and the passages are kept as a base file and a delta beside it (what changed
since the base: store/postings_file.py, store/passages_delta.py), so a write costs what it
changed, not the whole file: the delta is of the generation it was written at and names
its base's, and a reader takes the two only when the delta is of the table's generation.
A delta past a share of its base is written as a new base instead (a compaction).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

import duckdb

if TYPE_CHECKING:  # numpy loads with the first file saved or mapped, not with the bumps
    import numpy as np

WARM = False  # see ``stay_warm``
MAPPED_MIN_BYTES = 4 << 20  # below this (about 5,000 units) SQL ranks as fast as a cold
# process imports numpy; a warm process (kbx serve) maps any size (``search/bm25.mapped``)


def stay_warm() -> None:
    """For a long-lived process (``kbx serve``, ``kbx mcp``): map the files at any size,
    since numpy's import is paid once, not per query; and keep them current when it writes."""
    global WARM
    WARM = True


def worth_mapping(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a writer should keep the files current: in a warm process always; in a cold
    one (the CLI) once the postings file would reach ``MAPPED_MIN_BYTES``. Below that a
    cold reader ranks in SQL, never imports numpy, and so reads none of the files: writing
    them would cost every command and serve no one. A warm server's first write (its
    watcher's catch-up run) makes them."""
    if WARM:
        return True
    (size,) = con.execute(  # the postings file's bytes: a unit id, tf and htf per posting
        """SELECT (SELECT count(*) FROM postings) * 6
                  + (SELECT coalesce(max(term_id), 0) FROM terms) * 8
                  + (SELECT coalesce(max(unit_id), 0) FROM units) * 4"""
    ).fetchone()
    return size >= MAPPED_MIN_BYTES


def bump(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """Inside the caller's transaction: the table behind ``key``'s files changed. The new
    generation is the clock's nanoseconds (or one more than the last, if more): an index
    deleted and built again must never meet a file of its predecessor's generation, as
    counting from 1 again would (its files stay beside it)."""
    (n,) = con.execute(  # UPDATE, else INSERT: a third of an upsert's cost in DuckDB
        "UPDATE kbx_meta SET value = greatest(value::BIGINT + 1, epoch_ns(now()))::VARCHAR "
        "WHERE key = ?",
        [key],
    ).fetchone()
    if not n:
        con.execute("INSERT INTO kbx_meta VALUES (?, epoch_ns(now())::VARCHAR)", [key])


def generation(con: duckdb.DuckDBPyConnection, key: str) -> int:
    row = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [key]).fetchone()
    return int(row[0]) if row else 0


def refresh(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    key: str,
    load: Callable[[Path, int], object | None],
    export: Callable[[duckdb.DuckDBPyConnection, Path], Path],
) -> bool:
    """Export ``db``'s file of one kind (``export``) unless ``load`` maps one of ``key``'s
    current generation; whether it did."""
    if load(db, generation(con, key)) is not None:
        return False
    export(con, db)
    return True


def save(path: Path, gen: int, arrays: list[np.ndarray]) -> None:
    """Write ``arrays`` as one file of generation ``gen`` (renamed into place)."""
    tmp, maps = create(path, gen, [(a.shape, a.dtype) for a in arrays])
    for m, a in zip(maps, arrays, strict=True):
        m[...] = a
    publish(tmp, path, maps)


def create(path: Path, gen: int, layout: list[tuple[tuple, np.dtype]]) -> tuple[Path, list]:
    """A file of generation ``gen`` holding arrays of these shapes and types, under a
    temporary name, each mapped for writing: filled in pieces, a large export needs no
    more memory than a piece. ``publish`` puts it in place."""
    import numpy as np

    tmp = path.with_suffix(".tmp")
    starts = []
    with open(tmp, "wb") as f:
        np.save(f, np.array([gen, len(layout)], dtype=np.int64))
        for shape, dtype in layout:
            header = {
                "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                "fortran_order": False,
                "shape": tuple(int(x) for x in shape),
            }
            np.lib.format.write_array_header_1_0(f, header)
            starts.append(f.tell())
            f.seek(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize, os.SEEK_CUR)
        f.truncate()  # the file as long as its arrays, zeros until filled
    maps = [
        np.memmap(tmp, dtype=dtype, mode="r+", offset=at, shape=tuple(shape))
        if int(np.prod(shape, dtype=np.int64))
        else np.zeros(shape, dtype=dtype)
        for at, (shape, dtype) in zip(starts, layout, strict=True)
    ]
    return tmp, maps


def publish(tmp: Path, path: Path, maps: list) -> None:
    """Flush a ``create``d file and rename it into place."""
    for m in maps:
        flush = getattr(m, "flush", None)
        if flush is not None:
            flush()
    del maps[:]
    os.replace(tmp, path)


def file_generation(path: Path) -> int | None:
    """The generation ``path`` was written at (its header alone), None where there is none."""
    import numpy as np

    try:
        with open(path, "rb") as f:
            return int(np.load(f)[0])
    except (OSError, EOFError, ValueError, IndexError):
        return None


def load(path: Path, gen: int) -> list[np.ndarray] | None:
    """The arrays of ``path``, mapped rather than read, if it is of generation ``gen``."""
    import numpy as np

    try:
        with open(path, "rb") as f:
            head = np.load(f)
            if int(head[0]) != gen:
                return None
            layout = []
            for _ in range(int(head[1])):
                major, _ = np.lib.format.read_magic(f)
                read = (
                    np.lib.format.read_array_header_1_0
                    if major == 1
                    else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read(f)
                layout.append((f.tell(), shape, dtype))
                f.seek(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, os.SEEK_CUR)
        return [_mapped(path, *at) for at in layout]
    except (OSError, EOFError, ValueError, IndexError):  # missing, cut short or not ours
        return None


def load_as(cls: Callable[..., T], path: Path, gen: int) -> T | None:
    """``load``'s arrays as the dataclass ``cls``, one field an array, or None when the
    file is not of ``gen`` or not of that layout (a file a kbx of other fields wrote)."""
    found = load(path, gen)
    if found is None or len(found) != len(fields(cls)):
        return None
    return cls(*found)


def _mapped(path: Path, start: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
    import numpy as np

    if not int(np.prod(shape, dtype=np.int64)):
        return np.zeros(shape, dtype=dtype)
    mapped = np.memmap(path, dtype=dtype, mode="r", offset=start, shape=shape, order="C")
    return mapped.view(np.ndarray)  # the map stays its base; indexing skips memmap's hooks


class Strings:
    """A column of strings kept as one UTF-8 blob and offsets; read one at a time."""

    def __init__(self, offsets: np.ndarray, blob: np.ndarray):
        self.offsets, self.blob = offsets, blob

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> str:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return bytes(self.blob[a:b]).decode()

    def find(self, value: str, lo: int = 0, hi: int | None = None) -> int | None:
        """The index of ``value`` among strings sorted in byte order (as DuckDB sorts
        them), searched within ``[lo, hi)``; None when it is not there."""
        target = value.encode()
        hi = len(self) if hi is None else hi
        offsets, blob = self.offsets, self.blob
        while lo < hi:
            mid = (lo + hi) // 2
            if bytes(blob[int(offsets[mid]) : int(offsets[mid + 1])]) < target:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self) and bytes(blob[int(offsets[lo]) : int(offsets[lo + 1])]) == target:
            return lo
        return None

    @staticmethod
    def pack(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return Strings.pack_bytes([v.encode() for v in values])

    @staticmethod
    def pack_bytes(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)


T = TypeVar("T")


class Maps(Generic[T]):
    """A process's maps of one kind of file, one per index, each kept while its generation
    holds (a server maps once); ``load(db, gen)`` maps a file, None when it is not of
    ``gen``."""

    def __init__(self, load: Callable[[Path, int], T | None]):
        self._load = load
        self._held: dict[Path, tuple[int, T]] = {}

    def get(self, db: Path, gen: int) -> T | None:
        hit = self._held.get(db)
        if hit is not None and hit[0] == gen:
            return hit[1]
        found = self._load(db, gen)
        if found is None:
            self._held.pop(db, None)
        else:
            self._held[db] = (gen, found)
        return found

    def clear(self) -> None:
        self._held.clear()
