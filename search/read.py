"""``kbx read``: the original lines a result cites, and whether the file changed since."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from kbx.errors import BadArgument, ExtractError, KbxError
from kbx.extract import format_of, source_text
from kbx.source.cite import parse_spec, read_regular, resolve
from kbx.store.db import Index


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


def read(index: Index, spec: str, expect_hash: str | None = None) -> Excerpt:
    """The cited lines of a file, flagging a file that changed since it was indexed."""
    path, start, end = parse_spec(spec)
    full, rel = resolve(index.root, path)
    if format_of(rel) is None:
        raise BadArgument(f"kbx does not index this kind of file: {rel}")
    data = read_regular(full, rel)
    sha = hashlib.sha256(data).hexdigest()
    with index.reader() as con:
        row = con.execute("SELECT sha256 FROM documents WHERE path = ?", [rel]).fetchone()
    indexed = row[0] if row else None
    try:
        text, _ = source_text(rel, data)
    except KbxError:
        raise
    except Exception as e:  # a parser bug (a corrupt PDF) is one line, as in `kbx index`
        raise ExtractError(f"cannot read {rel}: {type(e).__name__}: {e}") from None
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":  # a newline ends the last line; it opens no line after it
        lines.pop()
    asked, start = start is not None, start or 1
    end = min(end or len(lines), len(lines))
    if expect_hash is not None:
        expect = expect_hash.lower()
        if len(expect) < 6 or not re.fullmatch(r"[0-9a-f]+", expect):
            raise BadArgument("--hash takes the hex file hash a result printed (at least 6 digits)")
        changed = not sha.startswith(expect)
        if changed and not (indexed or "").startswith(expect):  # neither then nor now
            raise BadArgument(
                f"--hash {expect_hash}: not a hash of {rel}, as indexed ({(indexed or '?')[:12]})"
                f" or now ({sha[:12]}); pass the hash a result printed beside {rel}"
            )
    else:
        changed = indexed is not None and indexed != sha
    if asked and start > len(lines):  # on a changed file, the change is the news, then the lines
        raise BadArgument(
            (f"{rel} has changed since it was indexed; " if changed else "")
            + f"{rel} has {len(lines)} lines; line {start} does not exist"
            + ("; run `kbx index` and search again" if changed else "")
        )
    return Excerpt(rel, start, end, sha, lines[start - 1 : end], indexed, changed)
