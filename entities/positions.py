"""Document positions: one place in a file, however many windows hold it.

A block too long for one unit is cut into windows that overlap (``extract/units.py``), so the
characters of an overlap, and whatever the recognizers found in them, sit in two consecutive
placements. A document position names a character once: ``(chain, offset)``, where a chain is
a run of windows that continue each other, named by its first placement's ordinal, and the
offset counts from that window's start. A placement that continues no other is a chain of
its own, at offset 0. Greps, mention listings and entity counts key on it to count a span
in an overlap once.

Continuation is decided exactly, from the offset maps: the window's first character must
come from the same original position as a character of the window before, and the text
from there on must be the start of the window's own text.
"""

from __future__ import annotations

import zlib
from array import array

import duckdb

from kbx.extract.textmap import Segment, unpack
from kbx.store.db import rows_select

HEAD = 16  # characters of a window's start looked for in the window before: a cheap test


def continues(
    prev: str, prev_segments: list[Segment], text: str, segments: list[Segment]
) -> int | None:
    """Where ``text`` starts inside ``prev`` when it is the next window of the same block
    (it begins with ``prev``'s end, from the same original characters); else None. Of
    ``segments`` only the first is read."""
    if not text or not segments or not prev_segments:
        return None
    _, line, col, byte, verbatim = segments[0]
    ends = [s[0] for s in prev_segments[1:]] + [len(prev)]
    for (cs, ln, c, b, v), end in zip(prev_segments, ends, strict=True):
        if ln != line or v != verbatim:
            continue
        if verbatim:  # a verbatim segment copies its line one character for one
            x = cs + col - c
            if not (c <= col and x < end):
                continue
        elif (c, b) == (col, byte):  # a synthetic one maps all its characters to one place
            x = cs
        else:
            continue
        if 0 < x < len(prev) and text.startswith(prev[x:]):
            return x
    return None


def first_segment(blob: bytes) -> list[Segment]:
    """The first segment of a packed offset map (``textmap.pack``), without the rest."""
    flat = array("i")
    flat.frombytes(zlib.decompress(blob)[: 5 * flat.itemsize])
    return [tuple(flat)] if len(flat) == 5 else []


class Positions:
    """Document positions of placements visited in reading order (a document's placements
    by ordinal; several documents one after another): ``start`` gives a placement's chain and
    the offset of its first character, so its character ``i`` sits at ``(chain, base + i)``.
    Offset maps are unpacked only when a window may continue the one before."""

    def __init__(self) -> None:
        self._last: tuple | None = None  # doc, ordinal, text, blob, chain, base

    def start(self, doc: object, ordinal: int, text: str, blob: bytes) -> tuple[int, int]:
        """The chain and base offset of placement ``ordinal`` of ``doc``."""
        chain, base = ordinal, 0
        last = self._last
        if last and last[:2] == (doc, ordinal):
            return last[4], last[5]
        if last and last[0] == doc and last[1] == ordinal - 1 and text[:HEAD] in last[2]:
            x = continues(last[2], unpack(last[3]), text, first_segment(blob))
            if x is not None:
                chain, base = last[4], last[5] + x
        self._last = (doc, ordinal, text, blob, chain, base)
        return chain, base


def continuations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int, int, int, int]]:
    """``(doc_id, ordinal, chain, base, overlap)`` of every placement that continues the
    window before it: ``overlap`` leading characters of it repeat that window's end."""
    pairs = con.execute(  # consecutive placements that share a line: the few candidates
        """SELECT a.doc_id, a.ordinal, a.unit_id, a.offsets, b.unit_id, b.offsets
           FROM placements a JOIN placements b ON b.doc_id = a.doc_id AND b.ordinal = a.ordinal + 1
           WHERE b.start_line <= a.end_line ORDER BY a.doc_id, a.ordinal"""
    ).fetchall()
    wanted = sorted({p[2] for p in pairs} | {p[4] for p in pairs})
    texts = dict(  # read apart: the join would scan every unit's text
        con.execute(
            "SELECT unit_id, text FROM units WHERE unit_id IN (SELECT unnest(?))", [wanted]
        ).fetchall()
    )
    rows = [
        (d, o, texts[a], a_blob, texts[b], b_blob)
        for d, o, a, a_blob, b, b_blob in pairs
        if texts[b][:HEAD] in texts[a]
    ]
    chains: dict[tuple[int, int], tuple[int, int, int]] = {}
    for doc_id, ordinal, a_text, a_blob, b_text, b_blob in rows:
        x = continues(a_text, unpack(a_blob), b_text, first_segment(b_blob))
        if x is not None:
            chain, base, _ = chains.get((doc_id, ordinal), (ordinal, 0, 0))
            chains[(doc_id, ordinal + 1)] = (chain, base + x, len(a_text) - x)
    return [(d, o, c, b, n) for (d, o), (c, b, n) in chains.items()]


def position_table(con: duckdb.DuckDBPyConnection, name: str = "positions") -> None:
    """A temporary table ``name(doc_id, ordinal, chain, base, overlap)`` of the placements
    that continue another; any other placement is its own chain at offset 0, so a span at
    ``start`` of placement ``pl`` sits at ``coalesce(p.chain, pl.ordinal)``,
    ``coalesce(p.base, 0) + start`` (``LEFT JOIN name p USING (doc_id, ordinal)``)."""
    select, params = rows_select(
        ["doc_id", "ordinal", "chain", "base", "overlap"], continuations(con)
    )
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {select}", params)
