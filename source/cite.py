"""Cited paths and line ranges: ``PATH:START-END`` parsed, a path resolved inside the
root, and a file's bytes read without blocking. Files on disk only, no database."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from kbx.errors import BadArgument, OutsideRoot
from kbx.extract import format_of
from kbx.source.walk import kind_of


def parse_spec(spec: str) -> tuple[str, int | None, int | None]:
    """``path[:start[-end]]`` into its parts."""
    m = _SPEC.match(spec)
    if not m:
        raise BadArgument(f"expected PATH[:START[-END]], got {spec!r}")
    if format_of(m["path"]) is None:
        _check_range(spec)
    start = _line(m["start"]) if m["start"] else None
    end = _line(m["end"]) if m["end"] else start
    if start is not None and (start < 1 or end < start):
        raise BadArgument(f"bad line range in {spec!r}: lines are 1-based and START <= END")
    return m["path"], start, end


def _line(digits: str) -> int:
    if len(digits) > MAX_LINE_DIGITS:
        raise BadArgument(f"line number {digits[:MAX_LINE_DIGITS]}… is too large")
    return int(digits)


def _check_range(spec: str) -> None:
    """``notes/a.md:abc``: kbx reads no file named so, so the text after the colon is a
    line range gone wrong; say that rather than "no such file"."""
    for at in (i for i, c in enumerate(spec) if c == ":"):
        if format_of(spec[:at]) is not None:
            raise BadArgument(
                f"malformed line range {spec[at + 1 :]!r} in {spec!r}: "
                "expected PATH:START or PATH:START-END (1-based line numbers)"
            )


def resolve(root: Path, path: str) -> tuple[Path, str]:
    """The file a user named (relative to the root, or to the current folder) inside the root."""
    candidates = [root / path, Path(path)] if not Path(path).is_absolute() else [Path(path)]
    for c in candidates:
        try:
            full = c.resolve()
            found = full.exists()
        except (OSError, RuntimeError, ValueError) as e:  # RuntimeError: a link loop (3.11)
            loop = isinstance(e, RuntimeError) or getattr(e, "errno", None) == errno.ELOOP
            raise BadArgument(
                f"cannot read {path}: {'symbolic link loop' if loop else e}"
            ) from None
        if found:
            try:
                return full, full.relative_to(root).as_posix()
            except ValueError:
                raise OutsideRoot(f"{path} is outside the indexed root {root}") from None
    raise BadArgument(f"no such file: {path} (relative to {root})")


def read_regular(full: Path, rel: str) -> bytes:
    """The bytes of a regular file. Opened without blocking and checked before reading,
    since reading a named pipe would wait for a writer forever."""
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise BadArgument(f"cannot read {rel}: {e.strerror or e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise BadArgument(f"cannot read {rel}: it is a {kind_of(mode)}, not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read()
        except OSError as e:
            raise BadArgument(f"cannot read {rel}: {e.strerror or e}") from None


_SPEC = re.compile(r"^(?P<path>.+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$")


MAX_LINE_DIGITS = 12  # far past any file; int() refuses numbers over 4300 digits
