"""``kbx index``'s readers: one file read, hashed, extracted, analyzed and recognized in a
worker, within a time and memory budget, into an ``Outcome`` the writer stores
(``indexing/ingest.py``). A file its parser fails on, or takes past its budget, is read
again as plain text; nothing here touches the index.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kbx.analysis import Analyzer
from kbx.errors import ExtractError, NotItsFormat, OverBudget
from kbx.extract import extract
from kbx.extract.model import READ_IN_PART
from kbx.indexing.prepare import Prepared, prepare
from kbx.source.walk import Found
from kbx.store.workers import each_in_order, timed

AHEAD_BYTES = 64 * 1024 * 1024  # files read ahead of the writer, at most (two per worker)
AS_TEXT = "read as plain text"  # the note on a file its format's parser failed on


def _as_text(why: str) -> str:
    return f"{AS_TEXT}, markup and all ({why})"


@dataclass
class Outcome:
    """What reading one file gave: a document, the same bytes as before, or a failure."""

    rel: str
    size: int = 0
    mtime_ns: int = 0
    sha256: str | None = None
    document: Prepared | None = None  # the rows to store (see indexing.prepare)
    error: str | None = None
    status: str = "ok"  # ok | same | failed | skipped | vanished | unreadable


def read_one(
    root: str,
    found: Found,
    known_sha: str | None,
    max_size: int,
    analyzer: Analyzer,
    skip: frozenset[str] = frozenset(),
) -> Outcome:
    """Read, hash, extract, analyze and recognize one file within its time budget (units in
    ``skip`` are not recognized); a file its parser takes past the budget is read again as
    plain text, within a budget of its own. Runs in a worker; never raises."""
    try:
        return timed(_read_one, root, found, known_sha, max_size, analyzer, skip)
    except OverBudget as e:
        return read_as_text(root, found, known_sha, max_size, analyzer, skip, str(e))


def read_as_text(
    root: str,
    found: Found,
    known_sha: str | None,
    max_size: int,
    analyzer: Analyzer,
    skip: frozenset[str],
    why: str,
) -> Outcome:
    """``read_one`` of a file whose parser ran past its budget (``why``), or killed or hung
    its reader where no alarm reaches (a parser in Rust or C: ``each_in_order``'s
    ``again``): the file as plain text, under a budget of its own; failed with ``why``
    if even that does not go through."""
    try:
        out = timed(_read_one, root, found, known_sha, max_size, analyzer, skip, True)
    except OverBudget:
        return Outcome(found.rel, found.size, found.mtime_ns, error=why, status="failed")
    if out.status == "ok":
        out.error = _as_text(why)
    return out


def _read_one(
    root: str,
    found: Found,
    known_sha: str | None,
    max_size: int,
    analyzer: Analyzer,
    skip: frozenset[str],
    plain: bool = False,
) -> Outcome:
    out = Outcome(found.rel, found.size, found.mtime_ns)
    if found.error:
        out.status, out.error = "unreadable", found.error
        return out
    if found.size > max_size:
        out.status = "skipped"
        out.error = f"larger than the size cap ({found.size:,} > {max_size:,} bytes)"
        return out
    try:
        st, data = _read_inside(root, found.rel, max_size)
    except FileNotFoundError:
        out.status = "vanished"
        return out
    except OSError as e:
        out.status, out.error = "unreadable", e.strerror or str(e)
        return out
    except ExtractError as e:
        out.status, out.error = "skipped", str(e)
        return out
    out.size, out.mtime_ns = st.st_size, st.st_mtime_ns
    out.sha256 = hashlib.sha256(data).hexdigest()
    if out.sha256 == known_sha:
        out.status = "same"
        return out
    try:
        out.document = prepare(extract(found.rel, data, plain, limit=max_size), analyzer, skip)
        partly = [w for w in out.document.warnings if w.startswith(READ_IN_PART)]
        out.error = "; ".join(partly) or None  # in, and said, as a file read as text
    except ExtractError as e:  # an empty file is skipped as such: nothing in it failed
        skipped = not data.strip() or isinstance(e, NotItsFormat)
        out.status, out.error = "skipped" if skipped else "failed", str(e)
    except MemoryError:
        out.document = None
        out.status, out.error = "failed", "over the memory budget for one file"
    except Exception as e:  # a parser bug must not stop the run, nor lose the file's words
        why = f"parser error: {type(e).__name__}: {e}"
        if plain:
            out.document = None
            out.status, out.error = "failed", why
            return out
        try:
            out.document = prepare(
                extract(found.rel, data, plain=True, limit=max_size), analyzer, skip
            )
            out.error = _as_text(why)  # kept with the file, and listed
        except Exception:  # noqa: BLE001 - not even as text: the file is listed as failed
            out.document = None
            out.status, out.error = "failed", why
    return out


def _read_inside(root: str, rel: str, max_size: int) -> tuple[os.stat_result, bytes]:
    """Open first, then check what was opened: a regular file (a FIFO would block; opened
    non-blocking it cannot), within the size cap, and still inside the root, so a symlink
    swapped in after the walk cannot bring in a file from elsewhere."""
    fd = os.open(os.path.join(root, rel), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ExtractError("not a regular file")
        real = _opened_path(fd)
        if real is not None and os.path.commonpath([real, root]) != root:
            raise ExtractError(f"leads outside the indexed folder, to {real}")
        if st.st_size > max_size:
            raise ExtractError(f"larger than the size cap ({st.st_size:,} > {max_size:,} bytes)")
        os.set_blocking(fd, True)
        return st, f.read()


def _opened_path(fd: int) -> str | None:
    """The real path of an open file (Linux); None where the system cannot say."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _trusted_sha(known: dict | None) -> str | None:
    """The hash that lets a file skip extraction: only one that was indexed fine (a file
    that failed is tried again, since a newer kbx may read it)."""
    return known["sha256"] if known and known["status"] == "ok" else None


def read_all(
    root: Path,
    todo: list[Found],
    known: dict,
    placed: dict[str, frozenset[str]],
    max_size: int,
    readers: int,
    analyzer: Analyzer,
) -> Iterator[Outcome]:
    """Every file's outcome in order, read by ``readers`` budgeted workers."""
    args = [
        (
            str(root),
            f,
            _trusted_sha(known.get(f.rel)),
            max_size,
            analyzer,
            placed.get(f.rel, frozenset()),
        )
        for f in todo
    ]
    yield from each_in_order(read_one, args, readers, _died, _job_bytes, AHEAD_BYTES, read_as_text)


def _job_bytes(job: tuple) -> int:
    return job[1].size


def _died(job: tuple, why: str) -> Outcome:
    found: Found = job[1]
    return Outcome(found.rel, found.size, found.mtime_ns, error=why, status="failed")
