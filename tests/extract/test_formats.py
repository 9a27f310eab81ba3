"""Each parser: clean text, structure, metadata, and positions that point at the source."""

from __future__ import annotations

import hashlib

import pytest
from helpers import HTML, LATEX, MARKDOWN, TEXT, make_pdf

from kbx.errors import ExtractError, NotItsFormat
from kbx.extract import extract, format_of, source_text
from kbx.extract.model import CODE, TABLE
from kbx.extract.textmap import locate


def _source_lines(path: str, data: bytes) -> list[str]:
    return source_text(path, data)[0].replace("\r\n", "\n").split("\n")


def _where(doc, data: bytes, word: str) -> tuple[int, str]:
    """The original line number of ``word``'s first occurrence in any unit, and that line."""
    lines = _source_lines(doc.path, data)
    for u in doc.units:
        i = u.text.find(word)
        if i >= 0:
            p = locate(u.segments, u.text, i, doc.encoding)
            return p.line, lines[p.line - 1][p.col : p.col + len(word)]
    raise AssertionError(f"{word!r} not in any unit")


def test_markdown_front_matter_structure_and_positions():
    data = MARKDOWN.encode()
    doc = extract("notes/cedar.md", data)
    assert doc.meta.title == "Cedar supplier approval"
    assert doc.meta.date == "2021-03-04"
    assert doc.meta.authors == ["Ann Lee"]
    assert doc.meta.fields["category"] == "process"
    text = "\n".join(u.text for u in doc.units)
    assert "Supplier approval is required for every vendor" in text
    assert "the policy and AT&T's note" in text  # link URL dropped, entity decoded
    assert "https://example.org" not in text and "**" not in text
    assert _where(doc, data, "required") == (9, "required")
    assert _where(doc, data, "cedar-check") == (15, "cedar-check")
    assert _where(doc, data, "vendor.score") == (19, "vendor.score")
    # the declared title is the root of every heading path
    assert all(
        u.heading_path[:2] == ("Cedar supplier approval", "Project Cedar") for u in doc.units
    )
    assert any(u.heading_path[1:] == ("Project Cedar", "Steps") for u in doc.units)
    assert doc.sha256 == hashlib.sha256(data).hexdigest()


def test_markdown_code_and_tables_keep_their_kind():
    md = "# A\n\n```sh\n" + "\n".join(f"step{i} --flag" for i in range(300)) + "\n```\n"
    doc = extract("a.md", md.encode())
    assert {u.kind for u in doc.units[1:]} == {CODE}
    table = "# T\n\n" + "| k | v |\n|---|---|\n" + "".join(f"| key{i} | {i} |\n" for i in range(5))
    doc = extract("t.md", table.encode())
    assert doc.units[0].kind == TABLE
    assert "key3 | 3" in doc.units[0].text


def test_markdown_tab_indented_continuation_is_read_from_the_source():
    """A list item's next line indented by a tab: the parser gives it as spaces, and the
    line is still found in the source, so its markup is stripped and its place is exact."""
    data = b"- first item\n\tgoes on `code` *here*\n- second\n"
    doc = extract("a.md", data)
    assert doc.units[0].text == "first item goes on code here\n\nsecond"
    assert doc.units[0].code_spans == ((19, 23),)
    assert _where(doc, data, "goes") == (2, "goes")
    assert _where(doc, data, "here") == (2, "here")


def test_markdown_nested_deeper_than_twenty_levels_keeps_its_text():
    """markdown-it-py dropped what lay past 20 levels of nesting; nothing is dropped now."""
    data = ">" * 25 + " deep words\n\n" + "".join("  " * i + f"- l{i}\n" for i in range(15))
    doc = extract("deep.md", data.encode())
    text = "\n".join(u.text for u in doc.units)
    assert "deep words" in text and "l14" in text
    assert _where(doc, data.encode(), "words") == (1, "words")
    assert _where(doc, data.encode(), "l14") == (17, "l14")


def test_markdown_lines_are_right_after_multibyte_text():
    """The parser maps blocks by byte; lines must hold where bytes and characters part."""
    data = (
        "# Überschrift ünïcödé\n\n数据 und **fett** — «Anführung».\n\n"
        "| Spalte | 值 |\n|---|---|\n| 日本 | ✓ |\n\n```py\nprint('日本語')\n```\n\n"
        "- 項目\n  続き\n- endword\n"
    ).encode()
    doc = extract("u.md", data)
    assert _where(doc, data, "fett") == (3, "fett")
    assert _where(doc, data, "日本 | ✓") == (7, "日本 | ✓")
    assert _where(doc, data, "print") == (10, "print")
    assert _where(doc, data, "続き") == (14, "続き")
    assert _where(doc, data, "endword") == (15, "endword")


def test_markdown_nul_past_the_binary_check_reads_as_replacement_character():
    """A NUL after the first 8 KiB reaches the parser; it reads as U+FFFD, as it always did."""
    data = b"x" * 9000 + b"\n\npara with \0 nul\n"
    text = "\n".join(u.text for u in extract("n.md", data).units)
    assert "para with \ufffd nul" in text and "\0" not in text


def test_html_skips_scripts_and_navigation_and_keeps_structure():
    data = HTML.encode()
    doc = extract("web.html", data)
    text = "\n".join(u.text for u in doc.units)
    assert doc.meta.title == "Release notes v18.2.0"
    assert doc.meta.authors == ["Bo Chen"] and doc.meta.date == "2022-06-14"
    for hidden in ("scriptword", "navword", "color: red"):
        assert hidden not in text
    assert "The fix for ERR_4021 landed in v18.2.0 \u2014 see the tracker." in text
    assert "npm install cedar@18.2.0\ncedar --verify" in text
    assert "latency | 250 ms" in text
    assert "Unclosed paragraph with italics" in text  # malformed HTML still read
    assert _where(doc, data, "ERR_4021") == (7, "ERR_4021")
    assert _where(doc, data, "cedar --verify") == (12, "cedar --verify")
    assert any(
        u.heading_path == ("Release notes v18.2.0", "Release notes", "Changes") for u in doc.units
    )


def test_html_honours_declared_legacy_encoding():
    body = (
        '<html><head><meta charset="Shift_JIS"></head><body><p>日本語のテキスト</p></body></html>'
    )
    doc = extract("ja.html", body.encode("cp932"))
    assert doc.encoding == "cp932"
    assert "日本語のテキスト" in doc.units[0].text
    p = locate(doc.units[0].segments, doc.units[0].text, 0, doc.encoding)
    assert p.byte == body.encode("cp932").index("日本語".encode("cp932"))


def test_latex_metadata_sections_and_includes():
    data = LATEX.encode()
    doc = extract("paper.tex", data)
    assert doc.meta.title == "Evaluating seL4"
    assert doc.meta.authors == ["Ann Lee", "Bo Chen"]
    assert doc.meta.date == "4 March 2021"
    assert doc.meta.fields["includes"] == ["methods.tex"]
    assert any("leaves the indexed root" in w for w in doc.warnings)
    text = "\n".join(u.text for u in doc.units)
    assert "The seL4 kernel is formally verified." in text
    assert "comment" not in text and "klein2009" not in text
    assert "make sel4 --proofs" in text
    assert any(u.heading_path == ("Evaluating seL4", "Introduction", "Method") for u in doc.units)
    assert any(u.heading_path == ("Evaluating seL4", "Abstract") for u in doc.units)
    assert _where(doc, data, "formally verified") == (11, "formally verified")


def test_text_with_crlf_and_form_feed():
    data = TEXT.encode()
    doc = extract("runbook.txt", data)
    assert doc.meta.title == "Runbook"  # no declared title: the first line
    assert all(u.heading_path == () for u in doc.units)
    text = "\n".join(u.text for u in doc.units)
    assert "Back up the database nightly. Keep 3.5 GB free." in text
    assert _where(doc, data, "Restore drill") == (6, "Restore drill")
    u = next(u for u in doc.units if "Keep" in u.text)
    p = locate(u.segments, u.text, u.text.index("Keep"), doc.encoding)
    assert data[p.byte : p.byte + 4] == b"Keep"  # bytes count the \r the lines hide


def test_pdf_pages_metadata_and_unreadable_page(tmp_path):
    path = make_pdf(
        tmp_path / "r.pdf",
        ["Kernel proofs on page one.", None, "Heap sizes here."],
        title="Kernel report",
        author="Ann Lee",
    )
    data = path.read_bytes()
    doc = extract("r.pdf", data)
    assert doc.meta.title == "Kernel report" and doc.meta.authors == ["Ann Lee"]
    assert doc.meta.date and doc.meta.date[:2] == "20"
    assert doc.warnings == ["pages with no text layer (images only?): 1 of 3 (2)"]
    assert [u.page for u in doc.units] == [1, 3]
    assert _where(doc, data, "Heap sizes")[1] == "Heap sizes"


def test_pdf_without_any_text_and_corrupt_pdf_fail_with_a_reason(tmp_path):
    blank = make_pdf(tmp_path / "scan.pdf", [None, None]).read_bytes()
    with pytest.raises(ExtractError, match="no extractable text on any of 2 pages"):
        extract("scan.pdf", blank)
    with pytest.raises(ExtractError, match="corrupt"):
        extract("bad.pdf", b"%PDF-1.4\n garbage that is not a pdf")


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", "empty file"), (b"\x00\x01\x02binary\x00", "binary file"), (b"  \n\n", "empty file")],
)
def test_unreadable_inputs_fail_with_a_reason(data, reason):
    with pytest.raises(ExtractError, match=reason):
        extract("x.md", data)


def test_legacy_encoding_is_detected_and_bom_honoured():
    latin = "# Café\n\nA naïve façade in Zürich, déjà vu. " * 3
    doc = extract("l.md", latin.encode("cp1252"))
    assert "naïve façade" in doc.units[0].text
    doc = extract("b.txt", "Hello BOM".encode("utf-8-sig"))
    assert doc.units[0].text == "Hello BOM" and doc.encoding == "utf-8-sig"


def test_pdf_words_hyphenated_at_a_line_end_are_joined_and_mapped(tmp_path):
    """pdfium marks a hyphen at a line's end with ``\\x02`` and drops the line break:
    ``near\\x02est`` is one word split (joined), ``well\\x02known`` a compound whose words the
    document uses alone (kept); the shown text has the hyphen, offsets unchanged."""
    path = make_pdf(
        tmp_path / "h.pdf", ["The near-\nest station is a well-\nknown place; well known too."]
    )
    data = path.read_bytes()
    doc = extract("h.pdf", data)
    (u,) = doc.units
    assert u.text == "The nearest station is a well-known place; well known too."
    shown = source_text("h.pdf", data)[0]
    assert "\x02" not in shown and shown.startswith("The near-est station is a well-known")
    for word, at in [("nearest", 4), ("est station", 9), ("well-known", 26)]:
        p = locate(u.segments, u.text, u.text.index(word), doc.encoding)
        assert (p.line, p.col) == (1, at) and shown[at] == word[0]


def test_utf8_lines_in_a_latin1_file_are_decoded_each_as_written():
    """A Latin-1 changelog with UTF-8 names pasted in: read whole as a code page, the pasted
    lines turned to mojibake (``KÅ‚oczko``). Each line is UTF-8 where valid, else the code
    page; byte offsets count each line in its own encoding, across windowed units too."""
    latin = ["Fixed by Stéphane Härdeman in the café, naïve résumé of the façade."] * 3
    pasted = ["Thanks to Tomasz Kłoczko and Björn for the ‰ fix — merged."] * 3
    lines = [x for pair in zip(latin, pasted, strict=True) for x in pair] * 40
    data = (
        b"\n".join(line.encode("utf-8" if line in pasted else "latin-1") for line in lines) + b"\n"
    )
    doc = extract("changelog.txt", data)
    text = "\n".join(u.text for u in doc.units)
    assert "Kłoczko" in text and "Stéphane Härdeman" in text and "Å" not in text
    assert str(doc.encoding).startswith("utf-8+") and len(doc.units) > 1
    raw = data.split(b"\n")
    for u in doc.units:
        for word in ("Kłoczko", "‰", "Härdeman", "façade"):
            if word in u.text:
                p = locate(u.segments, u.text, u.text.index(word), doc.encoding)
                encoding = "utf-8" if word in ("Kłoczko", "‰") else "latin-1"
                assert data[p.byte :].startswith(word.encode(encoding))
                assert raw[p.line - 1].decode(encoding)[p.col :].startswith(word)


def test_a_file_in_one_legacy_code_page_is_not_read_line_by_line():
    data = "Zürich\nno accents here\nGrüße aus Köln\n".encode("cp1252")
    doc = extract("l.txt", data)
    assert "+" not in doc.encoding and "Grüße aus Köln" in doc.units[0].text


def test_pdf_running_heads_footers_and_page_numbers_make_no_text(tmp_path):
    """Lines at a page's top or bottom that recur there (page numbers aside) on a quarter of
    the pages are the page's, not the text's: cut out of the clean text, never a passage;
    the body, a line that recurs in the middle of pages and numbered lines whose numbers do
    not count the pages stay, and map back exactly."""
    pages = [  # the sections' numbers, under the head, do not count the pages
        f"Gnuplot 5.4 manual\n\nSection {n * 37 % 100} body on plotting surfaces.\n\n"
        f"Plotting tip: use splot.\n\nMore body text of page {n}.\n\ngnuplot 5.4 {n + 20}\n{n}"
        for n in range(1, 6)
    ]
    data = make_pdf(tmp_path / "g.pdf", pages).read_bytes()
    doc = extract("g.pdf", data)
    text = "\n".join(u.text for u in doc.units)
    assert text.count("Gnuplot 5.4 manual") == 1  # the first page's title, not a head
    assert "gnuplot 5.4 2" not in text
    assert all(not u.text.strip().isdigit() for u in doc.units)  # no page number alone
    assert text.count("Plotting tip: use splot.") == 5  # recurring, but not at an edge
    for n in range(1, 6):
        line, shown = _where(doc, data, f"Section {n * 37 % 100} body")
        assert shown == f"Section {n * 37 % 100} body"


def test_pdf_of_two_pages_keeps_every_line(tmp_path):
    pages = ["Alpha report\n\nBody one.", "Alpha report\n\nBody two."]
    data = make_pdf(tmp_path / "t.pdf", pages).read_bytes()
    text = "\n".join(u.text for u in extract("t.pdf", data).units)
    assert text.count("Alpha report") == 2  # too few pages to call a line furniture


def test_well_known_names_without_an_extension_are_text():
    assert format_of("README") == format_of("pkg/ChangeLog") == format_of("NEWS") == "text"
    assert format_of("pkg/truebin") is None and format_of("pkg/README.bin") is None
    # Debian's variants are the same texts, gzipped copies too; programs are not
    debian = (
        "README.Debian",
        "changelog.Debian",
        "NEWS.Debian",
        "README.source",
        "NEWS.gz",
        "changelog.Debian.amd64.gz",
    )
    assert {format_of(f"usr/share/doc/pkg/{n}") for n in debian} == {"text"}
    assert not {format_of(n) for n in ("x.gz", "install.sh", "history.py", "dir.info.bak")} - {None}
    doc = extract("docs/AUTHORS", b"Ann Lee <ann@example.org>\n")
    assert doc.units[0].text == "Ann Lee <ann@example.org>"


def test_a_name_in_capitals_and_a_variant_of_a_variant_are_text_a_program_is_skipped():
    """gnupg's DETAILS and KEYSERVER, Python's ACKS.gz and lvm2's changelog.Debian.devmapper
    were passed over for their names; a program named in capitals is not a failed text."""
    named = ("DETAILS", "doc/KEYSERVER", "DCO.gz", "ACKS.gz", "changelog.Debian.devmapper.gz")
    assert {format_of(n) for n in named} == {"text"}
    other = ("Makefile", "A", "news.go", "changelog.Debian.py", "CHANGES.json", "README.bin")
    assert {format_of(n) for n in other} == {None}
    with pytest.raises(NotItsFormat):
        extract("bin/FOO", b"\x7fELF\x02\x01\x01\x00" * 64)
    with pytest.raises(ExtractError) as failed:  # declared text: a failure, not a guess
        extract("notes.txt", b"\x7fELF\x02\x01\x01\x00" * 64)
    assert not isinstance(failed.value, NotItsFormat)


def test_a_rendered_manual_page_has_its_sections_and_joins_words_hyphenated_by_man():
    page = (
        "LS(1)\t\t\t User Commands\t\t\t LS(1)\n\nNAME\n       ls - list directory contents\n\n"
        "DESCRIPTION\n       Sort entries if none is speci\u2010\n       fied. A well-\n"
        "       known rule.\n"
    )
    doc = extract("ls.txt", page.encode())
    heads = {u.heading_path[-1]: u.text for u in doc.units if u.heading_path}
    assert set(heads) == {"NAME", "DESCRIPTION"}
    assert "is specified." in heads["DESCRIPTION"]  # joined: man's own hyphen, U+2010
    assert "well- known" in heads["DESCRIPTION"]  # an author's hyphen stays
    assert _where(doc, page.encode(), "fied")[1] == "fied"  # mapped to the next line
