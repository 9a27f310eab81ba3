"""One index kept warm for a long-lived process, polite to every other process.

Opening the DuckDB file costs about 12 ms, more than a warm query, so the server keeps one
read-only connection and gives each request its own cursor on it. DuckDB lets no process
write while another holds the file, so the connection is kept at most ``hold`` seconds:
then new requests wait for the ones in flight, it is closed, and the next one reopens it
through the store's ``connect``, which steps back while a writer waits. A ``kbx index``
from a shell therefore waits about a second, never fails.

A write of this process (a re-index by the watcher, a gazetteer edit) takes the index's
write lock as any writing command does (readers go on while it waits for another
process). Then the warm connection is let go (the searches in flight finish first,
milliseconds) and, while the write runs, readers borrow their cursors from the store's
lending (``Index.lending``): beside the write's open connection, a connection to the same
DuckDB database, read in snapshots of what the write has committed; between two of its
connections, a read-only one. So searches go on during the write, waiting only while it
switches connections, and see each document before or after it, never half. Once it is
done, reading returns to a warm connection, let go again every ``hold`` seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from kbx import api

T = TypeVar("T")
HOLD = 1.0  # seconds one connection serves before it is let go for writers


class _Warm:
    """The shared connection, its readers, and the switch to a write's connection."""

    def __init__(self, index: api.Index, hold: float):
        self.index, self.hold = index, hold
        self.cond = threading.Condition()
        self.users = 0  # cursors of the read-only connection out
        self.queued = False  # a write of this process is waiting or running
        self.switching = False  # the read-only connection is being let go: readers wait
        self.lending = None  # while a write runs, the lending of its connections
        self.expired = False
        self.mine = threading.local()  # this thread's readers open
        self._cm = None
        self._con = None
        self._timer: threading.Timer | None = None

    def _open(self):
        cm = api.Index.reader(self.index)
        self._con = cm.__enter__()  # may wait for a writer, or say the index is busy
        self._cm = cm
        self.expired = False
        self._timer = threading.Timer(self.hold, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._cm is not None:
            cm, self._cm, self._con = self._cm, None, None
            cm.__exit__(None, None, None)
        self.expired = False
        self.cond.notify_all()

    def _expire(self) -> None:
        with self.cond:
            self.expired = True
            if self.users == 0:
                self._close()

    @contextmanager
    def cursor(self) -> Iterator:
        nested = getattr(self.mine, "depth", 0)  # a reader inside a reader must not wait
        self.mine.depth = nested + 1
        try:
            with self._cursor(nested) as cur:
                yield cur
        finally:
            self.mine.depth = nested

    @contextmanager
    def _cursor(self, nested: int) -> Iterator:
        while True:
            with self.cond:
                if not nested:
                    self.cond.wait_for(
                        lambda: (
                            not self.switching and (self.lending is not None or not self.expired)
                        )
                    )
                lending = self.lending
                if lending is None:
                    if self._con is None:
                        self._open()
                    cur = api._cursor(self._con)
                    self.users += 1
                    break
            lent = lending.borrow()  # None once the write is over
            if lent is not None:
                with lent as cur:
                    yield cur
                return
        try:
            yield cur
        finally:
            cur.close()
            with self.cond:
                self.users -= 1
                if self.users == 0 and self.expired:
                    self._close()
                elif self.users == 0:  # a write waiting for the last read goes now, not at
                    self.cond.notify_all()  # the connection's expiry (up to HOLD later)

    def write(self, fn: Callable[[], T], command: str) -> T:
        with self.cond:  # one write of this process at a time
            self.cond.wait_for(lambda: not self.queued)
            self.queued = True
        try:
            # The index's write lock first: readers go on while another process writes.
            with api.Index.writing(self.index, command):
                try:
                    with api.Index.lending(self.index) as lending:
                        with self.cond:  # the read-only connection goes: no writer beside it
                            self.switching = True
                            self.cond.wait_for(lambda: self.users == 0)
                            self._close()
                            self.lending, self.switching = lending, False
                            self.cond.notify_all()
                        try:
                            return fn()
                        finally:
                            with self.cond:  # readers wait for the warm connection again
                                self.switching = True
                finally:  # the lending is over: its connection is closed
                    with self.cond:
                        self.lending, self.switching = None, False
                        self.cond.notify_all()
        finally:
            with self.cond:
                self.queued = False
                self.cond.notify_all()

    def shut(self) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.users == 0)
            self._close()


@dataclass(frozen=True)
class LiveIndex(api.Index):
    """An ``Index`` whose readers share one warm connection (see the module's docstring);
    every API function takes it where it takes an ``Index``. Every write of the process
    goes through ``write``: the store's lock is re-entrant within a process, so it cannot
    keep two threads apart."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_warm", _Warm(self, HOLD))
        api._stay_warm()  # this process answers many queries: map the postings at any size

    @classmethod
    def of(cls, index: api.Index) -> LiveIndex:
        return cls(index.db, index.root)

    def reader(self):
        """A cursor on the warm connection; during a write, a cursor of the write's."""
        return self._warm.cursor()

    def write(self, fn: Callable[[], T], command: str = "kbx serve") -> T:
        """Run ``fn`` (a writing API call) under the index's write lock; searches go on
        while the lock is awaited and while ``fn`` writes (see the module's docstring)."""
        return self._warm.write(fn, command)

    def close(self) -> None:
        """Let the file go once the requests in flight are done."""
        self._warm.shut()
