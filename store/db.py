"""Finding an index and connecting to it, waiting politely when another process writes.

DuckDB admits one writing process and no readers beside it, so writers hold the
file only for short transactions and every opener retries with backoff before
saying the index is busy.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
from kbx.errors import IndexBusy, IndexNotFound, SchemaError
from kbx.store.schema import check_readable, ensure_schema

INDEX_DIR = ".kbx"
INDEX_FILE = "index.duckdb"
BUSY_WAIT = 10.0


@dataclass(frozen=True)
class Index:
    """An index file and the folder whose documents it holds."""

    db: Path
    root: Path

    @classmethod
    def for_root(cls, root: str | Path, db: str | Path | None = None) -> Index:
        """The index of ``root``: ``root/.kbx/index.duckdb`` unless a file is given."""
        root = Path(root).resolve()
        path = Path(db).resolve() if db else root / INDEX_DIR / INDEX_FILE
        return cls(path, root)

    @classmethod
    def find(cls, db: str | Path | None = None, start: str | Path = ".") -> Index:
        """The given index file, or the nearest ``.kbx/index.duckdb`` from ``start`` upward."""
        if db:
            path = Path(db).resolve()
            if not path.exists():
                raise IndexNotFound(f"no index at {db}")
        else:
            here = Path(start).resolve()
            for folder in (here, *here.parents):
                path = folder / INDEX_DIR / INDEX_FILE
                if path.exists():
                    break
            else:
                raise IndexNotFound(
                    "no kbx index here or in any parent folder; run `kbx index PATH` first "
                    "or pass --db FILE"
                )
        if path.parent.name == INDEX_DIR and path.name == INDEX_FILE:
            return cls(path, path.parent.parent)  # the usual layout names its root
        with connect(path, read_only=True) as con:
            row = con.execute("SELECT value FROM kbx_meta WHERE key = 'root'").fetchone()
        return cls(path, Path(row[0]))

    def reader(self):
        """A read-only connection (a context manager) to a readable index."""
        return connect(self.db, read_only=True)

    def writer(self):
        """A read-write connection (a context manager); creates or migrates the schema."""
        self.db.parent.mkdir(parents=True, exist_ok=True)
        return connect(self.db, read_only=False, root=str(self.root))


class WriterLease:
    """The writer connection, kept across short writes: opening the file costs ~10 ms.
    Readers need it free now and then, so callers let it go before slow work and once it
    has been held ``hold`` seconds (``expired``). Each write still commits on its own; this
    only spares the reopening."""

    def __init__(self, index: Index, hold: float = 1.0):
        self.index, self.hold = index, hold
        self._cm = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._opened = 0.0

    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._cm = self.index.writer()
            self._con = self._cm.__enter__()
            self._opened = time.monotonic()
        return self._con

    @property
    def expired(self) -> bool:
        return self._con is not None and time.monotonic() - self._opened > self.hold

    def release(self) -> None:
        if self._cm is not None:
            cm, self._cm, self._con = self._cm, None, None
            cm.__exit__(None, None, None)

    def __enter__(self) -> WriterLease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


_LOCK = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


@contextmanager
def connect(path: Path, read_only: bool, root: str | None = None, wait: float = BUSY_WAIT):
    """Open ``path``, retrying while another process holds it, and close it afterwards."""
    deadline = time.monotonic() + wait
    delay = 0.02
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as e:
            m = _LOCK.search(str(e))
            if not m and "lock" not in str(e).lower():
                raise SchemaError(f"cannot open {path}: {str(e).splitlines()[0]}") from e
            if time.monotonic() > deadline:
                who = f"process {m.group(2)} ({Path(m.group(1)).name})" if m else "another process"
                raise IndexBusy(
                    f"the index is busy: {who} is writing to it; tried for {wait:.0f}s, "
                    "try again shortly"
                ) from e
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        except duckdb.Error as e:
            raise SchemaError(f"cannot open {path}: {str(e).splitlines()[0]}") from e
    try:
        if read_only:
            check_readable(con)
        else:
            ensure_schema(con, root or "")
        yield con
    finally:
        con.close()


def rows_select(columns: list[str], rows: list[tuple], lists: frozenset[str] = frozenset()):
    """A ``SELECT`` that turns ``rows`` back into rows from one list parameter per column,
    and those parameters: DuckDB loads a batch this way in one statement, where
    ``executemany`` goes row by row. Columns named in ``lists`` hold lists themselves."""
    params = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in columns]
    select = ", ".join(
        f"unnest(${i + 1}{', max_depth := 1' if c in lists else ''}) AS {c}"
        for i, c in enumerate(columns)
    )
    return f"SELECT {select}", params
