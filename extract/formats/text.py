"""Plain text: paragraphs separated by blank lines (form feeds count as blank)."""

from __future__ import annotations

import re

from kbx.extract.model import PROSE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

_PARAGRAPH = re.compile(r"\n[ \t\f\v]*\n")


def parse(text: str, original: str, encoding: str) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks of one plain-text file (it declares no title)."""
    table = LineTable(text, encoding, original)
    blocks: list[Block] = []
    pos = 0
    for piece in _PARAGRAPH.split(text):
        start = text.find(piece, pos)
        pos = start + len(piece)
        b = TextBuilder(table)
        b.flowing(piece, start)
        if b.text().strip():
            blocks.append(Block(b.text(), b.segments, PROSE))
    return blocks, Metadata(), []
