r"""LaTeX accents, letters and escapes become the characters they typeset, at their macro.

The expected characters below are written out by hand (not taken from pylatexenc), so
the tests check the library's tables as kbx uses them.
"""

from __future__ import annotations

import re
import string
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.extract import extract
from kbx.extract.textmap import locate

ACCENTS = {
    '"': "\u0308",
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "v": "\u030c",
    "u": "\u0306",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
LETTERS = {
    "i": "ı",
    "j": "ȷ",
    "ss": "ß",
    "SS": "SS",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "o": "ø",
    "O": "Ø",
    "l": "ł",
    "L": "Ł",
    "aa": "å",
    "AA": "Å",
}
ESCAPES = "$%&#_{}"


def _doc(body: str, preamble: str = ""):
    src = f"\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{body}\n\\end{{document}}\n"
    return extract("paper.tex", src.encode()), src.split("\n")


def _text(body: str) -> str:
    return "\n\n".join(u.text for u in _doc(body)[0].units)


def test_issue_example_keeps_every_character_at_its_macro():
    body = r"G\"odel and Erd\H{o}s say it costs \$10, up 5\%, R\&D at Caf\'e"
    doc, lines = _doc(body)
    (u,) = doc.units
    assert u.text == "Gödel and Erdős say it costs $10, up 5%, R&D at Café"
    assert "G\u00f6del" in u.text and unicodedata.is_normalized("NFC", u.text)
    for clean, macro in [("ö", r"\"o"), ("ő", r"\H{o}"), ("$", r"\$"), ("%", r"\%"), ("é", r"\'e")]:
        p = locate(u.segments, u.text, u.text.index(clean), doc.encoding)
        assert (p.line, lines[p.line - 1][p.col :].startswith(macro)) == (3, True)
        assert p.byte == len("\n".join(lines[: p.line - 1])) + 1 + p.col
    p = locate(u.segments, u.text, u.text.index("del"), doc.encoding)
    assert lines[p.line - 1][p.col : p.col + 3] == "del"  # text after a macro stays verbatim


@pytest.mark.parametrize("macro", sorted(ACCENTS))
def test_accent_in_every_form(macro):
    sep = " " if macro.isalpha() else ""
    forms = [f"\\{macro}{sep}o", f"\\{macro}{{o}}", f"{{\\{macro}{sep}o}}"]
    want = unicodedata.normalize("NFC", "o" + ACCENTS[macro])
    assert _text(" ".join(f"x{f}x" for f in forms)) == " ".join([f"x{want}x"] * 3)


@pytest.mark.parametrize("name", sorted(LETTERS))
def test_letter_macros(name):
    assert _text(f"x\\{name}{{}}x {{\\{name}}} \\{name} y") == " ".join(
        [f"x{LETTERS[name]}x", LETTERS[name], LETTERS[name] + "y"]  # "\ss y": the space ends it
    )


def test_dotless_i_takes_the_accent_and_tie_joins_two_letters():
    assert _text(r"na\"{\i}ve \^\i le \'{\j} \t{oo}") == "naïve île j\u0301 o\u0361o"


def test_escapes_ties_dashes_and_quotes():
    assert _text(" ".join("\\" + c for c in ESCAPES)) == " ".join(ESCAPES)
    assert _text(r"a~b 1--2 x---y ``q'' \dots\ end") == "a b 1–2 x—y “q” … end"
    assert _text(r"run \texttt{make --all} in 1--2") == "run make --all in 1–2"


def test_metadata_reads_like_the_body():
    title = r"Proofs by G\"odel, Erd\H{o}s \& Co.\ at Caf\'e {\ss} -- a~survey"
    authors = [
        r"Kurt G\"odel",
        r"Paul Erd\H{o}s",
        r"Jos\'e {\"U}ber~Stra\ss e\thanks{MIT}\email{j@u.de}",
    ]
    date = r"4~M\"arz 2021"
    names = r" \and ".join(authors)
    preamble = f"\\title{{{title}}}\n\\author{{{names}}}\n\\date{{{date}}}\n"
    doc, _ = _doc("\n\n".join([title, *authors, date]), preamble)
    (u,) = doc.units
    body = u.text.split("\n\n")
    assert doc.meta.title == body[0] == "Proofs by Gödel, Erdős & Co. at Café ß – a survey"
    assert doc.meta.authors == body[1:4] == ["Kurt Gödel", "Paul Erdős", "José Über Straße"]
    assert doc.meta.date == body[4] == "4 März 2021"
    assert u.heading_path == (doc.meta.title,)


def test_includes_keep_their_file_names():
    doc, _ = _doc(r"Text \input{parts/sec_one} \include{a--b}")
    assert doc.meta.fields["includes"] == ["parts/sec_one.tex", "a--b.tex"]


def _accented(t: tuple[str, str, int]) -> tuple[str, str]:
    macro, base, form = t
    sep = " " if macro.isalpha() else ""
    src = [f"\\{macro}{sep}{base}", f"\\{macro}{{{base}}}", f"{{\\{macro}{sep}{base}}}"][form]
    return src, base + ACCENTS[macro]


PIECE = st.one_of(  # (LaTeX source, the characters it stands for)
    st.sampled_from(string.ascii_letters + string.digits).map(lambda c: (c, c)),
    st.tuples(
        st.sampled_from(sorted(ACCENTS)), st.sampled_from("aeiouyAEOUncszg"), st.integers(0, 2)
    ).map(_accented),
    st.tuples(st.sampled_from(sorted(LETTERS)), st.booleans()).map(
        lambda t: (f"{{\\{t[0]}}}" if t[1] else f"\\{t[0]}{{}}", LETTERS[t[0]])
    ),
    st.sampled_from(ESCAPES).map(lambda c: ("\\" + c, c)),
)
WORD = st.lists(PIECE, min_size=1, max_size=6)
LINE = st.lists(st.tuples(WORD, st.sampled_from([" ", "~", "  "])), min_size=1, max_size=6)
PARAGRAPHS = st.lists(st.lists(LINE, min_size=1, max_size=4), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PARAGRAPHS)
def test_latex_words_round_trip_to_their_source_line(paragraphs):
    lines = ["\\begin{document}"]
    expected = []  # (clean word, 1-based line, first column, end column)
    for i, para in enumerate(paragraphs):
        if i:
            lines.append("")
        for line in para:
            src = ""
            for pieces, sep in line:
                start = len(src)
                src += "".join(s for s, _ in pieces)
                word = unicodedata.normalize("NFC", "".join(c for _, c in pieces))
                expected.append((word, len(lines) + 1, start, len(src)))
                src += sep
            lines.append(src.rstrip("~ "))
    lines.append("\\end{document}")
    doc = extract("doc.tex", "\n".join(lines).encode())
    found = [(u, m) for u in doc.units for m in re.finditer(r"\S+", u.text)]
    assert [m.group() for _, m in found] == [w for w, *_ in expected]
    for (u, m), (_, line, start, end) in zip(found, expected, strict=True):
        assert unicodedata.is_normalized("NFC", u.text)
        for i in range(m.start(), m.end()):
            p = locate(u.segments, u.text, i, doc.encoding)
            assert p.line == line and start <= p.col < end, (m.group(), p, line, start, end)
            assert lines[line - 1][p.col] in (u.text[i], "\\")  # the character or its macro
