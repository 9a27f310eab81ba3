"""Units: 200-400 tokens, cut along structure, windowed with overlap when a block is too long."""

from __future__ import annotations

import hashlib

from kbx.extract import extract
from kbx.extract.units import count_tokens


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
