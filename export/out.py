"""Where an export writes: all or nothing. A folder is built beside ``--out`` and renamed to
it when the export is complete, a file is written beside it and moved over it; a failure or
a kill leaves at most a hidden ``.part`` beside it, never a half export under the name."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kbx.errors import BadArgument, KbxError


def _unwritable(out: Path, e: OSError) -> BadArgument:
    return BadArgument(f"cannot write --out {out}: {e.strerror or e}")


def _parent(out: Path) -> Path:
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _unwritable(out, e) from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadArgument(f"cannot write --out {out}: {parent} is not writable")
    return parent


def _as_umask_allows(path: Path, mode: int) -> None:
    """``path`` (made private by tempfile: 0700, 0600) with the mode a plain ``mkdir`` or
    ``open`` would give it under the process's umask, as any other file it writes."""
    mask = os.umask(0)
    os.umask(mask)
    path.chmod(mode & ~mask)


@contextmanager
def folder(out: Path) -> Iterator[Path]:
    """A fresh folder to write into, which becomes ``out`` (new, or an empty folder) at the
    end of the block."""
    if out.exists() and not out.is_dir():
        raise BadArgument(f"--out {out} is a file; this format writes a folder")
    if out.is_dir() and any(out.iterdir()):
        raise BadArgument(f"--out {out} is a folder that is not empty; choose a new one")
    parent = _parent(out)
    try:
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".part", dir=parent))
        _as_umask_allows(work, 0o777)
    except OSError as e:
        raise _unwritable(out, e) from None
    try:
        yield work
        if out.is_dir():
            out.rmdir()
        work.rename(out)
    except OSError as e:
        shutil.rmtree(work, ignore_errors=True)
        raise KbxError(f"writing {out} failed: {e.strerror or e}; nothing was written") from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


@contextmanager
def file(out: Path) -> Iterator[Path]:
    """A fresh file to write into, which replaces ``out`` at the end of the block."""
    if out.is_dir():
        raise BadArgument(f"--out {out} is a folder; this format writes one file")
    parent = _parent(out)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=parent)
        os.close(fd)
        _as_umask_allows(Path(name), 0o666)
    except OSError as e:
        raise _unwritable(out, e) from None
    work = Path(name)
    try:
        yield work
        os.replace(work, out)
    except OSError as e:
        work.unlink(missing_ok=True)
        raise KbxError(f"writing {out} failed: {e.strerror or e}; nothing was written") from None
    except BaseException:
        work.unlink(missing_ok=True)
        raise
