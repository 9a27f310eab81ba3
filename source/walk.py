"""Which files an index holds: supported formats less ignores and hidden folders."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from kbx.extract import format_of

IGNORE_FILE = ".kbxignore"


@dataclass(frozen=True)
class Found:
    """A file the walk found: its path relative to the root, and its stat or why it has none."""

    rel: str
    size: int = 0
    mtime_ns: int = 0
    error: str | None = None


def _spec(folder: Path) -> tuple[pathspec.PathSpec | None, list[str]]:
    """The folder's ignore patterns, and a line for each pattern that cannot be compiled
    (``[z-a]``, a lone ``\\``): it is dropped, the others still apply."""
    path = folder / IGNORE_FILE
    try:
        lines = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return None, []
    good, bad = [], []
    for n, line in enumerate(lines, start=1):
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except Exception as e:  # re.error, GitIgnorePatternError, …
            why = str(e).split(" at position")[0]
            bad.append(f"line {n}: bad pattern {line!r} ({why}); pattern not applied")
            continue
        good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good), bad


def walk(root: Path, hidden: bool = False) -> Iterator[Found]:
    """Files kbx reads under ``root``, in a stable order; unreadable entries say why.

    Symbolic links are followed only when they stay inside the root, and each real
    folder is visited once, so link loops end.
    """
    root = root.resolve()
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Path, list[tuple[Path, pathspec.PathSpec]]]] = [(root, [])]
    while stack:
        folder, specs = stack.pop()
        try:
            st = folder.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        spec, bad = _spec(folder)
        if spec:
            specs = [*specs, (folder, spec)]
        if bad:
            rel_ignore = _rel(folder / IGNORE_FILE, root)
            yield Found(rel_ignore, error=f"ignore file {'; '.join(bad)}")
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            yield Found(_rel(folder, root) + "/", error=f"cannot list folder: {e.strerror}")
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith(".") and not hidden:
                continue
            path = Path(entry.path)
            rel = _rel(path, root)
            if _ignored(path, specs, entry):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir and entry.is_symlink() and not _inside(path, root):
                continue
            if not is_dir and format_of(entry.name) is None:
                continue
            if not _utf8(rel):  # the index stores paths as UTF-8 text
                shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
                yield Found(
                    shown + ("/" if is_dir else ""),
                    error="name is not valid UTF-8 (shown with \\x escapes); rename it to index it",
                )
                continue
            if is_dir:
                subfolders.append((path, specs))
                continue
            yield _stat(path, rel, root)
        stack.extend(reversed(subfolders))


def _stat(path: Path, rel: str, root: Path) -> Found:
    try:
        st = path.stat()
    except OSError as e:
        reason = "symbolic link loop" if e.errno == errno.ELOOP else e.strerror or str(e)
        return Found(rel, error=reason)
    if path.is_symlink() and not _inside(path, root):
        return Found(rel, error="symbolic link to a file outside the indexed root")
    if not stat.S_ISREG(st.st_mode):  # reading a named pipe would wait forever
        return Found(rel, error=f"not a regular file ({kind_of(st.st_mode)}); skipped")
    return Found(rel, st.st_size, st.st_mtime_ns)


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a reason a user reads."""
    for test, name in (
        (stat.S_ISFIFO, "named pipe"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISDIR, "folder"),
    ):
        if test(mode):
            return name
    return "special file"


def _utf8(name: str) -> bool:
    """False for a name with bytes that are not UTF-8 (Python keeps them as surrogates)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _ignored(path: Path, specs: list[tuple[Path, pathspec.PathSpec]], entry: os.DirEntry) -> bool:
    for base, spec in specs:
        rel = path.relative_to(base).as_posix()
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if spec.match_file(rel + "/" if is_dir else rel):
            return True
    return False
