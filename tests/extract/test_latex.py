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
from kbx.extract.model import PARTLY_AS_TEXT
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


def _units(src: str):
    doc = extract("manual.tex", src.encode())
    return doc, "\n\n".join(u.text for u in doc.units)


def _at(doc, word: str) -> tuple[int, int]:
    """Line and column of the first ``word`` in the clean text, by the offset map."""
    for u in doc.units:
        if word in u.text:
            p = locate(u.segments, u.text, u.text.index(word), doc.encoding)
            return p.line, p.col
    raise AssertionError(f"{word!r} not in the clean text")


def test_an_unclosed_display_math_opener_loses_nothing_after_it():
    r"""A style that makes ``\[`` a unit macro (``32\[pt]``): pylatexenc opens display math
    there and never closes it, which dropped the rest of the file. TeX ends math at a blank
    line: an opener no ``\]`` closes before one typesets nothing."""
    src = (
        "\\documentclass{article}\n\\begin{document}\n\\section{Units}\n"
        "A width of 32\\[pt] is fine.\n\n\\section{Later}\nquinceword after it.\n"
        "\\end{document}\n"
    )
    doc, text = _units(src)
    assert "quinceword after it." in text and "A width of 32pt] is fine." in text
    assert [u.heading_path for u in doc.units][-1] == ("Later",)  # headings still parsed
    assert _at(doc, "quinceword") == (7, 0)
    [warning] = doc.warnings
    assert warning.startswith(PARTLY_AS_TEXT) and "line 4 (unclosed \\[)" in warning


def test_a_dollar_typed_in_an_argument_does_not_turn_the_rest_to_source():
    r"""``\dirname{$HOME}``: the ``$`` opened math that swallowed paragraphs and headings,
    so every later passage was raw LaTeX under the same heading."""
    src = (
        "\\documentclass{article}\n\\begin{document}\n\\section{Setup}\n"
        "Put it in \\dirname{$HOME/.profile} first.\n\n"
        "\\section{Next}\nThe \\emph{plumword} section.\n\\end{document}\n"
    )
    doc, text = _units(src)
    assert "\\section" not in text and "\\emph" not in text
    assert "The plumword section." in text and "$HOME/.profile" in text
    assert [u.heading_path for u in doc.units] == [("Setup",), ("Next",)]
    assert _at(doc, "plumword") == (7, 10)
    assert "line 4 (unclosed $)" in doc.warnings[0]


def test_an_unclosed_argument_or_environment_is_read_on():
    src = (
        "\\documentclass{article}\n\\begin{document}\nIntro.\n"
        "\\footnote{never closed\n\nlimeword stays.\n\\begin{equation}\nx = 1\n\n"
        "figword too.\n\\end{document}\n"
    )
    doc, text = _units(src)
    assert "limeword stays." in text and "figword too." in text
    assert len(doc.warnings) == 1 and "unclosed environment equation" in doc.warnings[0]


def test_well_formed_latex_has_no_warning():
    doc, text = _units(
        "\\documentclass{article}\n\\begin{document}\nMath $x^{2}$ and \\[ y \\] and "
        "{\\bf bold} \\textbf{b}.\n\n\\begin{alltt}\nPATH=$HOME:$PATH\n\\end{alltt}\n"
        "Type \\verb|$| or \\path{$HOME}, then $a$$b$ and \\(c\\) \\\\[2mm] end.\n"
        "\\end{document}\n"
    )
    assert doc.warnings == [] and "Math $x^{2}$ and and bold b." in text
    assert "Type $ or $HOME, then $a$$b$ and \\(c\\) end." in text
    assert "PATH=$HOME:$PATH" in text  # a listing's $ opens no math


def test_logos_give_their_word_and_kerning_is_dropped():
    src = (
        "\\documentclass{article}\n"
        "\\def\\BibTeX{{\\rm B\\kern-.05em{\\sc i\\kern-.025em b}\\kern-.08em T}}\n"
        "\\title{B\\kern-.05em{\\large I}\\kern-.025em{\\large B}\\kern-.08em\\TeX ing}\n"
        "\\begin{document}\n"
        "Run \\BibTeX\\ and \\LaTeX{} under \\TL, \\XeTeX, \\LuaTeX, \\ConTeXt, \\MF, \\MP "
        "and \\AmS; skip\\hskip 3pt plus 1fil on\\kern-.1667em x.\n"
        "\\end{document}\n"
    )
    doc, text = _units(src)
    assert "Run BibTeX and LaTeX under TeX Live, XeTeX, LuaTeX, ConTeXt, Metafont, " in text
    assert "MetaPost and AMS; skip on x." in text
    assert doc.meta.title == "BIBTeX ing" and not re.search(r"\d(em|pt)|fil", text)
    assert _at(doc, "LaTeX") == (5, 18)  # a logo spelled as its macro maps to its name
    assert doc.warnings == []


def test_unknown_macros_without_text_keep_their_name():
    src = (
        "\\documentclass{article}\n\\begin{document}\n"
        "Get it from \\CTAN{} or \\KPS\\ today; \\pkgname{url} and \\path|a$b| "
        "\\noindent\\bf done\\hfill.\n\\end{document}\n"
    )
    doc, text = _units(src)
    assert "Get it from CTAN or KPS today; url and a$b done." in text
    assert "noindent" not in text and "hfill" not in text and "bf" not in text


def test_space_macro_is_a_space_and_primitives_are_no_words():
    doc, text = _units(
        "\\documentclass{article}\n\\begin{document}\n"
        "Left\\space right \\protected\\edef done.\n\\end{document}\n"
    )
    assert "Left right done." in text


def test_percent_and_hash_in_urls_are_literal_and_keep_their_place():
    """The url package's rule: in ``\\url``, ``\\href``'s URL and ``\\path`` a ``%`` opens
    no comment, so the rest of the line stays text, each character at its own column."""
    body = (
        "See \\url{http://example.com/a%20b} then gazelle.\n"
        "Also \\href{http://x.org/a%20b#frag}{the link} now antelope; \\url|http://y/%z| ok.\n"
        "And \\path{C:\\a%b} later zebra."
    )
    doc, lines = _doc(body)
    text = "\n\n".join(u.text for u in doc.units)
    assert "http://example.com/a%20b then gazelle." in text
    assert "http://x.org/a%20b#frag the link now antelope; http://y/%z ok." in text
    assert "later zebra" in text
    for word in ("a%20b", "gazelle", "a%20b#frag", "antelope", "/%z", "C:\\a%b", "zebra"):
        line, col = _at(doc, word)
        assert lines[line - 1][col : col + len(word)] == word


def test_authors_joined_by_and_are_two_as_in_bibtex():
    preamble = "\\author{Grace Hopper and Alan Turing}\n"
    doc, _ = _doc("Text.", preamble)
    assert doc.meta.authors == ["Grace Hopper", "Alan Turing"]


def test_a_setup_macro_quoted_by_a_documentation_macro_is_its_name():
    """polyglossia's manual writes ``\\Cmd\\setmainlanguage``: kbx took every unknown
    \\set…, \\new…, \\use… macro for setup that typesets nothing, so the manual could not
    be searched for its own commands. Quoted by a macro kbx does not know, it is the
    manual's subject; alone, it is still setup."""
    src = (
        "\\documentclass{article}\n\\newcommand\\Cmd[1]{\\texttt{\\string#1}}\n"
        "\\begin{document}\nSet it with \\Cmd\\setmainlanguage{} first.\n"
        "Or with \\Cmd{\\setotherlanguage} later. Alone: \\setkeyslanguage here.\n"
        "\\end{document}\n"
    )
    (unit,) = extract("manual.tex", src.encode()).units
    assert "setmainlanguage" in unit.text and "setotherlanguage" in unit.text
    assert "setkeyslanguage" not in unit.text and "Alone: here." in unit.text
    line = src.split("\n").index(
        "Or with \\Cmd{\\setotherlanguage} later. Alone: \\setkeyslanguage here."
    )
    at = unit.text.index("setotherlanguage")
    assert locate(unit.segments, unit.text, at).line == line + 1
