"""Cited lines cover their passage: every unit's first and last words lie in its cited lines.

Documents of every format are generated with headings, paragraphs, lists, tables, code
blocks with indented lines, and paragraphs and code long enough to be windowed. Every word
is distinct, so finding it in the cited lines finds that very occurrence.
"""

from __future__ import annotations

import itertools
import re

from fpdf import FPDF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.extract import extract, source_text
from kbx.extract.model import Unit

W = "\x00"  # a word to be: ``_fill`` makes each one distinct
WORD = re.compile(r"[^\W_]+")
BASES = ["alpha", "Beta", "café", "x", "naïve", "seL", "Q", "zeta"]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fill(template: str) -> str:
    """Every placeholder becomes a word of its own (``alpha0``, ``Beta1``, ...)."""
    n = itertools.count()
    return re.sub(W, lambda _: (lambda i: f"{BASES[i % len(BASES)]}{i}")(next(n)), template)


def words(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.integers(lo, hi).map(lambda n: " ".join([W] * n))


CHUNK = st.sampled_from([W, W, W, f"{W}.{W}/{W}.{W}"])  # some words are identifiers


def wrapped(lo: int, hi: int) -> st.SearchStrategy[str]:
    """A run of words broken into lines of 1 to 60 words (a long one may be one line)."""
    return st.tuples(st.lists(CHUNK, min_size=lo, max_size=hi), st.integers(1, 60)).map(
        lambda t: "\n".join(" ".join(t[0][i : i + t[1]]) for i in range(0, len(t[0]), t[1]))
    )


LONG = wrapped(420, 900)  # past MAX_TOKENS: windowed
CODE_LINE = st.tuples(
    st.integers(0, 12), st.integers(0, 6), st.sampled_from(["", " {", ";", "}", "();", ":"])
).map(lambda t: (" " * t[0] + " ".join([W] * t[1]) + t[2]).rstrip())
CODE = st.one_of(
    st.lists(CODE_LINE, min_size=1, max_size=12),
    st.lists(CODE_LINE, min_size=80, max_size=160),  # windowed
).map(lambda ls: ls if any(line.strip() for line in ls) else [*ls, W])

MD_BLOCK = st.one_of(
    st.tuples(st.integers(1, 4), words(1, 6)).map(lambda t: "#" * t[0] + " " + t[1]),
    st.lists(st.tuples(words(1, 8), st.integers(0, 3)), min_size=1, max_size=4).map(
        lambda ps: "\n".join([w, f"**{w}**", f"`{w}`", f"[{w}](https://x.org)"][s] for w, s in ps)
    ),
    LONG,
    st.lists(st.tuples(st.booleans(), words(1, 8)), min_size=1, max_size=5).map(
        lambda items: "\n".join(("  - " if sub else "- ") + w for sub, w in items)
    ),
    st.tuples(st.sampled_from(["```", "```py", "~~~", "````"]), CODE).map(
        lambda t: t[0] + "\n" + "\n".join(t[1]) + "\n" + t[0].rstrip("py")
    ),
    CODE.map(lambda ls: "\n".join("    " + line for line in ls)),  # indented code
    st.lists(st.tuples(words(1, 3), words(1, 3)), min_size=1, max_size=5).map(
        lambda rows: "| a | b |\n|---|---|\n" + "\n".join(f"| {x} | {y} |" for x, y in rows)
    ),
    st.lists(words(1, 8), min_size=1, max_size=4).map(lambda ls: "> " + "\n> ".join(ls)),
)


def _pre(lines: list[str]) -> str:
    """Code as a highlighter writes it: words in spans, or a whole line (a docstring's,
    indentation included) in one; ``(`` as an entity."""
    spans = [
        re.sub(W, f'<span class="n">{W}</span>', line) if i % 2 else f"<span>{line}</span>"
        for i, line in enumerate(lines)
    ]
    return '<div class="highlight"><pre>' + "\n".join(spans).replace("(", "&#40;") + "</pre></div>"


HTML_BLOCK = st.one_of(
    st.tuples(st.integers(1, 3), words(1, 6)).map(lambda t: f"<h{t[0]}>{t[1]}</h{t[0]}>"),
    st.tuples(wrapped(1, 30), words(1, 4)).map(lambda t: f"<p>{t[0]} <b>{t[1]}</b></p>"),
    LONG.map(lambda t: f"<p>{t}</p>"),
    st.lists(words(1, 8), min_size=1, max_size=4).map(
        lambda ls: "<ul>\n" + "\n".join(f"  <li>{x}</li>" for x in ls) + "\n</ul>"
    ),
    CODE.map(_pre),
    st.lists(st.tuples(words(1, 3), words(1, 3)), min_size=1, max_size=4).map(
        lambda rows: (
            "<table>\n"
            + "\n".join(f"<tr><td>{x}</td>\n<td>{y}</td></tr>" for x, y in rows)
            + "\n</table>"
        )
    ),
)
TEX_BLOCK = st.one_of(
    st.tuples(st.sampled_from(["section", "subsection"]), words(1, 5)).map(
        lambda t: f"\\{t[0]}{{{t[1]}}}"
    ),
    st.tuples(wrapped(1, 40), words(1, 3)).map(lambda t: f"{t[0]} \\emph{{{t[1]}}}."),
    LONG,
    st.lists(words(1, 8), min_size=1, max_size=4).map(
        lambda ls: (
            "\\begin{itemize}\n" + "\n".join(f"  \\item {x}" for x in ls) + "\n\\end{itemize}"
        )
    ),
    CODE.map(lambda ls: "\\begin{verbatim}\n" + "\n".join(ls) + "\n\\end{verbatim}"),
    st.lists(st.tuples(words(1, 3), words(1, 3)), min_size=1, max_size=4).map(
        lambda rows: (
            "\\begin{tabular}{ll}\n"
            + "\n".join(f"{x} & {y} \\\\" for x, y in rows)
            + "\n\\end{tabular}"
        )
    ),
)
TEXT_BLOCK = st.one_of(wrapped(1, 40), LONG, CODE.map("\n".join))


def _outside(unit: Unit, lines: list[str]) -> list[str]:
    """The unit's first and last words that its cited lines do not hold."""
    start, end = unit.lines
    window = "\n".join(lines[start - 1 : end])
    found = WORD.findall(unit.text)
    ends = {found[0], found[-1]} if found else set()
    return [w for w in ends if not re.search(rf"(?<![^\W_]){re.escape(w)}(?![^\W_])", window)]


def _check(path: str, data: bytes) -> list[Unit]:
    doc = extract(path, data)
    lines = source_text(path, data)[0].replace("\r\n", "\n").split("\n")
    for u in doc.units:
        assert not _outside(u, lines), (u.lines, u.text[:80], u.text[-80:])
    return doc.units


@SETTINGS
@given(st.lists(MD_BLOCK, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_markdown_cited_lines_cover_first_and_last_words(blocks, nl):
    _check("doc.md", _fill("\n\n".join(blocks)).replace("\n", nl).encode())


@SETTINGS
@given(st.lists(HTML_BLOCK, min_size=1, max_size=8))
def test_html_cited_lines_cover_first_and_last_words(blocks):
    body = "\n".join(blocks)
    _check("doc.html", _fill(f"<html><body>\n{body}\n</body></html>\n").encode())


@SETTINGS
@given(st.lists(TEX_BLOCK, min_size=1, max_size=8))
def test_latex_cited_lines_cover_first_and_last_words(blocks):
    body = "\n\n".join(blocks)
    tex = f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    _check("doc.tex", _fill(tex).encode())


@SETTINGS
@given(st.lists(TEXT_BLOCK, min_size=1, max_size=8), st.sampled_from(["\n\n", "\n\f\n"]))
def test_text_cited_lines_cover_first_and_last_words(blocks, sep):
    text = _fill(sep.join(blocks))
    tokens = set(text.split())
    for u in _check("doc.txt", text.encode()):
        assert set(u.text.split()) <= tokens  # a window never cuts a token


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.one_of(wrapped(1, 40), LONG), min_size=1, max_size=3), max_size=3))
def test_pdf_cited_lines_cover_first_and_last_words(pages):
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for paragraphs in [*pages, [W]]:
        pdf.add_page()
        pdf.multi_cell(0, 6, _fill("\n\n".join(paragraphs)))
    _check("doc.pdf", bytes(pdf.output()))


def test_a_fenced_block_ending_in_indented_lines_is_cited_to_its_last_line():
    md = "# T\n\nIntro.\n\n```js\nfunction f() {\n  try {\n    run();\n  }\n```\n"
    (unit,) = extract("a.md", md.encode()).units
    assert unit.lines == (1, 9)


def test_a_pre_block_of_indented_lines_is_cited_to_its_last_line():
    html = "<h1>T</h1>\n<pre>x = 1\n    <span>y</span> = 2\n    z = 3\n</pre>\n"
    (unit,) = extract("a.html", html.encode()).units
    assert unit.lines == (1, 4)


def test_the_newline_right_after_a_pre_tag_is_no_text_of_its_block():
    """HTML drops a newline that follows ``<pre>`` at once; kept, a passage opening with
    the block began on the tag's line, and its snippet was cited one line before it."""
    from kbx.extract.formats import html as html_format
    from kbx.extract.textmap import locate

    page = '<p>Run this:</p>\n<pre class="screen">\n$ vim +argdo\n$ make\n</pre>\n'
    blocks, _, _ = html_format.parse(page, page, "utf-8")
    code = blocks[-1]
    assert code.text.startswith("$ vim")
    assert locate(code.segments, code.text, 0).line == 3


def test_a_window_edge_never_cuts_a_doi():
    doi = "10.1016/j.bpj.2017.08.022"
    for shift in range(9):  # a DOI at every offset from the cuts
        text = " ".join(
            ["w"] * shift + [f"see {doi}" if i % 7 == 0 else f"w{i}" for i in range(1200)]
        )
        units = extract("refs.txt", text.encode()).units
        assert len(units) > 2
        assert {t for u in units for t in u.text.split()} <= set(text.split())
