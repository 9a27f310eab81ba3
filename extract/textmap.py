"""Clean text with a map back to the original: every clean character knows its source.

A map is a sorted list of segments ``(clean_start, line, col, byte, verbatim)``.
A verbatim segment copies original characters one for one from ``(line, col)``
onward and never crosses a line break; a synthetic one (a decoded entity, a
separator kbx inserted) maps every character to its single source position.
Lines are 1-based, columns and bytes 0-based, offsets end-exclusive.

Extraction carries a unit's map as an ``(n, 5)`` array of those columns (``resolved``):
built by a few array operations per document, not a tuple per segment, and packed from there.
``as_segments`` gives the tuples back.
"""

from __future__ import annotations

import re
import zlib
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with extraction and packing, never on a cold search's read
    import numpy as np

Segment = tuple[int, int, int, int, int]  # clean_start, line, col, byte, verbatim
Row = list[int]  # what a builder records: clean_start, source offset, verbatim

_FLOW_RUN = re.compile(r"\S+(?: \S+)*")


@dataclass(frozen=True)
class Position:
    """Where one clean-text character came from in the original file."""

    line: int
    col: int
    byte: int


def codec(encoding: str, line_index: int) -> str:
    """The codec that line ``line_index`` (0-based) was decoded with: the file's, or the
    line's own in a file decoded line by line (``decode.MixedEncoding``)."""
    per_line = getattr(encoding, "line", None)
    return per_line(line_index) if per_line is not None else encoding


class LineTable:
    """Line starts of a source text, so a character offset becomes line, column and byte."""

    def __init__(self, text: str, encoding: str = "utf-8", original: str | None = None):
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.lines = text.split("\n")
        # Byte starts come from the original (it may hold \r the parsed text lost).
        src_lines = (original if original is not None else text).split("\n")
        self.ascii = (original or text).isascii()
        byte_starts, acc = [], 0
        for i, line in enumerate(src_lines):
            byte_starts.append(acc)
            n = len(line) if self.ascii else len(line.encode(codec(encoding, i), "replace"))
            acc += n + 1
        self.byte_starts = byte_starts

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Line starts, byte starts, and whether each line with a byte start holds a
        character outside ASCII (bytes and columns part there): for ``resolved``."""
        import numpy as np

        wide = np.array([not line.isascii() for line in self.lines[: len(self.byte_starts)]])
        return np.asarray(self.starts, np.int64), np.asarray(self.byte_starts, np.int64), wide

    def position(self, offset: int) -> Position:
        """Line, column and byte of a character offset into ``text``."""
        return Position(*self.where(offset))

    def where(self, offset: int) -> tuple[int, int, int]:
        """``position`` as a plain tuple: the builders ask this once per segment."""
        i = bisect_right(self.starts, offset) - 1
        col = offset - self.starts[i]
        return i + 1, col, self._byte(i, col)

    def _byte(self, line_index: int, col: int) -> int:
        if line_index >= len(self.byte_starts):
            return self.byte_starts[-1]
        if self.ascii:
            return self.byte_starts[line_index] + col
        line = self.lines[line_index]
        if line.isascii():
            return self.byte_starts[line_index] + col
        encoded = line[:col].encode(codec(self.encoding, line_index), "replace")
        return self.byte_starts[line_index] + len(encoded)


class TextBuilder:
    """Accumulates clean text and its segments for one block."""

    def __init__(self, table: LineTable):
        self.table = table
        self.parts: list[str] = []
        self.raw: list[Row] = []  # never changed once added: blocks keep the list
        self.length = 0
        self.pending_space = False
        self._code: list[list[int]] = []  # [start, end] of inline code; end -1 while open
        self._breaks: list[int] = []

    def _push(self, text: str, offset: int, verbatim: bool) -> None:
        if not text:
            return
        parts = self.parts
        if self.pending_space:
            self.pending_space = False
            if parts and not parts[-1][-1].isspace() and not text[0].isspace():
                self._push(" ", offset, False)
        raw = self.raw
        last = raw[-1] if raw else None
        if not (  # continues the previous verbatim run on the same line: extend it
            verbatim
            and last is not None
            and last[2]
            and offset - last[1] == self.length - last[0]
            and "\n" not in text
            and "\n" not in parts[-1]
        ):
            raw.append([self.length, offset, int(verbatim)])
        parts.append(text)
        self.length += len(text)

    def verbatim(self, text: str, offset: int) -> None:
        """Copy ``text`` found at ``offset`` of the source, split at line breaks."""
        if "\n" not in text:  # a code span, an escape: nearly every call
            self._push(text, offset, True)
            return
        start = 0
        for piece in text.split("\n"):
            if piece:
                self._push(piece, offset + start, True)
            start += len(piece) + 1
            if start <= len(text):
                self._push("\n", offset + start - 1, False)

    def _run(self, text: str, offset: int) -> None:
        """``_push`` of a verbatim run of one line that starts with no blank: what
        ``flowing`` adds for nearly every piece of prose, without the general checks."""
        parts, raw, length = self.parts, self.raw, self.length
        if self.pending_space:
            self.pending_space = False
            if parts and not parts[-1][-1].isspace():
                raw.append([length, offset, 0])  # the separating space, then a new run
                raw.append([length + 1, offset, 1])
                parts.append(" ")
                parts.append(text)
                self.length = length + 1 + len(text)
                return
        if raw:
            last = raw[-1]
            if not (last[2] and offset - last[1] == length - last[0] and "\n" not in parts[-1]):
                raw.append([length, offset, 1])
        else:
            raw.append([length, offset, 1])
        parts.append(text)
        self.length = length + len(text)

    def flowing(self, text: str, offset: int) -> None:
        """Copy ``text`` from ``offset`` with whitespace runs collapsed to one space."""
        words = text.split()  # most pieces are words between single spaces: one run
        if not words:
            if text:
                self.pending_space = True
            return
        core = words[0] if len(words) == 1 else " ".join(words)
        lead = len(text) - len(text.lstrip())
        if text.startswith(core, lead):
            if lead:
                self.pending_space = True
            self._run(core, offset + lead)
            if text[-1].isspace():
                self.pending_space = True
            return
        for m in _FLOW_RUN.finditer(text):
            if m.start() > 0:
                self.space()
            self._push(m.group(), offset + m.start(), True)
        if text and text[-1].isspace():
            self.space()

    def synthetic(self, text: str, offset: int) -> None:
        """Add text that is not in the source (a separator, a decoded entity)."""
        self._push(text, offset, False)

    def space(self) -> None:
        """Ask for one separating space before the next text, if any text follows."""
        self.pending_space = True

    def code(self, text: str, offset: int) -> None:
        """Copy inline code (a Markdown code span) verbatim and remember where it lies."""
        self.open_code()
        self.verbatim(text, offset)
        self.close_code()

    def open_code(self) -> None:
        """Inline code starts here (``<code>``, ``\\texttt``): its text arrives piece by piece."""
        if not self._code or self._code[-1][1] >= 0:
            self._code.append([self.length, -1])

    def close_code(self) -> None:
        if self._code and self._code[-1][1] < 0:
            self._code[-1][1] = self.length

    def cell(self, offset: int) -> None:
        """The separator between two table cells; no mention may cross its ``|``."""
        self._push(" | ", offset, False)
        self._breaks.append(self.length - 2)

    @property
    def code_spans(self) -> tuple[tuple[int, int], ...]:
        """Inline code as ``[start, end)`` of the clean text, trimmed of the spaces around it
        (a pending space lands inside a span opened before it); an open span ends here."""
        if not self._code:
            return ()
        text = self.text()
        out = []
        for start, end in self._code:
            end = self.length if end < 0 else end
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end:
                out.append((start, end))
        return tuple(out)

    @property
    def breaks(self) -> tuple[int, ...]:
        """Offsets of the cell separators kbx inserted: table structure, not text."""
        return tuple(self._breaks)

    def aligned(self, text: str, offset: int, limit: int) -> int:
        """Add ``text`` that a parser derived from ``source[offset:limit]``; return the new cursor.

        Most of it is a verbatim copy; where it is not (an escape, an entity),
        characters are aligned greedily and the rest is synthetic.
        """
        src = self.table.text
        if not text:
            return offset
        pos = src.find(text, offset, limit)
        if pos >= 0:
            self.verbatim(text, pos)
            return pos + len(text)
        cursor, i = offset, 0
        while i < len(text):
            lo, hi = 0, len(text) - i  # longest prefix of the rest found verbatim
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if src.find(text[i : i + mid], cursor, limit) >= 0:
                    lo = mid
                else:
                    hi = mid - 1
            pos = src.find(text[i : i + lo], cursor, limit) if lo else -1
            if lo and (lo >= 3 or pos - cursor <= 12):
                self.verbatim(text[i : i + lo], pos)
                cursor, i = pos + lo, i + lo
            else:
                self._push(text[i], cursor, False)
                i += 1
        return cursor

    def text(self) -> str:
        return "".join(self.parts)


def resolved(table: LineTable, rows: list[Row] | np.ndarray) -> np.ndarray:
    """Rows of (clean start, source offset, verbatim) as an ``(n, 5)`` offset map, each
    source offset found among the line starts by one ``searchsorted``."""
    import numpy as np

    rows = np.asarray(rows, np.int64).reshape(-1, 3)
    offsets = rows[:, 1]
    starts, bytes_at, wide = table.arrays
    i = np.searchsorted(starts, offsets, "right") - 1
    col = offsets - starts[i]
    last = len(bytes_at) - 1
    within = np.minimum(i, last)
    byte = np.where(i > last, bytes_at[-1], bytes_at[within] + col)
    if not table.ascii:  # a segment on a line with other characters counts its bytes
        lines, encoding = table.lines, table.encoding
        for k in np.flatnonzero(wide[within] & (i <= last)).tolist():
            n, c = int(i[k]), int(col[k])
            byte[k] = bytes_at[n] + len(lines[n][:c].encode(codec(encoding, n), "replace"))
    return np.column_stack((rows[:, 0], i + 1, col, byte, rows[:, 2]))


def as_segments(offset_map: np.ndarray) -> list[Segment]:
    """The tuples of an ``(n, 5)`` offset map."""
    return list(map(tuple, offset_map.tolist()))


def as_map(segments: list[Segment]) -> np.ndarray:
    """The ``(n, 5)`` array of a list of segments."""
    import numpy as np

    return np.asarray(segments, np.int64).reshape(-1, 5)


def slice_segments(
    segments: list[Segment], text: str, start: int, end: int, encoding: str = "utf-8"
) -> list[Segment]:
    """The segments covering ``text[start:end]``, rebased to start at 0."""
    i = max(bisect_right(_starts(segments), start) - 1, 0)
    out: list[Segment] = []
    for seg in segments[i:]:
        if seg[0] >= end:
            break
        if seg[0] < start:
            cs, line, col, byte, verbatim = seg
            if verbatim:
                col += start - cs
                byte += _bytes_between(text, cs, start, codec(encoding, line - 1))
            seg = (start, line, col, byte, verbatim)
        out.append((seg[0] - start, *seg[1:]))
    return out


_STARTS: list = [None, []]  # the segments last asked about, and their clean starts


def _starts(segments: list[Segment]) -> list[int]:
    """The clean starts of ``segments``, kept for the next call: the windows of one large
    block all slice the same map."""
    if _STARTS[0] is not segments:
        _STARTS[:] = [segments, [s[0] for s in segments]]
    return _STARTS[1]


_LAST: list = [None, 0, 0, 0, ""]  # text, segment start, offset, bytes to it, encoding


def _bytes_between(text: str, cs: int, offset: int, encoding: str) -> int:
    """Encoded length of ``text[cs:offset]``. The windows of one long line ask in order,
    so carry on from the last answer for the same text and segment: linear, not quadratic
    in the line's length."""
    last_text, last_cs, last_offset, last_bytes, last_enc = _LAST
    if last_text is text and last_cs == cs and last_enc == encoding and last_offset <= offset:
        n = last_bytes + len(text[last_offset:offset].encode(encoding, "replace"))
    else:
        n = len(text[cs:offset].encode(encoding, "replace"))
    _LAST[:] = [text, cs, offset, n, encoding]
    return n


def locate(segments: list[Segment], text: str, offset: int, encoding: str = "utf-8") -> Position:
    """The original position of clean-text character ``offset``."""
    if not segments:
        raise ValueError("empty offset map")
    i = max(bisect_right(_starts(segments), offset) - 1, 0)
    cs, line, col, byte, verbatim = segments[i]
    if not verbatim:
        return Position(line, col, byte)
    d = offset - cs
    encoded = text[cs:offset].encode(codec(encoding, line - 1), "replace")
    return Position(line, col + d, byte + len(encoded))


def line_range(segments: list[Segment] | np.ndarray, text: str) -> tuple[int, int]:
    """First and last original line that the non-blank clean text comes from.

    A segment counts when any of its characters is not blank, not just its first: an
    indented code line is one verbatim segment that starts with spaces. Nearly always the
    first and last segments that count lie on the lowest and highest lines of all, which
    settles it without testing the segments between.
    """
    if not len(segments):
        return 1, 1
    m = as_map(segments) if isinstance(segments, list) else segments
    starts, lines = m[:, 0].tolist(), m[:, 1].tolist()
    lo, hi = min(lines), max(lines)
    n = len(starts)
    first = next((i for i in range(n) if _counts(starts, i, text)), None)
    if first is None:
        return lo, hi
    last = next(i for i in range(n - 1, first - 1, -1) if _counts(starts, i, text))
    if lines[first] == lo and lines[last] == hi:
        return lo, hi
    counted = [lines[i] for i in range(first, last + 1) if _counts(starts, i, text)]
    return min(counted), max(counted)


def _counts(starts: list[int], i: int, text: str) -> bool:
    """Segment ``i`` (of those starting at ``starts``) maps a character that is not blank."""
    start = starts[i]
    end = starts[i + 1] if i + 1 < len(starts) else len(text)
    return start < end and (not text[start].isspace() or bool(text[start:end].strip()))


def pack(segments: list[Segment] | np.ndarray) -> bytes:
    """A compact byte form of an offset map: deltas of each column, zlib-compressed (~10x)."""
    import numpy as np

    m = as_map(segments) if isinstance(segments, list) else segments
    flat = m.astype(np.int32)
    flat[1:, _DELTAS] -= flat[:-1, _DELTAS]
    return zlib.compress(flat.tobytes(), PACK_LEVEL)


_DELTAS = [0, 1, 3]  # clean start, line and byte grow along a map; col and verbatim do not
PACK_LEVEL = 1  # zlib's fastest: a third of level 6's time, maps about a tenth larger


def unpack(blob: bytes) -> list[Segment]:
    """The offset map that ``pack`` stored (its columns summed back by C loops, as
    ``pack`` took their differences)."""
    flat = array("i")
    flat.frombytes(zlib.decompress(blob))
    return list(
        zip(
            accumulate(flat[0::5]),
            accumulate(flat[1::5]),
            flat[2::5],
            accumulate(flat[3::5]),
            flat[4::5],
            strict=True,
        )
    )
