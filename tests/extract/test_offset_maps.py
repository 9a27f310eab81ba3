"""An offset map survives ``pack`` and ``unpack`` exactly, whatever its columns hold; its
line range is the lines of the characters that are not blank."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kbx.extract.textmap import line_range, pack, unpack

STEP = st.integers(min_value=0, max_value=10_000)


@given(st.lists(st.tuples(STEP, st.integers(0, 3), STEP, STEP, st.integers(0, 1)), max_size=300))
def test_pack_then_unpack_gives_the_map_back(steps):
    segments, cs, line, byte = [], 0, 1, 0
    for dc, dl, col, db, verbatim in steps:  # every column but col ascends, as in a map
        cs, line, byte = cs + dc, line + dl, byte + db
        segments.append((cs, line, col, byte, verbatim))
    assert unpack(pack(segments)) == segments


def _line_range_by_definition(segments, text):
    """Every segment tested: the lines of those that map a character that is not blank
    (all segments' lines where none does)."""
    if not segments:
        return 1, 1
    ends = [s[0] for s in segments[1:]] + [len(text)]
    shown = [s[1] for s, end in zip(segments, ends, strict=True) if text[s[0] : end].strip()]
    lines = shown or [s[1] for s in segments] or [1]
    return min(lines), max(lines)


PIECE = st.sampled_from(["a", " ", "\n", "  b", "\t", ""])


@given(st.lists(st.tuples(PIECE, st.integers(1, 9)), max_size=40))
def test_line_range_is_the_lines_of_the_text_that_is_not_blank(pieces):
    """Lines in any order (a synthetic separator points at the next block's line, a
    table's cells need not ascend), blank pieces anywhere, empty segments too."""
    segments, parts, length = [], [], 0
    for piece, line in pieces:
        segments.append((length, line, 0, 0, 1))
        parts.append(piece)
        length += len(piece)
    text = "".join(parts)
    assert line_range(segments, text) == _line_range_by_definition(segments, text)
