"""Which files an index holds: supported formats less ignores and hidden folders."""

from __future__ import annotations

import errno
import os
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


def _spec(folder: Path) -> pathspec.PathSpec | None:
    path = folder / IGNORE_FILE
    try:
        return pathspec.GitIgnoreSpec.from_lines(path.read_text("utf-8", "replace").splitlines())
    except OSError:
        return None


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
        spec = _spec(folder)
        if spec:
            specs = [*specs, (folder, spec)]
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
            if is_dir:
                if entry.is_symlink() and not _inside(path, root):
                    continue
                subfolders.append((path, specs))
                continue
            if format_of(entry.name) is None:
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
    return Found(rel, st.st_size, st.st_mtime_ns)


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
