"""Manual pages in roff (man(7), mdoc(7)): their words, sections and lines, never a failure."""

from __future__ import annotations

import gzip

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.extract import extract, format_of
from kbx.extract.model import PARTLY_AS_TEXT
from kbx.extract.textmap import locate

MAN = r""".\" Copyright notice that must not show
.TH LS 1 "2023-03-24" "GNU coreutils 9.1" "User Commands"
.SH NAME
ls \- list directory contents
.SH DESCRIPTION
.PP
List information about the FILEs, sorted
alphabetically if none of \fB\-cftuvSUX\fR nor \fB\-\-sort\fP is given.
.TP
\fB\-a\fR, \fB\-\-all\fR
do not ignore entries starting with .
.SS "Exit status"
Full documentation \(em see \*(lqinfo\*(rq and
.BR dir (1)
or \f(CWvdir\fR; caf\[u00E9] \(co here\(aqs
.IR "two words" " and" " more"
.de XX
macro body that must not leak
..
.ds Yo nroffword
.ie t .ds Yo troffword
.ie t \{\
leakedbranch
.\}
.el \{\
.ds Zz elseword
.\}
Strings: \*(Yo \*(Zz long\
line joined.
.nf
  first line
second line
.fi
"""

MDOC = r""".Dd March 5, 2023
.Dt GREP 1
.Os
.Sh NAME
.Nm grep
.Nd file pattern searcher
.Sh SYNOPSIS
.Nm
.Op Fl abc
.Op Ar pattern
.Sh DESCRIPTION
The
.Nm
utility searches any given input files, see
.Xr regex 3 ,
.Dq quoted .
.Bl -tag -width indent
.It Fl o Ns Ar file
Write to
.Pa /tmp/out .
.El
"""


def _texts(doc) -> dict[str, str]:
    return {u.heading_path[-1]: u.text for u in doc.units}


def _where(doc, data: bytes, word: str) -> int:
    """The source line the first clean ``word`` of ``doc`` maps to."""
    for u in doc.units:
        at = u.text.find(word)
        if at >= 0:
            return locate(u.segments, u.text, at, doc.encoding).line
    raise AssertionError(f"{word!r} not in the clean text")


def _line_of(src: str, word: str) -> int:
    return next(n for n, line in enumerate(src.split("\n"), 1) if word in line)


def test_a_man_page_gives_its_words_title_and_sections():
    doc = extract("man1/ls.1", MAN.encode())
    assert doc.format == "roff" and doc.warnings == []
    assert doc.meta.title == "LS(1)" and doc.meta.date == "2023-03-24"
    texts = _texts(doc)
    assert set(texts) == {"NAME", "DESCRIPTION", "Exit status"}
    assert all(u.heading_path[0] == "LS(1)" for u in doc.units)
    assert texts["NAME"].endswith("ls - list directory contents")
    desc = texts["DESCRIPTION"]
    assert "none of -cftuvSUX nor --sort is given." in desc
    assert "-a, --all do not ignore entries" in desc
    status = texts["Exit status"]
    assert "documentation — see “info” and dir(1) or vdir; café © here's" in status
    assert "two words and more" in status  # .IR joins its arguments with no space
    assert "Strings: nroffword elseword longline joined." in status
    assert "  first line\nsecond line" in status  # .nf keeps its lines
    every = " ".join(u.text for u in doc.units)
    for leak in ("Copyright", "macro body", "leakedbranch", "troffword", "\\f", ".TP", "XX"):
        assert leak not in every


def test_every_word_of_a_man_page_maps_to_its_source_line():
    data = MAN.encode()
    doc = extract("ls.1", data)
    for word in ("contents", "alphabetically", "cftuvSUX", "ignore", "documentation", "dir",
                 "here", "first", "second", "joined", "Exit"):  # fmt: skip
        assert _where(doc, data, word) == _line_of(MAN, word), word
    for u in doc.units:  # a unit's lines cover the lines its words come from
        lo, hi = u.lines
        lines = {locate(u.segments, u.text, i).line for i, c in enumerate(u.text) if c.strip()}
        assert lo == min(lines) and hi == max(lines)
    # a string's value is cited at the line that uses it, not where it was defined
    assert _where(doc, data, "nroffword") == _line_of(MAN, "Strings:")


def test_an_mdoc_page_reads_as_mandoc_prints_it():
    data = MDOC.encode()
    doc = extract("grep.1", data)
    assert doc.meta.title == "GREP(1)" and doc.meta.date == "March 5, 2023"
    texts = _texts(doc)
    assert texts["NAME"].endswith("grep — file pattern searcher")
    assert texts["SYNOPSIS"].endswith("grep [-abc] [pattern]")
    desc = texts["DESCRIPTION"]
    assert "The grep utility searches any given input files, see regex(3), “quoted”." in desc
    assert "-ofile Write to /tmp/out." in desc
    assert _where(doc, data, "/tmp/out") == _line_of(MDOC, "/tmp/out")


def test_a_page_that_only_points_to_another_says_where():
    doc = extract("man1/vdir.1", b".so man1/ls.1\n")
    assert [u.text for u in doc.units] == ["see man1/ls.1"]
    assert doc.units[0].lines == (1, 1)


def test_a_rotated_log_with_a_section_suffix_is_plain_text():
    log = "Dec  5 20:14:01 host kernel: eth0 up\nDec  5 20:14:02 host sshd[12]: .accepted\n"
    as_log = extract("var/log/syslog.1", log.encode())
    as_text = extract("syslog.txt", log.encode())
    assert as_log.format == "roff"  # by its name; by its content, text
    assert [u.text for u in as_log.units] == [u.text for u in as_text.units]
    assert "kernel: eth0 up" in as_log.units[0].text


def test_a_japanese_page_keeps_its_words_whole():
    page = (
        ".TH LS 1\n.SH 名前\nls \\- ディレクトリの内容を\n一覧表示する\n"
        ".SH 説明\n\\fB\\-a\\fR 全て\n"
    )
    data = page.encode("utf-8")
    doc = extract("ja/man1/ls.1", data)
    texts = _texts(doc)
    assert set(texts) == {"名前", "説明"}
    assert "ls - ディレクトリの内容を一覧表示する" in texts["名前"]  # no space inside CJK
    assert _where(doc, data, "一覧") == 4


def test_a_gzipped_page_is_read_as_the_page_inside():
    doc = extract("man/man1/ls.1.gz", gzip.compress(MAN.encode()))
    assert doc.format == "roff" and doc.meta.title == "LS(1)"
    assert "list directory contents" in doc.units[0].text


def test_which_names_are_manual_pages():
    pages = ("ls.1", "ls.1.gz", "SSL_new.3ssl.gz", "perlfunc.1p", "Foo::Bar.3pm", "mount.8")
    assert {format_of(p) for p in pages} == {"roff"}
    assert format_of("libc.so.6") is None and format_of("libfoo.so.1.2.3") is None
    assert format_of("man8/ld.so.8.gz") == format_of("libnss_x.so.2.8.gz") == "roff"
    assert format_of("notes.n") is None and format_of("data.10") is None


def test_a_broken_page_gives_its_text_and_a_warning():
    page = ".TH X 1\n.SH A\nkept words\n.if n \\{\\\nmore words\n.de YY\nnever closed\n"
    doc = extract("x.1", page.encode())
    assert "kept words" in doc.units[0].text and "more words" in doc.units[0].text
    assert "never closed" not in " ".join(u.text for u in doc.units)
    assert any("never closed" in w for w in doc.warnings)


_PIECES = st.sampled_from(
    [".TH A 1", ".SH", ".SH NAME", ".SS x", ".Sh S", ".B bold", ".BR a (1)", ".TP", ".IP \\(bu",
     ".nf", ".fi", ".EX", ".EE", ".de Q", "..", ".ds S \\*S", ".ie n \\{\\", ".el \\{", ".\\}",
     ".if t \\{", "\\}", ".so x", ".TS", "l l.", "a\tb", "T{", "T}", ".TE", ".Op Fl v Ar",
     ".Fo f", ".Fa x", ".Fc", ".Xr ls", ".It Fl", ".Bd -literal", ".Ed", "\\f(CW", "\\[u00",
     "\\(", "\\*(", "\\s+2x", "\\h'", "\\", "\\c", "\"", "'", "word", "言葉", "", "\t", " ",
     ".nr x 1", ".if \\nx .ds y z", ".if '\\*y'z' .B eq", ".Ex -std", ".Nm", "\x00"]
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_PIECES, max_size=4).map(" ".join), max_size=30))
def test_any_roff_ish_text_gives_units_inside_the_file(lines):
    src = ".TH T 1\n" + "\n".join(lines).replace("\x00", "\ufffd")
    doc = extract("t.1", src.encode())
    n = src.count("\n") + 1
    assert not any(w.startswith(PARTLY_AS_TEXT) for w in doc.warnings)  # no reader bug
    for u in doc.units:
        lo, hi = u.lines
        assert 1 <= lo <= hi <= n
        assert u.text.strip()


def test_a_search_finds_a_word_of_a_pages_description_and_cites_its_line(tmp_path):
    from kbx import api
    from kbx.indexing.ingest import index

    root = tmp_path / "man"
    (root / "man1").mkdir(parents=True)
    (root / "man1" / "ls.1.gz").write_bytes(gzip.compress(MAN.encode()))
    (root / "man1" / "grep.1").write_text(MDOC)
    (root / "python3.9").write_bytes(b"\x7fELF\x02\x01\x00\x00" * 64)  # a program, not a page
    report = index(root)
    assert report.new == 2 and not report.failed
    assert [(f["path"], f["status"]) for f in report.failures] == [("python3.9", "skipped")]
    hit = api.search(api.Index.for_root(root), "alphabetically").hits[0]
    assert hit.path == "man1/ls.1.gz" and hit.heading_path[-1] == "DESCRIPTION"
    line = _line_of(MAN, "alphabetically")
    assert hit.start_line <= line <= hit.end_line and hit.focus_lines[0] <= line
