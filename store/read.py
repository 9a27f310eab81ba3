"""``kbx read``: the original lines a result cites, and whether the file changed since."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from kbx.errors import BadArgument, OutsideRoot
from kbx.extract import format_of, source_text
from kbx.store.db import Index

_SPEC = re.compile(r"^(?P<path>.+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$")


@dataclass
class Excerpt:
    """Lines ``start_line..end_line`` (inclusive, 1-based) of one file."""

    path: str
    start_line: int
    end_line: int
    hash: str
    lines: list[str]
    indexed_hash: str | None
    changed: bool


def parse_spec(spec: str) -> tuple[str, int | None, int | None]:
    """``path[:start[-end]]`` into its parts."""
    m = _SPEC.match(spec)
    if not m:
        raise BadArgument(f"expected PATH[:START[-END]], got {spec!r}")
    start = int(m["start"]) if m["start"] else None
    end = int(m["end"]) if m["end"] else start
    if start is not None and (start < 1 or end < start):
        raise BadArgument(f"bad line range in {spec!r}: lines are 1-based and START <= END")
    return m["path"], start, end


def resolve(index: Index, path: str) -> tuple[Path, str]:
    """The file a user named (relative to the root, or to the current folder) inside the root."""
    candidates = [index.root / path, Path(path)] if not Path(path).is_absolute() else [Path(path)]
    for c in candidates:
        full = c.resolve()
        if full.exists():
            try:
                return full, full.relative_to(index.root).as_posix()
            except ValueError:
                raise OutsideRoot(f"{path} is outside the indexed root {index.root}") from None
    raise BadArgument(f"no such file: {path} (relative to {index.root})")


def read(index: Index, spec: str, expect_hash: str | None = None) -> Excerpt:
    """The cited lines of a file, flagging a file that changed since it was indexed."""
    path, start, end = parse_spec(spec)
    full, rel = resolve(index, path)
    if format_of(rel) is None:
        raise BadArgument(f"kbx does not index this kind of file: {rel}")
    data = full.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    with index.reader() as con:
        row = con.execute("SELECT sha256 FROM documents WHERE path = ?", [rel]).fetchone()
    indexed = row[0] if row else None
    text, _ = source_text(rel, data)
    lines = text.replace("\r\n", "\n").split("\n")
    start = start or 1
    end = min(end or len(lines), len(lines))
    if start > len(lines):
        raise BadArgument(f"{rel} has {len(lines)} lines; line {start} does not exist")
    if expect_hash is not None:
        expect = expect_hash.lower()
        if len(expect) < 6 or not re.fullmatch(r"[0-9a-f]+", expect):
            raise BadArgument("--hash takes the hex file hash a result printed (at least 6 digits)")
        changed = not sha.startswith(expect)
    else:
        changed = indexed is not None and indexed != sha
    return Excerpt(rel, start, end, sha, lines[start - 1 : end], indexed, changed)
