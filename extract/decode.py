"""Bytes to text: BOMs, declared encodings, detection, and refusing binary files."""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

from kbx.errors import ExtractError

_BOMS = [
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]


# What browsers actually decode these labels as (WHATWG Encoding Standard).
_WEB_ALIASES = {"shift_jis": "cp932", "x-sjis": "cp932", "sjis": "cp932", "gb2312": "gb18030"}


# A GNU Info manual marks its index node and images with NUL-backspace brackets
# (``\0\b[index\0\b]``): text all the same.
_INFO_COOKIE = re.compile(rb"\x00\x08\[[^\x00\n]{0,200}\x00\x08\]")


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB (outside a UTF-16/32 BOM, or an Info manual's
    marks) marks a binary file."""
    head = data[:8192]
    if b"\x00" not in head or any(head.startswith(b) for b, _ in _BOMS[1:]):
        return False
    return b"\x00" in _INFO_COOKIE.sub(b"", head)


def decode(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """Decode ``data``, honouring a BOM, then a declared encoding, then UTF-8, then detection.

    Returns the text and the name of the encoding used.
    """
    if looks_binary(data):
        raise ExtractError("binary file (NUL bytes)")
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data.decode(name), name
    if declared:
        declared = _WEB_ALIASES.get(declared.lower(), declared)
        try:
            codecs.lookup(declared)
            return data.decode(declared), declared.lower()
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    mixed = _by_line(data)
    if mixed is not None:
        return mixed
    found = _detect(data)
    if found:
        return data.decode(found, "replace"), found
    return data.decode("utf-8", "replace"), "utf-8"


def _detect(data: bytes) -> str | None:
    """The encoding charset_normalizer finds for ``data`` (not valid UTF-8), if any."""
    results = from_bytes(data[:200_000])
    best = results.best()
    if best is None or not best.encoding:
        return None
    # Detection cannot tell Western code pages apart on short texts; prefer the
    # one undeclared Western text is almost always in (WHATWG's default).
    western = next((m for m in results if m.encoding == "cp1252"), None)
    if western is not None and western.chaos <= best.chaos + 0.2:
        best = western
    return best.encoding


class MixedEncoding(str):
    """The encoding of a file that mixes UTF-8 lines into a single-byte code page (text
    pasted from elsewhere): each line is UTF-8 where it is valid UTF-8, else ``fallback``.
    It reads as ``utf-8+cp1252``; ``line`` gives one line's codec, which the offset maps
    count that line's bytes with."""

    fallback: str
    utf8_lines: frozenset[int]

    def __new__(cls, fallback: str, utf8_lines) -> MixedEncoding:
        self = super().__new__(cls, f"utf-8+{fallback}")
        self.fallback, self.utf8_lines = fallback, frozenset(utf8_lines)
        return self

    def __reduce__(self):
        return MixedEncoding, (self.fallback, tuple(sorted(self.utf8_lines)))

    def line(self, index: int) -> str:
        """The codec of line ``index`` (0-based)."""
        return "utf-8" if index in self.utf8_lines else self.fallback


def _single_byte(encoding: str) -> bool:
    """An ASCII-compatible code page of one byte a character (cp1252, latin-1, koi8-r)."""
    try:
        high = bytes(range(128, 256)).decode(encoding, "replace")
        return len(high) == 128 and bytes(range(128)).decode(encoding) == "".join(
            map(chr, range(128))
        )
    except (LookupError, UnicodeDecodeError):
        return False


def _by_line(data: bytes) -> tuple[str, MixedEncoding] | None:
    """``data`` decoded line by line where some lines are UTF-8 and others are not: the
    others in the code page detected on them alone, when it is a single-byte one (split at
    ``\\n``, which every such code page and UTF-8 write as that one byte)."""
    lines = data.split(b"\n")
    utf8, other = [], []
    for i, line in enumerate(lines):
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
            utf8.append(i)
        except UnicodeDecodeError:
            other.append(i)
    if not utf8 or not other:
        return None
    fallback = _detect(b"\n".join(lines[i] for i in other))
    if not fallback or not _single_byte(fallback):
        return None
    encoding = MixedEncoding(fallback, utf8)
    text = "\n".join(line.decode(encoding.line(i), "replace") for i, line in enumerate(lines))
    return text, encoding


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_\-.]+)""", re.I)


def declared_html_encoding(data: bytes) -> str | None:
    """The charset an HTML file declares in its first 4 KiB, if any."""
    head = data[:4096]
    m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    return m.group(1).decode("ascii").lower() if m else None
