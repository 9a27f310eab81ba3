"""Inline code and table cells: the parsers mark them, packing and windowing keep them in place."""

from __future__ import annotations

import hashlib

import pytest

from kbx.extract import extract, source_text
from kbx.extract.model import Unit
from kbx.extract.textmap import locate

MD = (
    "# Escapes\n\nPrint `\\x1b[31m` then `0B 9B`; a `%5B` in a URL.\n\n"
    "Python 2 wrote `1L` and `MONDAY`.\n\n"
    "| Setting | Value |\n|---|---|\n| Timeout | 5 |\n| seconds | `10` |\n"
)
HTML = (
    "<html><body><h1>Escapes</h1><p>Print <code>\\x1b[31m</code> then <kbd>0B 9B</kbd>;\n"
    "a <samp>%5B</samp> in a URL.</p>\n<p>Python 2 wrote <code class='docutils literal'>"
    "<span class='pre'>1L</span></code> and <tt>MONDAY</tt>.</p>\n"
    "<pre><code>not inline 0B</code></pre>\n"
    "<table><tr><th>Setting</th><th>Value</th></tr>\n<tr><td>Timeout</td><td>5</td></tr>\n"
    "<tr><td>seconds</td><td><code>10</code></td></tr></table></body></html>\n"
)
LATEX = (
    "\\begin{document}\n\\section{Escapes}\nPrint \\verb|\\x1b[31m| then \\texttt{0B 9B};\n"
    "a \\verb+%5B+ in a URL.\n\nPython 2 wrote \\texttt{1L} and \\texttt{MONDAY}.\n\n"
    "\\begin{tabular}{ll}\nSetting & Value \\\\\nTimeout & 5 \\\\\nseconds & \\texttt{10} \\\\\n"
    "\\end{tabular}\n\\end{document}\n"
)
CODE = ["\\x1b[31m", "0B 9B", "%5B", "1L", "MONDAY", "10"]


def _code(u: Unit) -> list[str]:
    return [u.text[a:b] for a, b in u.code_spans]


def _maps_back(path: str, data: bytes, u: Unit) -> None:
    """Each code span's characters come from the original at the place the map names."""
    lines = source_text(path, data)[0].split("\n")
    for a, b in u.code_spans:
        for i in range(a, b):
            p = locate(u.segments, u.text, i)
            assert lines[p.line - 1][p.col] == u.text[i], (u.text[a:b], i, p)


@pytest.mark.parametrize(("path", "source"), [("a.md", MD), ("a.html", HTML), ("a.tex", LATEX)])
def test_inline_code_spans_reach_the_unit_in_every_format(path, source):
    data = source.encode()
    doc = extract(path, data)
    assert len(doc.units) == 1  # paragraphs and table rows packed into one unit
    (u,) = doc.units
    assert _code(u) == CODE  # shifted by every block packed before them
    _maps_back(path, data, u)
    assert "not inline" not in " ".join(_code(u))  # <pre> is a code block, not inline code


@pytest.mark.parametrize(("path", "source"), [("a.md", MD), ("a.html", HTML), ("a.tex", LATEX)])
def test_table_cells_and_rows_are_breaks_in_every_format(path, source):
    (u,) = extract(path, source.encode()).units
    table = u.text[u.text.index("Setting") :]
    assert table == "Setting | Value\nTimeout | 5\nseconds | 10"
    at = u.text.index("Setting")
    # every separator of the table, and nothing before it (blank lines between blocks and
    # the "|" in prose are no breaks)
    assert [x - at for x in u.breaks] == [i for i, c in enumerate(table) if c in "|\n"]
    assert len(u.breaks) == 5


def test_a_prose_pipe_is_no_break():
    (u,) = extract("a.md", b"# P\n\nrun `ls | wc` or a | b here\n").units
    assert u.breaks == () and _code(u) == ["ls | wc"]


def test_spans_survive_windowing_and_are_cut_at_a_window_edge():
    words = " ".join(f"w{i}" for i in range(900))
    text = f"# Long\n\n`{words}` and then " + " ".join(f"`c{i}` x{i}" for i in range(300)) + "\n"
    data = text.encode()
    doc = extract("long.md", data)
    assert doc.units[0].text == "Long"  # the heading, then windows of the long paragraph
    windows = doc.units[1:]
    assert len(windows) > 2
    first = windows[0]
    assert first.code_spans[0] == (0, len(first.text))  # a span longer than the window, cut
    for u in windows:
        assert u.code_spans, "every window holds code"
        for a, b in u.code_spans:
            assert 0 <= a < b <= len(u.text)
        _maps_back("long.md", data, u)
    spans = [s for u in windows for s in _code(u) if s.startswith("c")]
    assert {f"c{i}" for i in range(300)} <= set(spans)  # every short span whole somewhere


def test_a_windowed_table_row_keeps_its_breaks():
    row = " | ".join(f"cell{i} word{i}" for i in range(300))
    data = f"# T\n\n| {row} |\n|{'---|' * 300}\n".encode()
    heading, *windows = extract("wide.md", data).units
    assert heading.text == "T" and len(windows) > 1
    for u in windows:
        assert u.breaks == tuple(i for i, c in enumerate(u.text) if c == "|")


def test_code_and_cells_are_part_of_a_units_identity():
    plain = extract("a.md", b"# T\n\nuse MONDAY here\n").units[0]
    code = extract("b.md", b"# T\n\nuse `MONDAY` here\n").units[0]
    assert plain.text == code.text and plain.hash != code.hash
    assert plain.hash == hashlib.sha256(("T\x1e" + plain.text).encode()).hexdigest()
    assert code.code_spans == ((7, 13),)
    row = extract("c.md", b"# T\n\n| a | b |\n|---|---|\n").units[0]
    prose = extract("d.md", b"# T\n\na | b\n").units[0]
    assert row.text == prose.text and row.hash != prose.hash


def test_an_html_row_whose_cells_hold_paragraphs_stays_one_row():
    html = (
        "<table><tr><th><p>Flag</p></th><th><p>Meaning</p></th></tr>\n"
        "<tr><td><p><code><span class='pre'>--config</span></code></p></td>\n"
        "<td><p>Timeout 5</p><p>or more</p></td></tr>\n<tr><td><p>seconds</p></td></tr></table>\n"
    )
    (u,) = extract("t.html", html.encode()).units
    assert u.kind == "table" and u.text == "Flag | Meaning\n--config | Timeout 5 or more\nseconds"
    assert [u.text[x] for x in u.breaks] == ["|", "\n", "|", "\n"] and _code(u) == ["--config"]
