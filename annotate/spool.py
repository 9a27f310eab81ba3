"""A dask pass's batches as Arrow IPC files in a folder every worker reads (``[engine]
spool``), so the scheduler carries a path per batch rather than the batch's texts.

Each pass writes in a folder of its own, named by the pass (its plugin's name: the client's
id and a random part), one file per batch numbered in order, and holds an OS lock on the
folder while it runs. The pass removes each file once its batch is back and the folder at
its end; a folder whose lock nobody holds was left by a killed pass, and the next pass to
open the spool removes it. So a file is only ever read by the pass that wrote it.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pyarrow as pa
from filelock import FileLock, Timeout

from kbx.errors import EngineUnavailable

LOCK = ".lock"
PREFIX = "kbx-pass-"  # the passes' folders (the plugin's names); nothing else is touched

# The unit columns a batch row holds (annotate.run.missing), in its order.
UNITS = pa.schema(
    [
        ("unit_hash", pa.string()),
        ("text", pa.string()),
        ("heading_path", pa.list_(pa.string())),
        ("kind", pa.string()),
        ("code_spans", pa.list_(pa.list_(pa.int32()))),
        ("breaks", pa.list_(pa.int32())),
    ]
)


class Unreadable(Exception):
    """A worker could not read a batch's file (raised there, said here)."""


def check(root: Path, run_on_workers) -> None:
    """Make sure this process can write ``root`` and every worker reads what it writes
    there (the same storage, not only the same path), and remove what killed passes left.
    ``run_on_workers(fn, *args)`` runs ``fn`` on each worker and returns their answers."""
    token = uuid.uuid4().hex
    probe = root / f".probe-{token}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe.write_text(token)
    except OSError as e:
        raise EngineUnavailable(
            f"cannot write the spool folder {root} ({type(e).__name__}: {e.strerror or e}); "
            "give [engine] spool a folder this process can write and every worker reads"
        ) from None
    try:
        answers = run_on_workers(_read_probe, str(probe))
    finally:
        probe.unlink(missing_ok=True)
    blind = sorted(w for w, seen in answers.items() if seen != token)
    if blind:
        raise EngineUnavailable(
            f"the Dask worker{'s' if len(blind) > 1 else ''} {', '.join(blind)} cannot read "
            f"the spool folder {root}; give [engine] spool a folder on storage every worker "
            "mounts at the same path, or leave it out to ship batches through the scheduler"
        )
    sweep(root)


def _read_probe(path: str) -> str | None:
    """On a worker: the probe's token, or None when it cannot see the file."""
    try:
        return Path(path).read_text()
    except OSError:
        return None


def sweep(root: Path) -> list[str]:
    """Remove the folders of passes that are gone (their lock is free); returns their names."""
    removed = []
    for folder in sorted(root.glob(f"{PREFIX}*")):
        lock = _lock(folder / LOCK, create=False)
        if lock is None:  # held: that pass is running
            continue
        shutil.rmtree(folder, ignore_errors=True)
        lock.release()
        removed.append(folder.name)
    return removed


def _lock(path: Path, create: bool) -> FileLock | None:
    """An exclusive OS lock on ``path`` (flock, or msvcrt on Windows), held; None when
    another process (or another lock of this one) holds it, or, with ``create`` false, when
    there is no such file. Never a lock file alone: a killed pass's must not look held."""
    if not create and not path.is_file():
        return None
    lock = FileLock(
        path, timeout=0, thread_local=False, fallback_to_soft=False, preserve_lock_file=True
    )
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock


class Spool:
    """One pass's folder of batch files, locked while the pass runs."""

    def __init__(self, root: Path, name: str):
        # made under a hidden name and locked before it appears under its own, so a sweep
        # never sees it unlocked
        hidden = root / f".{name}"
        hidden.mkdir()
        self.lock = _lock(hidden / LOCK, create=True)
        self.folder = hidden.rename(root / name)
        self.batches = 0

    def write(self, batch: list[tuple]) -> str:
        """The batch's unit rows as the pass's next file; its path."""
        self.batches += 1
        path = self.folder / f"batch-{self.batches:06}.arrow"
        columns = list(zip(*[_padded(row) for row in batch], strict=True))
        table = pa.Table.from_arrays(
            [pa.array(c, f.type) for c, f in zip(columns, UNITS, strict=True)], schema=UNITS
        )
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, UNITS) as out:
            out.write_table(table)
        return str(path)

    def done(self, path: str) -> None:
        """The batch is back: its file goes."""
        Path(path).unlink(missing_ok=True)

    def close(self) -> None:
        """The pass is over: its folder goes, then its lock."""
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.lock is not None:
            self.lock.release()


def _padded(row: tuple) -> tuple:
    """A batch row with every unit column (annotate.run reads a missing one as none)."""
    return tuple(row) + (None,) * (len(UNITS) - len(row))


def read(path: str) -> list[tuple]:
    """On a worker: a batch file's unit rows, as the pass selected them."""
    try:
        with pa.memory_map(path) as source:
            table = pa.ipc.open_file(source).read_all()
    except OSError as e:
        raise Unreadable(f"{path}: {e}") from None
    return list(zip(*(c.to_pylist() for c in table.columns), strict=True))
