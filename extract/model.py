"""What extraction produces: documents made of structural blocks, packed into units."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from kbx.extract.textmap import Segment, TextBuilder, line_range

PROSE, CODE, TABLE = "prose", "code", "table"
Span = tuple[int, int]


@dataclass
class Block:
    """One structural piece of a document: a paragraph, list item, table row, code block."""

    text: str
    segments: list[Segment]
    kind: str = PROSE
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    n_tokens: int = 0
    code_spans: tuple[Span, ...] = ()  # inline code, [start, end) of ``text``
    breaks: tuple[int, ...] = ()  # offsets of the separators between table cells and rows

    @classmethod
    def built(
        cls, b: TextBuilder, kind: str, heading_path: tuple[str, ...], text: str | None = None
    ) -> Block:
        """The block a parser's builder holds (its ``text``, if the caller has it already),
        with its inline code and cell separators."""
        text = b.text() if text is None else text
        return cls(text, b.segments, kind, heading_path, code_spans=b.code_spans, breaks=b.breaks)


@dataclass
class Unit:
    """A passage of 200-400 tokens as placed in one document, with its map to the original.

    Its identity is the SHA-256 of its heading path and clean text: the same words
    under another heading are another passage (they rank and read differently),
    while a copied or moved section keeps its identity and its mentions. Where it has
    inline code or table cells, their offsets are part of the identity too: the hash is
    the key of its recognizer runs, and they find other mentions in ``MONDAY`` than in
    `` `MONDAY` `` (the same clean text). Units without either keep the plain hash.
    """

    text: str
    segments: list[Segment]
    kind: str
    heading_path: tuple[str, ...]
    n_tokens: int
    page: int | None = None
    code_spans: tuple[Span, ...] = ()
    breaks: tuple[int, ...] = ()

    @property
    def hash(self) -> str:
        key = "\x1f".join(self.heading_path) + "\x1e" + self.text
        if self.code_spans or self.breaks:
            spans = ",".join(f"{a}-{b}" for a, b in self.code_spans)
            key += f"\x1d{spans}\x1d{','.join(map(str, self.breaks))}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()

    @property
    def lines(self) -> tuple[int, int]:
        return line_range(self.segments, self.text)


@dataclass
class Metadata:
    """What a format says about its document: title, date, authors, and the rest."""

    title: str | None = None
    date: str | None = None
    authors: list[str] = field(default_factory=list)
    fields: dict = field(default_factory=dict)


@dataclass
class Document:
    """One file, extracted: its identity, metadata, units and anything that went wrong."""

    path: str
    sha256: str
    size: int
    format: str
    encoding: str
    meta: Metadata
    units: list[Unit]
    warnings: list[str] = field(default_factory=list)
