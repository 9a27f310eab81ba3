"""Gzipped files read as the file inside: Debian ships most of ``/usr/share/doc``
compressed (``changelog.Debian.gz``, ``NEWS.gz``, ``README.md.gz``), and a folder whose
files kbx passes over in silence is searched wrongly, not merely slowly.

A compressed file is indexed, cited and read as its decompressed text: line numbers count
the lines inside, ``kbx read`` and grep decompress the same way, and the file's hash stays
that of its bytes on disk (what a citation pins, and what tells a changed file). The size
cap bounds the decompressed text too, so a small archive that expands without end (a
"zip bomb") is skipped with its reason rather than filling memory.
"""

from __future__ import annotations

import gzip
import io
import zlib

from kbx.errors import ExtractError

SUFFIX = ".gz"
EXPANDED_MAX = 200 * 1024 * 1024  # the most text one compressed file may expand to


def inner_name(path: str) -> str | None:
    """The name of the file inside a gzipped ``path`` (``NEWS.gz`` -> ``NEWS``); None for
    a file that is not gzipped by its name, or one compressed twice."""
    if not path.lower().endswith(SUFFIX):
        return None
    inner = path[: -len(SUFFIX)]
    return None if inner.lower().endswith(SUFFIX) or not inner.rsplit("/", 1)[-1] else inner


def expanded(path: str, data: bytes, limit: int | None = None) -> tuple[str, bytes]:
    """The name and bytes a file's text is read from: a gzipped file's inner name and
    decompressed bytes, at most ``limit`` of them (None: ``EXPANDED_MAX``); any other file
    as it is. Raises ExtractError, with a reason a user can act on, for a damaged or
    oversized archive."""
    inner = inner_name(path)
    if inner is None:
        return path, data
    limit = EXPANDED_MAX if limit is None else limit
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(limit + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise ExtractError(f"not a readable gzip file: {e}") from None
    if len(out) > limit:
        raise ExtractError(f"decompresses past the size cap ({limit:,} bytes)")
    return inner, out
