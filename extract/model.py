"""What extraction produces: documents made of structural blocks, packed into units."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from kbx.extract.textmap import (
    LineTable,
    Row,
    Segment,
    TextBuilder,
    as_segments,
    line_range,
    resolved,
)

PROSE, CODE, TABLE = "prose", "code", "table"
# The start of a document's warning where its parser failed in places and the text there was
# read as plain text instead of lost: the ingest records it as the file's note, which
# ``kbx index`` and ``kbx status`` list.
PARTLY_AS_TEXT = "partly read as plain text"
# A PDF some of whose pages have no text layer (scanned pages): read, but not whole; said
# beside the file in the index report and status, as a file partly read as plain text is.
PAGES_WITHOUT_TEXT = "pages with no text layer (images only?)"
READ_IN_PART = (PARTLY_AS_TEXT, PAGES_WITHOUT_TEXT)  # the warnings listed beside a file
Span = tuple[int, int]


@dataclass
class Block:
    """One structural piece of a document: a paragraph, list item, table row, code block.
    Its map stays as its builder recorded it (``rows`` over ``table``) until a unit is
    made of it: a document's units turn the rows of all their blocks into line, column and
    byte a few array operations at a time."""

    text: str
    rows: list[Row]
    table: LineTable
    kind: str = PROSE
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    n_tokens: int = 0
    code_spans: tuple[Span, ...] = ()  # inline code, [start, end) of ``text``
    breaks: tuple[int, ...] = ()  # offsets of the separators between table cells and rows

    @classmethod
    def built(
        cls,
        b: TextBuilder,
        kind: str,
        heading_path: tuple[str, ...],
        text: str | None = None,
        page: int | None = None,
    ) -> Block:
        """The block a parser's builder holds (its ``text``, if the caller has it already),
        with its inline code and cell separators. The builder is not written to again."""
        text = b.text() if text is None else text
        return cls(
            text, b.raw, b.table, kind, heading_path, page, code_spans=b.code_spans, breaks=b.breaks
        )

    @cached_property
    def segments(self) -> list[Segment]:
        """The block's offset map (a window of a long block slices it)."""
        return as_segments(resolved(self.table, self.rows))


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
    offset_map: np.ndarray  # (n, 5): the segments' columns, see extract/textmap.py
    kind: str
    heading_path: tuple[str, ...]
    n_tokens: int
    page: int | None = None
    code_spans: tuple[Span, ...] = ()
    breaks: tuple[int, ...] = ()

    @cached_property
    def segments(self) -> list[Segment]:
        return as_segments(self.offset_map)

    @property
    def hash(self) -> str:
        key = "\x1f".join(self.heading_path) + "\x1e" + self.text
        if self.code_spans or self.breaks:
            spans = ",".join(f"{a}-{b}" for a, b in self.code_spans)
            key += f"\x1d{spans}\x1d{','.join(map(str, self.breaks))}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()

    @property
    def lines(self) -> tuple[int, int]:
        return line_range(self.offset_map, self.text)


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
