"""Finding an index and connecting to it, waiting politely when another process writes.

DuckDB admits one writing process and no readers beside it, so writers hold the
file only for short transactions and every opener retries with backoff before
saying the index is busy (and says on the ``kbx.store`` logger whom it waits for, once a
wait passes half a second). Within one process, readers can go on during a write on
cursors of the writer's database (``Index.lending``).

Every open is an ``ATTACH`` of the file to one in-memory DuckDB instance per process
(``_Host``), not a new instance: an instance costs 20-30 ms of CPU to start, an ATTACH about
1 ms, and a command such as ``kbx index`` opens its file a dozen times.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from kbx.errors import BadArgument, IndexBusy, IndexNotFound, IndexUnwritable, SchemaError
from kbx.store.arrays import bump
from kbx.store.schema import check_readable, ensure_schema

INDEX_DIR = ".kbx"
INDEX_FILE = "index.duckdb"
BUSY_WAIT = 10.0  # seconds a reader waits for a writer
WRITER_WAIT = 60.0  # seconds a writer waits for readers and short writes
ENTITIES_DIRTY = "entities_dirty"  # kbx_meta key: a write since the last entity rebuild
DIRTY_ALL = "1"  # its value when the whole layer must be rebuilt
DIRTY_DOCS = "docs"  # when only the documents listed in ``layer_stale`` changed
SAY_WAITING = 0.5  # seconds an opener waits before it says so (a shorter wait is not news)

# Waits are said on this logger, not printed: the store never prints, the command line
# shows them on stderr (and a program using the library sees them in its own log).
log = logging.getLogger("kbx.store")


@dataclass(frozen=True)
class Index:
    """An index file and the folder whose documents it holds."""

    db: Path
    root: Path

    @classmethod
    def for_root(cls, root: str | Path, db: str | Path | None = None) -> Index:
        """The index of ``root``: ``root/.kbx/index.duckdb`` unless a file is given."""
        root = Path(root).expanduser().resolve()
        path = Path(db).expanduser().resolve() if db else root / INDEX_DIR / INDEX_FILE
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

    @contextmanager
    def lending(self) -> Iterator[Lending]:
        """While the block runs, readers that borrow from the lending read beside the
        writer connections this process opens to the index (see ``Lending``): a
        long-lived process wraps its writes in it so that its searches go on during them."""
        key = str(self.db)
        if key in _LENDING:  # a write inside a write: one lending serves both
            yield _LENDING[key]
            return
        lending = _LENDING[key] = Lending(self.db)
        try:
            yield lending
        finally:
            del _LENDING[key]
            lending.end()

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
    waiting = _Waiting(wait)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise IndexBusy(
                    f"another {_holder(path)} is writing this index; waited {wait:.0f}s, "
                    "try again when it ends"
                ) from None
            waiting.say(f"{_holder(path)}, which is writing this index")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)


def _holder(path: Path) -> str:
    """Who holds the write lock, as its holder wrote it down."""
    try:
        h = json.loads(path.read_text() or "{}")
        since = str(h.get("since", ""))[11:19]
        command = str(h["command"])
        named = command if command.startswith("kbx") else f"kbx {command}"
        return f"{named} (pid {h['pid']}, since {since})"
    except (OSError, ValueError, KeyError, TypeError):
        return "kbx process"


class _Waiting:
    """Says once, on the ``kbx.store`` logger, for whom an opener waits, when it has waited
    ``SAY_WAITING`` seconds: a wait may last up to its deadline, which is too long to be
    silent, while most last a few milliseconds and are not worth a line."""

    def __init__(self, wait: float):
        self.wait, self.began, self.said = wait, time.monotonic(), False

    def say(self, whom: str) -> None:
        if not self.said and time.monotonic() - self.began >= SAY_WAITING:
            self.said = True
            log.info("waiting for %s (up to %.0f s)", whom, self.wait)


def _process(pid: int, exe: str) -> str:
    """A process as a person knows it: ``process 1234 (kbx serve)`` from its command line
    where the system shows it (Linux), else the executable DuckDB names."""
    name = Path(exe).name
    with suppress(OSError, ValueError):
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        at = next((i for i, a in enumerate(args) if a == "kbx" or a.endswith("/kbx")), None)
        if at is not None:
            following = args[at + 1] if at + 1 < len(args) else ""
            name = "kbx" if not following or following.startswith("-") else f"kbx {following}"
    return f"process {pid} ({name})"


def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    """``kbx_meta[key] = value``: an UPDATE, or an INSERT for a new key. DuckDB's ``INSERT
    OR REPLACE`` on the primary key costs about three times either (3 ms against 1)."""
    (n,) = con.execute("UPDATE kbx_meta SET value = ? WHERE key = ?", [value, key]).fetchone()
    if not n:
        con.execute("INSERT INTO kbx_meta VALUES (?, ?)", [key, value])


def mark_dirty(con: duckdb.DuckDBPyConnection) -> None:
    """Note, inside the caller's transaction, that the entity layer must be rebuilt whole
    (a write that is not one document's: the gazetteer, a recognizer's version, a
    resolver's answers): the rebuild clears the mark in its own, so a run killed between
    the two leaves it set."""
    set_meta(con, ENTITIES_DIRTY, DIRTY_ALL)


def mark_stale(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[int]) -> None:
    """Note, inside the caller's transaction, that these documents' rows of the entity
    layer are stale (their text, placements, mentions or metadata changed, or they went):
    the layer may then recompute them alone (``entities/incremental.py``)."""
    if not doc_ids:
        return
    con.execute(
        "INSERT INTO layer_stale SELECT unnest(?) EXCEPT SELECT doc_id FROM layer_stale",
        [list(doc_ids)],
    )
    if not is_dirty(con):
        con.execute("INSERT INTO kbx_meta VALUES (?, ?)", [ENTITIES_DIRTY, DIRTY_DOCS])


def mark_units_stale(con: duckdb.DuckDBPyConnection, unit_hashes: Sequence[str]) -> None:
    """``mark_stale`` for the documents that place these units (their mentions changed)."""
    if not unit_hashes:
        return
    docs = con.execute(
        "SELECT DISTINCT pl.doc_id FROM placements pl JOIN units u USING (unit_id) "
        "WHERE list_contains(?, u.unit_hash)",
        [list(unit_hashes)],
    ).fetchall()
    mark_stale(con, [d for (d,) in docs])
    if not is_dirty(con):  # units no document places: the next sweep drops them
        con.execute("INSERT INTO kbx_meta VALUES (?, ?)", [ENTITIES_DIRTY, DIRTY_DOCS])


RUNS = "runs_generation"  # kbx_meta key: bumped by every write of runs or recognizer_info
VECTORS = "vectors_generation"  # kbx_meta key: bumped by every write of vectors (vectors/)


def runs_changed(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the caller's transaction: which units each recognizer has run on (or its
    version) changed, so what a search remembers of it (``pending_names``) is old."""
    bump(con, RUNS)


def is_dirty(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT 1 FROM kbx_meta WHERE key = ?", [ENTITIES_DIRTY]).fetchone())


class WriterLease:
    """The writer connection, kept across short writes: opening the file costs 20-30 ms
    of CPU (a new DuckDB instance), and closing it checkpoints. Other processes need it
    free now and then, so callers let it go before slow work and whenever ``expired``: a
    reader or another writer is waiting for the file (each says so in a marker, see
    ``connect``), or it was held ``hold`` seconds (which bounds the log a crash leaves).
    Each write still commits on its own; this only spares the reopening. Reopened after
    letting a reader in, it first gives the reader a moment to open the file."""

    def __init__(self, index: Index, hold: float = 30.0):
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
        waiting_writer = _fresh(_marker(self.index.db, WRITER_MARK))
        return waiting_writer or time.monotonic() - self._opened > self.hold

    def release(self) -> None:
        if self._cm is not None:
            cm, self._cm, self._con = self._cm, None, None
            cm.__exit__(None, None, None)

    def __enter__(self) -> WriterLease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class Held:
    """A connection the caller holds, in the shape of a ``WriterLease`` that never lets go:
    for the steps that let the file go between their reads and writes where a lease is
    given, and work as well on a connection held throughout (a test's, a migration's)."""

    expired = False

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con = con

    def con(self) -> duckdb.DuckDBPyConnection:
        return self._con

    def release(self) -> None:
        pass


def held(lease: WriterLease | Held | duckdb.DuckDBPyConnection) -> WriterLease | Held:
    """A lease as given, or a connection as one that is ``Held``."""
    return lease if isinstance(lease, (WriterLease, Held)) else Held(lease)


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


class _Lent:
    """A connection the lending reads on, and how many of its cursors are out."""

    def __init__(self, con: duckdb.DuckDBPyConnection, cm=None, path: Path | None = None):
        self.con, self.cm = con, cm  # cm: the context manager that opened it, if any
        self.path = path  # else the file it is attached to, which closing it detaches
        self.out = 0
        self.closing = False  # being let go: lend no more cursors of it


class Lending:
    """Lets this process's readers of one index go on while the process writes it
    (``Index.lending``), instead of waiting for the whole write.

    DuckDB shares one database instance between the connections that a process opens to
    a file with one configuration, and a cursor of it reads the last committed state
    (MVCC) while another connection writes; but it cannot open the file read-only beside
    a writer. So while a writer connection is open, readers borrow cursors of a connection
    the lending opens beside it (the same instance), each reading in one transaction: all
    of a reader's statements see one committed state, and a document, committed whole by
    its batch, is seen before or after, never half. Between two writer connections (a
    write lets the file go before slow work, such as a model's batch, and for readers of
    other processes), they read on a read-only connection instead.

    The connection beside a writer is closed just before the writer's, so the database
    closes with it as it did before (its log checkpointed while readers still read): it
    must, since another process waits for the file to be let go. Each switch waits only for
    the cursors out (a search's milliseconds)."""

    def __init__(self, path: Path):
        self.path = path
        self._cond = threading.Condition()
        self._writers = 0  # writer connections opening, open or closing
        self._beside: _Lent | None = None  # beside the open writer: its database
        self._reading: _Lent | None = None  # while no writer is open: read-only
        self._ended = False
        self._mine = threading.local()  # the connection this thread reads on, if any

    def borrow(self):
        """A cursor (a context manager) in a read transaction, waiting while a writer
        connection opens or closes; None once the lending has ended."""
        held = getattr(self._mine, "lent", None)
        with self._cond:
            while held is None:  # a reader inside a reader: its connection waits for it
                if self._ended:
                    return None
                if self._beside and not self._beside.closing:
                    held = self._beside
                elif not self._writers:
                    if self._reading is None:  # the file is free of this process's writers
                        cm = connect(self.path, read_only=True)
                        self._reading = _Lent(cm.__enter__(), cm)
                    if not self._reading.closing:
                        held = self._reading
                if held is None:
                    self._cond.wait()
            held.out += 1
        return self._cursor(held)

    @contextmanager
    def _cursor(self, lent: _Lent) -> Iterator:
        before = getattr(self._mine, "lent", None)
        cur = None
        try:
            cur = cursor(lent.con)
            cur.execute("BEGIN TRANSACTION")  # read-only: it never conflicts with the writer
            self._mine.lent = lent
            yield cur
        finally:
            self._mine.lent = before
            if cur is not None:
                cur.close()  # and its transaction with it
            with self._cond:
                lent.out -= 1
                self._cond.notify_all()

    def opening(self) -> None:
        """A writer connection is about to open: the read-only one goes first."""
        with self._cond:
            self._writers += 1
            self._let_go("_reading")

    def opened(self) -> None:
        """A writer connection is open (the database exists): lend one beside it."""
        with self._cond:
            if self._beside is None:
                self._beside = _Lent(_HOST.open(self.path, read_only=False), path=self.path)
            self._cond.notify_all()

    def closing(self, con: duckdb.DuckDBPyConnection) -> None:
        """A writer connection is about to close: if it is the last, checkpoint its log
        while readers still read (the close then has nothing to write), and let the
        connection beside it go first."""
        with self._cond:
            last = self._writers == 1
        if last:
            with suppress(duckdb.Error):
                con.execute("CHECKPOINT")
            with self._cond:
                self._let_go("_beside")

    def closed(self) -> None:
        """A writer connection closed, or failed to open."""
        with self._cond:
            self._writers -= 1
            self._cond.notify_all()

    def end(self) -> None:
        with self._cond:
            self._ended = True
            self._let_go("_beside")
            self._let_go("_reading")
            self._cond.notify_all()

    def _let_go(self, which: str) -> None:
        """Close a connection once its cursors are back (the caller holds ``_cond``); not
        one this thread reads on, which would wait for itself."""
        lent = getattr(self, which)
        if lent is None or getattr(self._mine, "lent", None) is lent:
            return
        lent.closing = True
        self._cond.wait_for(lambda: lent.out == 0)
        setattr(self, which, None)
        if lent.cm is not None:
            lent.cm.__exit__(None, None, None)
        else:
            _HOST.close(lent.path, lent.con)
        self._cond.notify_all()


_LENDING: dict[str, Lending] = {}  # index file -> its lending, while a write lends


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
    waiting = _Waiting(wait)
    lending = None if read_only else _LENDING.get(str(path))
    if lending is not None:
        lending.opening()
    try:
        while True:
            if read_only and _fresh(writer) and time.monotonic() < deadline:
                waiting.say("another kbx process to write this index first")
                time.sleep(delay)
                delay = min(delay * 1.5, 0.2)
                continue
            try:
                con = _HOST.open(path, read_only)
                break
            except _InUse as e:  # this process reads it: another thread will let it go
                if time.monotonic() > deadline:
                    raise IndexBusy(
                        f"the index is busy: this process reads it; tried for {wait:.0f}s"
                    ) from e
                time.sleep(delay)
                delay = min(delay * 1.5, 0.5)
            except duckdb.IOException as e:
                if read_only and not Path(path).exists():
                    raise IndexNotFound(
                        f"no index at {path}; `kbx index FOLDER` makes one"
                    ) from None
                m = _LOCK.search(str(e))
                if any(w in str(e) for w in ("Permission denied", "Read-only file system")):
                    raise IndexUnwritable(
                        f"cannot open {path} for {'reading' if read_only else 'writing'}: "
                        f"{str(e).splitlines()[0]}"
                    ) from None
                if not m and "lock" not in str(e).lower():
                    raise SchemaError(f"cannot open {path}: {str(e).splitlines()[0]}") from e
                who = _process(int(m.group(2)), m.group(1)) if m else "another process"
                doing = "is writing to it" if read_only else "has it open"
                if time.monotonic() > deadline:
                    raise IndexBusy(
                        f"the index is busy: {who} {doing}; tried for {wait:.0f}s, "
                        "try again shortly"
                    ) from e
                holds = "is writing to the index" if read_only else "has the index open"
                waiting.say(f"{who}, which {holds}")
                with suppress(OSError):
                    mine.touch()
                time.sleep(delay)
                delay = min(delay * 1.5, 0.5)
            except duckdb.Error as e:
                raise SchemaError(f"cannot open {path}: {str(e).splitlines()[0]}") from e
    except BaseException:
        if lending is not None:
            lending.closed()
        raise
    finally:
        with suppress(OSError):
            mine.unlink(missing_ok=True)
    try:
        con.execute("SET enable_progress_bar = false")  # kbx draws its own, on stderr
        if read_only:
            check_readable(con)
        else:
            ensure_schema(con, root or "")
        if lending is not None:
            lending.opened()
        yield con
    finally:
        try:
            if lending is not None:
                lending.closing(con)
        finally:
            _HOST.close(path, con)
            if lending is not None:
                lending.closed()


class _InUse(Exception):
    """The file is attached read-only in this process, and a writer wants it."""


@dataclass
class _Attached:
    alias: str  # the file's name in the host's catalog
    read_only: bool
    users: int = 0


@dataclass
class _Host:
    """The process's one DuckDB instance, in memory, with each open index file ATTACHed
    to it under an alias of its own while someone has it open, and detached (which
    checkpoints the log and lets the file's lock go) when the last one closes it.

    ``open`` hands out a cursor of the instance whose default database is the file (``USE``),
    so queries name tables as they did on a connection of their own; a reader beside this
    process's writer shares the writer's attachment (DuckDB attaches a file once), reading
    committed state as any cursor does. A forked child starts its own instance: the
    parent's threads do not cross a fork."""

    con: duckdb.DuckDBPyConnection | None = None
    files: dict[str, _Attached] = field(default_factory=dict)
    aliases: dict[int, str] = field(default_factory=dict)  # id(cursor) -> its file's alias
    lock: threading.Lock = field(default_factory=threading.Lock)
    serial: itertools.count = field(default_factory=itertools.count)

    def open(self, path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
        key = str(path)
        with self.lock:
            if self.con is None:  # spills go to the system's temp folder, never the cwd
                spill = Path(tempfile.gettempdir(), f"kbx-duckdb-{os.getpid()}")
                config: dict[str, str | int] = {"temp_directory": str(spill)}
                if threads := _threads():
                    config["threads"] = threads
                self.con = duckdb.connect(":memory:", config=config)
            att = self.files.get(key)
            if att is None:
                alias = f"kbx_{next(self.serial)}"
                quoted = key.replace("'", "''")
                mode = " (READ_ONLY)" if read_only else ""
                self.con.execute(f"ATTACH '{quoted}' AS {alias}{mode}")
                att = self.files[key] = _Attached(alias, read_only)
            elif att.read_only and not read_only:
                raise _InUse(key)
            att.users += 1
            try:
                cur = self.con.cursor()
                cur.execute(f"USE {att.alias}")
            except BaseException:
                self._leave(key)
                raise
            self.aliases[id(cur)] = att.alias
            return cur

    def close(self, path: Path, cur: duckdb.DuckDBPyConnection) -> None:
        with self.lock:
            self.aliases.pop(id(cur), None)
            try:
                cur.close()  # a transaction still open rolls back
            finally:
                self._leave(str(path))

    def _leave(self, key: str) -> None:
        att = self.files[key]
        att.users -= 1
        if att.users == 0:
            del self.files[key]
            self.con.execute(f"DETACH {att.alias}")

    def forget(self) -> None:
        """In a forked child: leave the parent's instance alone (its threads are not
        here) and start afresh on the next open."""
        if self.con is not None:
            _ABANDONED.append(self.con)  # never closed here: closing waits for its threads
        self.con, self.files, self.aliases = None, {}, {}
        self.lock = threading.Lock()


def _threads() -> int:
    """DuckDB's worker threads, from ``KBX_DUCKDB_THREADS`` (unset or 0: DuckDB's default,
    one per core). One is cheaper where other processes already fill the cores and the
    index is small: a small index's statements cost more in handing out tasks than in work
    (the entity rebuild of a one-file index: 58 against 70 ms of CPU)."""
    value = os.environ.get("KBX_DUCKDB_THREADS", "").strip() or "0"
    if not value.isdigit():
        raise BadArgument(f"KBX_DUCKDB_THREADS must be a whole number, not {value!r}")
    return int(value)


_HOST = _Host()
_ABANDONED: list[duckdb.DuckDBPyConnection] = []
os.register_at_fork(after_in_child=_HOST.forget)


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Another cursor on the index ``con`` reads (DuckDB's own ``cursor()`` would start in
    the host's in-memory database); close it with ``close()`` as usual."""
    cur = con.cursor()
    alias = _HOST.aliases.get(id(con))
    if alias is not None:
        cur.execute(f"USE {alias}")
    return cur


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
