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


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB (outside a UTF-16/32 BOM) marks a binary file."""
    head = data[:8192]
    return b"\x00" in head and not any(head.startswith(b) for b, _ in _BOMS[1:])


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
    results = from_bytes(data[:200_000])
    best = results.best()
    if best is not None and best.encoding:
        # Detection cannot tell Western code pages apart on short texts; prefer the
        # one undeclared Western text is almost always in (WHATWG's default).
        western = next((m for m in results if m.encoding == "cp1252"), None)
        if western is not None and western.chaos <= best.chaos + 0.2:
            best = western
        return data.decode(best.encoding, "replace"), best.encoding
    return data.decode("utf-8", "replace"), "utf-8"


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_\-.]+)""", re.I)


def declared_html_encoding(data: bytes) -> str | None:
    """The charset an HTML file declares in its first 4 KiB, if any."""
    head = data[:4096]
    m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    return m.group(1).decode("ascii").lower() if m else None
