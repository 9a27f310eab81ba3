"""Finding an index and connecting to it, waiting politely when another process writes.

DuckDB admits one writing process and no readers beside it, so writers hold the
file only for short transactions and every opener retries with backoff before
saying the index is busy.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from kbx.errors import BadArgument, IndexBusy, IndexNotFound, IndexUnwritable, SchemaError
from kbx.store.schema import check_readable, ensure_schema

INDEX_DIR = ".kbx"
INDEX_FILE = "index.duckdb"
BUSY_WAIT = 10.0  # seconds a reader waits for a writer
WRITER_WAIT = 60.0  # seconds a writer waits for readers and short writes
ENTITIES_DIRTY = "entities_dirty"  # kbx_meta key: a write since the last entity rebuild


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
        root = Path(row[0]) if row and row[0] else None
        here = Path(start).resolve()
        if (
            root is None
            or root == Path(root.anchor)
            or not (_within(here, root) or _within(path, root))
        ):
            # The root is read from the file itself, so it is trusted only where the user
            # stands in it or the file lies in it, and never as the whole file system.
            raise BadArgument(
                f"{db} indexes {root or 'no folder'}; run the command from inside that "
                "folder (kbx reads files only under an index's own root)"
            )
        return cls(path, root)

    def reader(self):
        """A read-only connection (a context manager) to a readable index."""
        return connect(self.db, read_only=True)

    def writer(self):
        """A read-write connection (a context manager); creates or migrates the schema."""
        self._make_folder()
        return connect(self.db, read_only=False, root=str(self.root))

    @property
    def lock_path(self) -> Path:
        return self.db.with_name(self.db.name + ".lock")

    @property
    def journal_path(self) -> Path:
        """The curated gazetteer's log, beside the index file and never rebuilt from it."""
        return self.db.with_name("gazetteer.jsonl")

    def _make_folder(self) -> None:
        try:
            self.db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise IndexUnwritable(
                f"cannot create {self.db.parent}: {e.strerror}; pass --db FILE to keep the "
                "index in a folder you can write"
            ) from None

    @contextmanager
    def writing(self, command: str, wait: float = BUSY_WAIT) -> Iterator[None]:
        """Hold the index's write lock for a whole command, so two writers never interleave
        their steps; a second one waits up to ``wait`` seconds, then says who holds it.
        The lock is an OS file lock: a killed holder releases it, nothing stale is left.
        Re-entrant within a process (``kbx index --resolve`` resolves under its lock)."""
        key = str(self.lock_path)
        if _HELD.get(key):
            _HELD[key] += 1
            try:
                yield
            finally:
                _HELD[key] -= 1
            return
        self._make_folder()
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise IndexUnwritable(f"cannot write to {self.db.parent}: {e.strerror}") from None
        try:
            _acquire(fd, self.lock_path, wait)
            os.ftruncate(fd, 0)
            holder = {"pid": os.getpid(), "command": command, "since": datetime.now()}
            os.write(fd, json.dumps(holder, default=str).encode())
            _HELD[key] = 1
            try:
                yield
            finally:
                del _HELD[key]
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


_HELD: dict[str, int] = {}  # lock paths this process holds, with their depth


def _acquire(fd: int, path: Path, wait: float) -> None:
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise IndexBusy(
                    f"{_holder(path)}; waited {wait:.0f}s, try again when it ends"
                ) from None
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)


def _holder(path: Path) -> str:
    """Who holds the write lock, as its holder wrote it down."""
    try:
        h = json.loads(path.read_text() or "{}")
        since = str(h.get("since", ""))[11:19]
        return f"another kbx {h['command']} (pid {h['pid']}, since {since}) is writing this index"
    except (OSError, ValueError, KeyError, TypeError):
        return "another kbx process is writing this index"


def mark_dirty(con: duckdb.DuckDBPyConnection) -> None:
    """Note, inside the caller's transaction, that the entity layer must be rebuilt: the
    rebuild clears the mark in its own, so a run killed between the two leaves it set."""
    con.execute("INSERT OR REPLACE INTO kbx_meta VALUES (?, '1')", [ENTITIES_DIRTY])


def is_dirty(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT 1 FROM kbx_meta WHERE key = ?", [ENTITIES_DIRTY]).fetchone())


class WriterLease:
    """The writer connection, kept across short writes: opening the file costs ~10 ms,
    and closing it checkpoints. Readers need it free now and then, so callers let it go
    before slow work and whenever ``expired``: held ``hold`` seconds, or a reader is
    waiting for the file (it says so in a marker, see ``connect``). Each write still
    commits on its own; this only spares the reopening. Reopened after letting a reader
    in, it first gives the reader a moment to open the file."""

    def __init__(self, index: Index, hold: float = 1.0):
        self.index, self.hold = index, hold
        self._cm = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._opened = 0.0
        self._yielded = False  # let go for a reader: let it in before reopening

    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            if self._yielded:
                _step_back(_marker(self.index.db, READER_MARK))
                self._yielded = False
            self._cm = self.index.writer()
            self._con = self._cm.__enter__()
            self._opened = time.monotonic()
        return self._con

    @property
    def expired(self) -> bool:
        if self._con is None:
            return False
        if _fresh(_marker(self.index.db, READER_MARK)):
            self._yielded = True
            return True
        return time.monotonic() - self._opened > self.hold

    def release(self) -> None:
        if self._cm is not None:
            cm, self._cm, self._con = self._cm, None, None
            cm.__exit__(None, None, None)

    def __enter__(self) -> WriterLease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


READER_MARK = ".reading"  # a reader waits for the writer to let go
WRITER_MARK = ".waiting"  # a writer waits for readers to leave a gap
STEP_BACK = 1.0  # seconds at most that one side gives the other waiting for a gap


def _marker(db: Path, mark: str) -> Path:
    return db.with_name(db.name + mark)


def _step_back(marker: Path) -> None:
    """Wait while the other side says it is waiting (at most ``STEP_BACK`` seconds)."""
    deadline = time.monotonic() + STEP_BACK
    delay = 0.02
    while _fresh(marker) and time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 1.5, 0.2)


_LOCK = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


@contextmanager
def connect(path: Path, read_only: bool, root: str | None = None, wait: float | None = None):
    """Open ``path``, retrying while another process holds it, and close it afterwards.

    Whoever waits says so in a marker file beside the index: a waiting writer makes
    arriving readers step back for a moment, so a stream of back-to-back searches cannot
    starve it, and a waiting reader makes a writer holding a ``WriterLease`` let go at its
    next commit. Each reader still waits at most ``BUSY_WAIT``; a writer, being background
    work, ``WRITER_WAIT``."""
    wait = wait if wait is not None else BUSY_WAIT if read_only else WRITER_WAIT
    mine = _marker(path, READER_MARK if read_only else WRITER_MARK)
    deadline = time.monotonic() + wait
    delay = 0.02
    writer = _marker(path, WRITER_MARK)
    try:
        while True:
            if read_only and _fresh(writer) and time.monotonic() < deadline:
                time.sleep(delay)
                delay = min(delay * 1.5, 0.2)
                continue
            try:
                con = duckdb.connect(str(path), read_only=read_only)
                break
            except duckdb.IOException as e:
                m = _LOCK.search(str(e))
                if any(w in str(e) for w in ("Permission denied", "Read-only file system")):
                    raise IndexUnwritable(
                        f"cannot open {path} for {'reading' if read_only else 'writing'}: "
                        f"{str(e).splitlines()[0]}"
                    ) from None
                if not m and "lock" not in str(e).lower():
                    raise SchemaError(f"cannot open {path}: {str(e).splitlines()[0]}") from e
                if time.monotonic() > deadline:
                    who = (
                        f"process {m.group(2)} ({Path(m.group(1)).name})"
                        if m
                        else "another process"
                    )
                    doing = "is writing to it" if read_only else "has it open"
                    raise IndexBusy(
                        f"the index is busy: {who} {doing}; tried for {wait:.0f}s, "
                        "try again shortly"
                    ) from e
                with suppress(OSError):
                    mine.touch()
                time.sleep(delay)
                delay = min(delay * 1.5, 0.5)
            except duckdb.Error as e:
                raise SchemaError(f"cannot open {path}: {str(e).splitlines()[0]}") from e
    finally:
        with suppress(OSError):
            mine.unlink(missing_ok=True)
    try:
        if read_only:
            check_readable(con)
        else:
            ensure_schema(con, root or "")
        yield con
    finally:
        con.close()


def _fresh(marker: Path, within: float = 1.0) -> bool:
    """A writer touched this marker in the last ``within`` seconds (it touches it while
    it waits, and removes it once in)."""
    try:
        return time.time() - marker.stat().st_mtime < within
    except OSError:
        return False


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


@contextmanager
def staged(
    con: duckdb.DuckDBPyConnection,
    name: str,
    columns: dict[str, Sequence],
    ints: frozenset[str] = frozenset(),
) -> Iterator[str]:
    """Python columns (equal-length sequences) as a relation ``name`` that DuckDB scans in
    place, as numpy arrays: a batch loads several times faster than through
    ``rows_select``'s list parameters, which DuckDB converts value by value. Columns named
    in ``ints`` hold integers only; the others may hold anything DuckDB infers a type for
    (cast them where a batch may hold only NULLs)."""
    import numpy as np  # the write path only: searches never load it

    arrays = {
        c: np.fromiter(v, dtype=np.int64 if c in ints else object, count=len(v))
        for c, v in columns.items()
    }
    con.register(name, arrays)
    try:
        yield name
    finally:
        con.unregister(name)


def kill_point(name: str) -> None:
    """A named point between two commits of a multi-step operation. The crash-consistency
    tests set ``KBX_KILL_AT=name`` (or ``name:N``, the Nth time it is reached) to make the
    process die here as ``kill -9`` would; unset, this costs one dictionary lookup."""
    want = os.environ.get("KBX_KILL_AT")
    if not want:
        return
    point, _, nth = want.partition(":")
    if point != name:
        return
    _REACHED[name] = _REACHED.get(name, 0) + 1
    if _REACHED[name] >= int(nth or 1):
        os._exit(137)


_REACHED: dict[str, int] = {}
