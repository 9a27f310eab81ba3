"""The live index: while a server runs, the indexed folder is watched and what changed is
brought in through the same ingest path as ``kbx index``.

watchfiles (inotify, FSEvents, ReadDirectoryChangesW) groups a burst of events (an
editor's save in three steps, a ``git checkout``) into one set: it yields once no event
came for ``step`` ms, or after ``debounce`` ms at most. Each set is checked against the
folder as the walk of ``kbx index`` sees it (``api._walk``: the formats kbx reads,
``.kbxignore``, hidden names), so a change the walk would not pick up (an ignored file,
an editor's swap file, the index's own files) costs one walk and no write. A set that
only modifies, in place, files the last walk listed is checked by a stat of those files
(and of the entries that share their old stat: links to them) instead of a walk, since
nothing else a walk sees can have changed (``Watcher._restat``).

Otherwise the whole folder is re-indexed with ``api.index``, given that walk (``walked``)
so the folder is walked once per change, not twice: a run over unchanged files only
compares their stats (about 0.2 s on examples/, most of it the run's fixed cost; a walk
of 42,500 files costs about half a second). It runs as a write of the live index
(``LiveIndex.write``): searches go on during it, on cursors of its connection, and see
what it has committed so far: each document as it was or as it is, never half written
(ingest commits a document whole, in one transaction, and a search reads in one).

A failure is logged and the watcher goes on; a busy index (a ``kbx index`` from a shell
holding the lock longer than a writer waits) is tried again every ``TICK`` until it is
free. The first tick after the watch is set up runs once regardless, so a server started
on a folder edited since its last ``kbx index`` catches up.
"""

from __future__ import annotations

import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from kbx import api
from kbx.errors import IndexBusy, KbxError
from kbx.serve.live import LiveIndex

TICK = 0.5  # seconds between wake-ups with no event: a busy index is tried again
Snapshot = dict[str, tuple[int, int, str | None]]  # rel -> size, mtime_ns, walk error


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Watcher:
    """Watches ``index.root`` in a thread of its own and re-indexes it on change, as a
    write of ``index``. ``runs`` counts the re-indexes, ``skipped`` the bursts the walk
    does not see, ``failures`` the re-indexes that failed; ``ready`` is set once the
    folder is watched and the index has caught up with it."""

    def __init__(
        self,
        index: LiveIndex,
        *,
        name: str = "kbx serve",
        log: Callable[[str], None] = _stderr,
        step_ms: int = 50,
        debounce_ms: int = 1600,
    ):
        self.index, self.name, self.log = index, name, log
        self.step_ms, self.debounce_ms = step_ms, debounce_ms
        self.runs = self.skipped = self.failures = 0
        self.last: api.IndexReport | None = None
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._files: Snapshot | None = None
        self._hidden: bool | None = None  # what the snapshot's walk took
        self._retry = False  # the last run found the index busy
        self._failing: dict[str, str] = {}  # path -> error, as the last run failed them
        self._config = index.root / api.CONFIG_FILE

    @property
    def root(self) -> Path:
        return self.index.root

    def start(self) -> Watcher:
        self._thread = threading.Thread(target=self._loop, name="kbx-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 60.0) -> None:
        """Stop watching; a re-index in flight is let finish (it commits or rolls back
        as a whole either way)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wanted(self, _change: watchfiles.Change, path: str) -> bool:
        """Events that may matter: anything under the root but the index's own files
        (every commit writes them: watching them would re-index forever)."""
        p, db = Path(path), self.index.db
        if p.parent == db.parent and p.name.startswith(db.name):  # its file, lock, markers
            return False
        folder = db.parent  # .kbx, unless --db put the file elsewhere
        return not (self.root in folder.parents and (p == folder or folder in p.parents))

    def _loop(self) -> None:
        try:
            for changes in watchfiles.watch(
                self.root,
                watch_filter=self._wanted,
                step=self.step_ms,
                debounce=self.debounce_ms,
                stop_event=self._stop,
                rust_timeout=int(TICK * 1000),
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if not self.ready.is_set():  # the folder is watched from here on
                    self._sync(changes, first=True)
                    self.ready.set()
                elif changes or self._retry:
                    self._sync(changes)
        except Exception as e:  # the server goes on without a watcher, and says so
            self.log(f"{self.name}: stopped watching {self.root}: {type(e).__name__}: {e}")
        finally:
            self.ready.set()

    def _walk(self) -> tuple[bool, list]:
        """The folder as the next run walks it: hidden files too when the index keeps them
        (``kbx index --hidden`` is remembered, and so is its size cap). The run is given
        this walk rather than making its own: each costs a stat per file."""
        _, hidden = api._walk_of(self.index)
        return hidden, list(api._walk(self.root, hidden=hidden))

    def _restat(self, changes: set[tuple[watchfiles.Change, str]]) -> Snapshot | None:
        """The snapshot with the changed files stat'ed again, where every change is a file
        the last walk listed, modified in place and still a regular file: then no other
        entry of a walk could differ but a link to one of them (or a hard link), whose
        stat is the file's, so the entries of its old size and mtime are stat'ed again
        too. None where a walk must decide (a file added, deleted or renamed, a folder,
        an ignore file, the setup, a hidden setting changed): a stat per changed file
        instead of one per file of the folder (42,500 files: 0.7 s)."""
        old = self._files
        if old is None or api._walk_of(self.index)[1] != self._hidden:
            return None
        files = dict(old)
        for change, path in changes:
            try:
                rel = Path(path).relative_to(self.root).as_posix()
            except ValueError:
                return None
            if change != watchfiles.Change.modified or rel not in old or old[rel][2]:
                return None
            size, mtime_ns, _ = old[rel]
            for other in [r for r, v in old.items() if v[:2] == (size, mtime_ns)]:
                try:
                    st = (self.root / other).stat()
                except OSError:
                    return None
                if not stat.S_ISREG(st.st_mode):
                    return None
                files[other] = (st.st_size, st.st_mtime_ns, None)
        return files

    def _sync(self, changes: set[tuple[watchfiles.Change, str]], first: bool = False) -> None:
        """Re-index if the walk sees a change (or the setup changed, or a run is due)."""
        setup = any(Path(p) == self._config for _, p in changes)
        files = None if first or self._retry or setup else self._restat(changes)
        if files is not None:
            hidden = bool(self._hidden)
            found = [api._Found(rel, *v) for rel, v in files.items()]
        else:
            hidden, found = self._walk()
            files = {f.rel: (f.size, f.mtime_ns, f.error) for f in found}
        if not (first or self._retry or setup or files != self._files):
            self.skipped += 1
            return
        self._files, self._hidden = files, hidden
        started = time.monotonic()
        try:
            report = self.index.write(
                lambda: api.index(self.root, self.index.db, walked=(hidden, found)),
                f"{self.name} (watching)",
            )
        except IndexBusy as e:
            if not self._retry:
                self.log(f"{self.name}: {e}; re-indexing when it is free")
            self._retry = True
            return
        except Exception as e:  # a failed run must not stop the server or the watcher
            self._retry = False
            self.failures += 1
            why = str(e) if isinstance(e, KbxError) else f"{type(e).__name__}: {e}"
            self.log(f"{self.name}: re-index failed: {why}")
            return
        self._retry = False
        self.runs += 1
        failing = {f["path"]: f["error"] for f in report.failures}
        if report.new or report.updated or report.removed or failing != self._failing:
            self.log(f"{self.name}: {_summary(report, time.monotonic() - started)}")
        self.last, self._failing = report, failing


def _summary(r: api.IndexReport, seconds: float) -> str:
    """One line: what a re-index changed, and which files it could not read."""
    counts = [
        f"{n} {what}"
        for n, what in (
            (r.new, "new"),
            (r.updated, "updated"),
            (r.removed, "removed"),
            (r.failed, "failed"),
            (r.skipped, "skipped"),
        )
        if n
    ]
    line = f"re-indexed in {seconds:.2f} s: {', '.join(counts)}"
    if r.failures:
        shown = "; ".join(f"{f['path']}: {f['error']}" for f in r.failures[:3])
        more = f" (and {len(r.failures) - 3} more)" if len(r.failures) > 3 else ""
        line += f" ({shown}{more})"
    return line
