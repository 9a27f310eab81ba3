"""Units: 200-400 tokens, cut along structure, windowed with overlap when a block is too long."""

from __future__ import annotations

import hashlib

from hypothesis import assume, given
from hypothesis import strategies as st

from kbx.extract import extract
from kbx.extract.formats import markdown
from kbx.extract.model import TABLE
from kbx.extract.units import _join, _Rows, count_tokens


def _long_section(n_paragraphs: int) -> str:
    para = " ".join(f"word{i}" for i in range(60))
    return "# Long\n\n" + "\n\n".join(f"P{j} {para}" for j in range(n_paragraphs)) + "\n"


def test_sections_are_packed_into_units_of_200_to_400_tokens():
    doc = extract("long.md", _long_section(20).encode())
    sizes = [u.n_tokens for u in doc.units]
    assert all(s <= 400 for s in sizes)
    assert all(s >= 200 for s in sizes[:-1])
    assert sum(sizes) == count_tokens("\n".join(u.text for u in doc.units))


def test_units_never_cross_a_heading():
    md = "# A\n\nalpha text\n\n## B\n\nbeta text\n\n# C\n\ngamma text\n"
    doc = extract("h.md", md.encode())
    assert [u.heading_path for u in doc.units] == [("A",), ("A", "B"), ("C",)]
    assert [u.lines for u in doc.units] == [(1, 3), (5, 7), (9, 11)]


def test_an_oversized_block_is_windowed_with_overlap():
    words = [f"w{i}" for i in range(1000)]
    doc = extract("big.txt", " ".join(words).encode())
    assert len(doc.units) == 3
    assert all(u.n_tokens <= 400 for u in doc.units)
    first, second = doc.units[0].text.split(), doc.units[1].text.split()
    assert first[-40:] == second[:40]  # a 40-token overlap
    assert doc.units[-1].text.split()[-1] == "w999"


def test_unit_identity_is_the_hash_of_its_heading_path_and_clean_text():
    doc = extract("h.md", b"# T\n\nsome *clean* text\n")
    u = doc.units[0]
    assert u.hash == hashlib.sha256(("T\x1e" + u.text).encode()).hexdigest()
    moved = extract("other.md", b"\n\n# T\n\nsome **clean** text\n")
    assert moved.units[0].hash == u.hash and moved.units[0].lines == (3, 5)
    nested = extract("n.md", b"# S\n\n## T\n\nsome clean text\n")
    assert nested.units[-1].text == "T\n\nsome clean text"
    assert nested.units[-1].hash != u.hash  # same words under another heading


def _joined_by_definition(blocks):
    """A unit's map as its definition says: each block's map moved to where its text starts,
    and before each block but the first a separator mapped where that block begins."""
    out, length = [], 0
    for k, b in enumerate(blocks):
        if k:
            sep = "\n" if b.kind == TABLE and blocks[k - 1].kind == TABLE else "\n\n"
            out.append((length, *b.segments[0][1:4], 0))
            length += len(sep)
        out += [(cs + length, *rest) for cs, *rest in b.segments]
        length += len(b.text)
    return out


CELL = st.text(st.sampled_from("ab é€😀*_`"), min_size=1, max_size=6).filter(str.strip)
PARAGRAPH = st.lists(CELL, min_size=1, max_size=5).map(" ".join)
TABLE_ROWS = st.integers(1, 3).map(lambda n: "| h | i |\n| - | - |\n" + "| x | é |\n" * n)


@given(
    st.lists(st.one_of(PARAGRAPH, TABLE_ROWS), min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 20), st.integers(1, 4)), min_size=1, max_size=4),
)
def test_a_joined_units_map_is_its_blocks_maps_end_to_end(parts, picks):
    text = "\n\n".join(parts) + "\n"
    blocks, _, _ = markdown.parse(text, text, "utf-8")
    assume(blocks)  # markup alone makes no block
    rows = _Rows(blocks)
    chosen = [blocks[a % len(blocks) :][:n] for a, n in picks]  # any blocks, any order
    units = [_join(c, rows) for c in chosen]
    rows.fill()
    for unit, c in zip(units, chosen, strict=True):
        assert unit.segments == _joined_by_definition(c)
