"""Which files an index holds: supported formats less ignores and hidden folders."""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections import Counter
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


def walk(root: Path, hidden: bool = False, passed: Counter[str] | None = None) -> Iterator[Found]:
    """Files kbx reads under ``root``, in a stable order; unreadable entries say why.
    ``passed``, when given, counts the files passed over for their format, by kind
    (``unread_kind``), so that a folder kbx reads only part of says so.

    Symbolic links are followed only when they stay inside the root, and each real
    folder is visited once, so link loops end.

    Paths are strings here (a folder's relative path and its entries' names joined), not
    ``Path`` objects: the watcher of ``kbx serve`` walks the folder on every save, and at
    42,500 files ``pathlib`` made a walk 7x the cost of its system calls.
    """
    root = root.resolve()
    seen: set[tuple[int, int]] = set()
    # (folder, its path relative to the root ("" for the root), the ignore specs above it,
    # each with the relative path of the folder it sits in)
    stack: list[tuple[Path, str, list[tuple[str, pathspec.PathSpec]]]] = [(root, "", [])]
    while stack:
        folder, folder_rel, specs = stack.pop()
        try:
            st = folder.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        spec, bad = _spec(folder)
        if spec:
            specs = [*specs, (folder_rel, spec)]
        if bad:
            yield Found(_join(folder_rel, IGNORE_FILE), error=f"ignore file {'; '.join(bad)}")
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            yield Found(folder_rel + "/", error=f"cannot list folder: {e.strerror}")
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith(".") and not hidden:
                continue
            rel = _join(folder_rel, entry.name)
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if specs and _ignored(rel, specs, is_dir):
                continue
            if is_dir and entry.is_symlink() and not _inside(Path(entry.path), root):
                continue
            if not is_dir and format_of(entry.name) is None:
                if passed is not None:
                    passed[unread_kind(entry.name)] += 1
                continue
            if not _utf8(rel):  # the index stores paths as UTF-8 text
                shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
                yield Found(
                    shown + ("/" if is_dir else ""),
                    error="name is not valid UTF-8 (shown with \\x escapes); rename it to index it",
                )
                continue
            if is_dir:
                subfolders.append((Path(entry.path), rel, specs))
                continue
            yield _stat(entry, rel, root)
        stack.extend(reversed(subfolders))


def unread_kind(name: str) -> str:
    """How a file kbx does not read is counted: its extension, lowercased, with the inner
    one of a gzipped file (``.json.gz``), or "no extension"."""
    name = name.lower()
    gz = name.endswith(".gz") and len(name) > 3
    ext = posixpath.splitext(name[:-3] if gz else name)[1]
    return (ext + ".gz" if gz else ext) if ext or gz else "no extension"


def _join(folder_rel: str, name: str) -> str:
    return f"{folder_rel}/{name}" if folder_rel else name


def _stat(entry: os.DirEntry, rel: str, root: Path) -> Found:
    try:
        st = entry.stat()  # follows a link, as ``Path.stat``
    except OSError as e:
        reason = "symbolic link loop" if e.errno == errno.ELOOP else e.strerror or str(e)
        return Found(rel, error=reason)
    if entry.is_symlink() and not _inside(Path(entry.path), root):
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


def _ignored(rel: str, specs: list[tuple[str, pathspec.PathSpec]], is_dir: bool) -> bool:
    """Whether an ignore file above ``rel`` matches it (a pattern reads a path relative to
    the folder of its file)."""
    for base, spec in specs:
        below = rel[len(base) + 1 :] if base else rel
        if spec.match_file(below + "/" if is_dir else below):
            return True
    return False
