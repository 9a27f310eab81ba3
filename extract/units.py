"""Pack structural blocks into units of 200-400 tokens, cut at structure boundaries first.

A unit never crosses a section (heading path) or a PDF page. Within a section,
blocks are packed into parts of even size; a block too large on its own is
windowed with a small overlap, cutting at line breaks where it can and never inside a
whitespace-free token (an identifier).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import chain

import numpy as np

from kbx.extract.model import TABLE, Block, Span, Unit
from kbx.extract.textmap import as_map, resolved, slice_segments
from kbx.wordchars import CJK

# A word, or one character of a script written without spaces (Chinese, Japanese, Korean),
# as the index counts its terms: else a whole CJK paragraph is one token, and its passage
# grows to five times an English one's length before a cut.
TOKEN = re.compile(f"[{CJK}]|[^\\W{CJK}]+")
# TOKEN on ASCII text (\w there is these, no CJK): a class of one bitmap, twice as fast
ASCII_TOKEN = re.compile(r"[A-Za-z0-9_]+")
CHUNK = re.compile(r"\S+")
MAX_TOKENS = 400
OVERLAP = 40


def count_tokens(text: str) -> int:
    rx = ASCII_TOKEN if text.isascii() else TOKEN  # isascii is a flag of the string: free
    return len(rx.findall(text))  # the list is built in C; a generator resumes per token


class _Rows:
    """The map rows of all a document's blocks, and of its joined units: each array step
    runs once per document, over all of them, where once per unit would cost more than
    the work."""

    def __init__(self, blocks: list[Block]):
        self.first: dict[int, int] = {}  # id of a block -> its first row here
        n = 0
        for b in blocks:
            self.first[id(b)] = n
            n += len(b.rows)
        flat = chain.from_iterable(chain.from_iterable(b.rows for b in blocks))
        self.rows = np.fromiter(flat, np.int64, 3 * n)
        self.table = blocks[0].table if blocks else None
        # runs of rows the units take: first row, how many, how far along the unit's text
        self.take: list[int] = []
        self.counts: list[int] = []
        self.moves: list[int] = []
        self.seps: list[tuple[int, int]] = []  # separator rows: where, at which clean start
        self.units: list[tuple[Unit, int, int]] = []  # each unit's rows: [start, end)
        self.n = 0  # rows taken so far

    def join(self, unit: Unit, blocks: list[Block], at: list[int]) -> None:
        """``unit`` is ``blocks`` set one after another, block k from ``at[k]`` of its text
        on, each after the first led by a separator mapped where the block begins."""
        start = n = self.n
        for k, b in enumerate(blocks):
            first = self.first[id(b)]
            if k:  # the block's first row, not verbatim, where the separator starts
                self.seps.append((n, at[k - 1] + len(blocks[k - 1].text)))
                self.take.append(first)
                self.counts.append(1)
                self.moves.append(0)
                n += 1
            self.take.append(first)
            self.counts.append(len(b.rows))
            self.moves.append(at[k])
            n += len(b.rows)
        self.units.append((unit, start, n))
        self.n = n

    def fill(self) -> None:
        """Give every joined unit its offset map."""
        if not self.units:
            return
        sizes = np.array(self.counts)
        ends = np.cumsum(sizes)
        idx = np.arange(ends[-1]) + np.repeat(np.array(self.take) - (ends - sizes), sizes)
        m = resolved(self.table, self.rows)[idx]
        m[:, 0] += np.repeat(self.moves, sizes)
        if self.seps:
            where, clean = zip(*self.seps, strict=True)
            m[list(where), 0] = clean
            m[list(where), 4] = 0
        for unit, a, z in self.units:
            unit.offset_map = m[a:z]


def _join(blocks: list[Block], rows: _Rows) -> Unit:
    """One unit of consecutive blocks, a separator between each two."""
    parts: list[str] = []
    at: list[int] = []  # where each block's text starts in the unit's
    code: list[Span] = []
    breaks: list[int] = []
    length = 0
    kinds: Counter[str] = Counter()
    for i, b in enumerate(blocks):
        if i:
            rows_apart = b.kind == TABLE and blocks[i - 1].kind == TABLE
            sep = "\n" if rows_apart else "\n\n"
            if rows_apart:  # a mention may not run from one row into the next
                breaks.append(length)
            parts.append(sep)
            length += len(sep)
        at.append(length)
        code.extend((s + length, e + length) for s, e in b.code_spans)
        breaks.extend(x + length for x in b.breaks)
        parts.append(b.text)
        length += len(b.text)
        kinds[b.kind] += b.n_tokens or 1
    unit = Unit(
        text="".join(parts),
        offset_map=_FILLED_LATER,
        kind=kinds.most_common(1)[0][0],
        heading_path=blocks[0].heading_path,
        n_tokens=sum(b.n_tokens for b in blocks),
        page=blocks[0].page,
        code_spans=tuple(code),
        breaks=tuple(breaks),
    )
    rows.join(unit, blocks, at)
    return unit


_FILLED_LATER = np.zeros((0, 5), np.int64)  # by ``_Rows.fill``, for the whole document


def _within(block: Block, a: int, b: int) -> tuple[tuple[Span, ...], tuple[int, ...]]:
    """The block's inline code (cut at the edges) and separators in ``text[a:b]``, rebased."""
    code = tuple((max(s, a) - a, min(e, b) - a) for s, e in block.code_spans if s < b and e > a)
    return code, tuple(x - a for x in block.breaks if a <= x < b)


def _window(block: Block, encoding: str, size: int, overlap: int) -> list[Unit]:
    """Cut one oversized block into overlapping windows of at most ``size`` tokens.

    Windows start and end between whitespace-separated chunks, never inside one, so an
    identifier (a DOI, a path, ``v18.2.0``) is whole in every window that holds it; only a
    chunk longer than a window (minified code, base64) is cut between its tokens.
    """
    text = block.text
    spans: list[tuple[int, int]] = []
    whole: list[bool] = []  # token i is the first of its chunk
    cut_at: list[int] = []  # where a cut before token i goes: its chunk's start if whole
    for chunk in CHUNK.finditer(text):
        for n, m in enumerate(TOKEN.finditer(text, chunk.start(), chunk.end())):
            spans.append(m.span())
            whole.append(n == 0)
            cut_at.append(m.start() if n else chunk.start())

    def snap(i: int, lo: int) -> int:
        """The last token after ``lo``, up to ``i``, that starts a chunk; ``i`` if none."""
        j = i
        while j > lo and not whole[j]:
            j -= 1
        return j if j > lo else i

    units: list[Unit] = []
    start = 0
    while start < len(spans):
        end = min(start + size, len(spans))
        if end < len(spans):  # prefer a line break in the last fifth of the window
            lo = spans[start + size * 4 // 5][0]
            nl = text.rfind("\n", lo, spans[end][0])
            if nl >= 0:
                end = next(i for i in range(start, end + 1) if spans[i][0] > nl)
            end = snap(end, start)
        a = cut_at[start] if start else 0
        b = cut_at[end] if end < len(spans) else len(text)
        piece = text[a:b].rstrip()
        segs = as_map(slice_segments(block.segments, text, a, a + len(piece), encoding))
        code, breaks = _within(block, a, a + len(piece))
        units.append(
            Unit(
                piece,
                segs,
                block.kind,
                block.heading_path,
                end - start,
                block.page,
                code,
                breaks,
            )
        )
        if end >= len(spans):
            break
        start = max(snap(end - overlap, start), start + 1)
    return units


def pack(
    blocks: list[Block],
    encoding: str = "utf-8",
    max_tokens: int = MAX_TOKENS,
    overlap: int = OVERLAP,
) -> list[Unit]:
    """Units of one document, in reading order."""
    for b in blocks:
        b.n_tokens = count_tokens(b.text)
    rows = _Rows(blocks)
    units: list[Unit] = []
    i = 0
    while i < len(blocks):  # one section (same heading path and page) at a time
        key = (blocks[i].heading_path, blocks[i].page)
        j = i
        while j < len(blocks) and (blocks[j].heading_path, blocks[j].page) == key:
            j += 1
        section = blocks[i:j]
        total = sum(b.n_tokens for b in section)
        target = total / max(1, math.ceil(total / max_tokens))
        pending: list[Block] = []
        count = 0
        for b in section:
            if pending and (count + b.n_tokens > max_tokens or count >= target):
                units.append(_join(pending, rows))
                pending, count = [], 0
            if b.n_tokens > max_tokens:
                units.extend(_window(b, encoding, max_tokens, overlap))
                continue
            pending.append(b)
            count += b.n_tokens
        if pending:
            units.append(_join(pending, rows))
        i = j
    rows.fill()
    return units
