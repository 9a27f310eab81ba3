"""Structure a format does not declare in markup: headings of plain text (RFCs, reST),
PDF outlines, and PDF text layers too garbled to index."""

from __future__ import annotations

import random

import pytest
from fpdf import FPDF

from kbx.errors import ExtractError
from kbx.extract import extract, source_text
from kbx.extract.document import format_of
from kbx.extract.formats.pdf import READABLE_MIN, readable_share
from kbx.extract.textmap import locate
from kbx.indexing.ingest import index

BODY = "   The client sends a message and the server answers it in kind,\n   as described below."

RFC = f"""\
Internet Engineering Task Force (IETF)                       E. Rescorla
Request for Comments: 8446                                       Mozilla
Category: Standards Track                                    August 2018


        The Transport Layer Security (TLS) Protocol Version 1.3

Abstract

{BODY}

Table of Contents

   1.  Introduction  . . . . . . . . . . . . . . . . . . . . . . . .   5
   4.  Protocol  . . . . . . . . . . . . . . . . . . . . . . . . . .   9

1.  Introduction ......................................... 5

4.  Protocol ............................................. 9

1.  Introduction

{BODY}

   Steps, in a numbered list inside a paragraph:
1.  Connect
   and then the rest of the sentence.

4.  Protocol

{BODY}

Rescorla                     Standards Track                   [Page 12]
\f
RFC 8446                           TLS                       August 2018


4.2.  Messages

{BODY}

4.2.1.  Client Hello

{BODY}

4.3.  Alerts: a long title of a section, one that wraps onto a
      second line

{BODY}

Appendix A.  State Machine

{BODY}

A.1.  Client

{BODY}
"""


def _heading_paths(doc) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for u in doc.units:
        if not out or out[-1] != u.heading_path:
            out.append(u.heading_path)
    return out


NAMES = ("red", "blue", "green", "plum", "gold", "grey")


def test_a_paginated_text_file_loses_its_running_heads_and_footers_not_its_lines():
    pages = [
        f"Widget Manual{' ' * 20}Chapter {i // 3 + 1}\n\n"
        f"   The {NAMES[i]} widget spins when told,\n   and stops when the belt\n"
        f"   runs out of {NAMES[i]} oil.\n\n"
        f"Acme Corp{' ' * 30}page {i + 1}\n"
        for i in range(6)
    ]
    data = "\f\n".join(pages).encode()
    doc = extract("manual.txt", data)
    text = " ".join(u.text for u in doc.units)
    assert "Widget Manual" in text  # the first page keeps its head's words: its title
    assert text.count("Widget Manual") == 1 and "Acme Corp" not in text
    assert all(f"runs out of {n} oil" in text for n in NAMES)
    lines = source_text("manual.txt", data)[0].split("\n")
    u = next(u for u in doc.units if "runs out of plum oil" in u.text)
    p = locate(u.segments, u.text, u.text.index("plum oil"), doc.encoding)
    assert lines[p.line - 1] == "   runs out of plum oil."


def test_rfc_sections_nest_by_numbering_and_skip_toc_lists_and_page_furniture():
    data = RFC.encode()
    doc = extract("rfc8446.txt", data)
    assert _heading_paths(doc) == [
        (),
        ("Abstract",),
        ("Table of Contents",),
        ("1. Introduction",),
        ("4. Protocol",),
        ("4. Protocol", "4.2. Messages"),
        ("4. Protocol", "4.2. Messages", "4.2.1. Client Hello"),
        (
            "4. Protocol",
            "4.3. Alerts: a long title of a section, one that wraps onto a second line",
        ),
        ("Appendix A. State Machine",),
        ("Appendix A. State Machine", "A.1. Client"),
    ]
    # the page footer and header are no text of the section they interrupt
    assert not [u for u in doc.units if "[Page 12]" in u.text or "RFC 8446 " in u.text]
    # a heading block points at its own line
    lines = source_text("rfc8446.txt", data)[0].split("\n")
    u = next(u for u in doc.units if u.heading_path[-1:] == ("4.2.1. Client Hello",))
    p = locate(u.segments, u.text, u.text.index("4.2.1."), doc.encoding)
    assert lines[p.line - 1].startswith("4.2.1.  Client Hello")


@pytest.mark.parametrize(
    "text",
    [
        # a numbered list of short lines: no item owns a paragraph
        "Setup\n\nDo these:\n\n1. Install Python\n\n2. Run the tool\n\n3. Read the output\n",
        # numbered lines that read as sentences, and a TOC without page numbers
        "Notes\n\n1. This is a sentence.\n\nMore text follows here, long enough for a body.\n",
        "CONTENTS\n\nINTRODUCTION\n\n  I. A Summary\n\n     Messages\n\nSome prose below it.\n",
        # years, versions and quantities are not section numbers
        "2016 Annual Report\n\nText of the report, long enough to be a body paragraph.\n",
        "Keep 3.5 GB free.\n\nText of the note, long enough to be a body paragraph.\n",
    ],
)
def test_lines_that_only_look_like_headings_are_not(text):
    doc = extract("note.txt", text.encode())
    assert all(u.heading_path == () for u in doc.units), _heading_paths(doc)


def test_underlined_caps_and_known_titles_nest_by_style():  # blank lines may hold spaces
    text = (
        "Guide\n=====\n\nIntro text.\n\nInstall\n-------\nRun pip, then check.\n\n"
        "Usage\n-----\n\nCall it.\n\n \t\nREFERENCE MANUAL\n\nThe manual, in prose.\n\n"
        "References\n\n[1] A book, 2020.\n"
    )
    doc = extract("guide.rst", text.encode())
    assert _heading_paths(doc) == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Usage"),
        ("REFERENCE MANUAL",),
        ("References",),
    ]
    assert any(u.text.startswith("Install\n\nRun pip") for u in doc.units)  # no underline


def test_a_changelogs_entries_are_sections_of_their_own():
    text = (
        "pkg (1.1-1) unstable; urgency=medium\n\n  * Fix the build.\n\n"
        " -- Ann Lee <ann@example.org>  Wed, 30 Nov 2022 18:22:03 +0100\n\n"
        "pkg (1.0-1) unstable experimental; urgency=low\n\n  * First upload.\n\n"
        " -- Bob Stone <bob@example.org>  Tue, 01 Feb 2022 10:00:00 +0100\n\n"
        "2021-03-04  Cy Young  <cy@example.org>\n\n\t* parse.c: Fix a leak.\n"
    )
    doc = extract("changelog.txt", text.encode())
    assert _heading_paths(doc) == [
        ("pkg (1.1-1) unstable; urgency=medium",),
        ("pkg (1.0-1) unstable experimental; urgency=low",),
        ("2021-03-04 Cy Young <cy@example.org>",),
    ]
    assert [u.text.count("--") for u in doc.units[:2]] == [1, 1]  # one entry a passage


def _outlined_pdf() -> bytes:
    pdf = FPDF()

    def write(text: str) -> None:
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")

    pdf.set_title("Manual")
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    write("Preface words before any section.")
    pdf.start_section("Introduction", 0)
    write("Introduction\nWords of the introduction.")
    pdf.ln(10)
    pdf.start_section("Scope", 1)
    write("Scope\nWhat the manual covers.")
    pdf.add_page()
    write("More about the scope, on page two.")
    pdf.ln(10)
    pdf.start_section("Unprinted title", 0)  # found by its position alone
    write("Setup\nHow to install it.")
    return bytes(pdf.output())


def test_pdf_outline_gives_heading_paths_by_page_and_position():
    doc = extract("manual.pdf", _outlined_pdf())

    def where(start: str) -> tuple[int | None, tuple[str, ...]]:
        unit = next(u for u in doc.units if u.text.startswith(start))
        return unit.page, unit.heading_path

    assert where("Preface words") == (1, ("Manual",))
    assert where("Introduction Words") == (1, ("Manual", "Introduction"))
    assert where("Scope What") == (1, ("Manual", "Introduction", "Scope"))
    assert where("More about the scope") == (2, ("Manual", "Introduction", "Scope"))
    assert where("Setup How") == (2, ("Manual", "Unprinted title"))


def _pdf(text: str) -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 5, text)
    return bytes(pdf.output())


def _consonants(seed: int) -> str:
    """Words without vowels, as a font with a shifted encoding prints them."""
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(5)) for _ in range(99))


def test_garbled_text_layer_is_a_recorded_failure():
    rng = random.Random(7)
    symbols = "".join(map(chr, range(0xA1, 0x100)))
    soup = " ".join("".join(rng.choice(symbols) for _ in range(6)) for _ in range(200))
    for text in (soup, _consonants(7)):
        with pytest.raises(ExtractError, match="garbled text layer"):
            extract("g.pdf", _pdf(text))
    prose = "The server answers every request within a second, as the table shows. " * 20
    assert extract("ok.pdf", _pdf(prose)).units
    assert extract("short.pdf", _pdf("Xkcd zqv brr")).units  # too few words to judge


def test_a_garbled_pdf_is_listed_with_its_reason_and_the_run_goes_on(tmp_path):
    (tmp_path / "garbled.pdf").write_bytes(_pdf(_consonants(3)))
    (tmp_path / "fine.pdf").write_bytes(_pdf("Readable words make a fine document. " * 10))
    report = index(tmp_path, workers=0)
    assert (report.new, report.failed) == (1, 1)
    (failure,) = report.failures
    assert failure["path"] == "garbled.pdf" and "garbled text layer" in failure["error"]


@pytest.mark.parametrize(
    ("text", "readable"),
    [
        ("The quick brown fox jumps over the lazy dog, twice.", True),
        ("Über naïve façades: Ελληνικά κείμενα, русский текст, l'été, co-op", True),
        ("日本語の文章です。TLS鍵交換は、2016年に。 中文文本，没有空格。 한국어 문장입니다", True),
        ("हिन्दी पाठ में मात्राएँ होती हैं। العربية نص مكتوب. עברית כתובה. ภาษาไทยไม่เว้นวรรค", True),
        ("Plot ● ● ● 0.00 0.02 0.04 [12] (3) 4.4 Mbp of text in a figure", True),
        ("\ue061\ue073 \ue020\ue061\ue070 \ue072\ue06f\ue070 \ue069\ue061\ue074", False),
        ("\x01\x02 \x01\x03\x03\x04 \x05\x03\x04 \x06\x01\x07\x08", False),
        ("Xkqzt brfl mnpqr tsk vwxz", False),
        ("ÃÂ¤Ã© Ã¨Â§ Ã¼Ã¶Â± ÂµÃ", False),
    ],
)
def test_readable_share_tells_words_from_mojibake(text, readable):
    share, n = readable_share(text)
    assert n > 0
    assert (share >= READABLE_MIN) is readable, share


INFO = (
    "This is demo.info, produced by makeinfo version 6.8 from demo.texi.\n\n"
    "INFO-DIR-SECTION Text\nSTART-INFO-DIR-ENTRY\n* demo: (demo).   A demo tool.\n"
    "END-INFO-DIR-ENTRY\n\n"
    "\x1f\nFile: demo.info,  Node: Top,  Next: Usage,  Up: (dir)\n\nDemo\n****\n\n"
    "This manual documents demo.\n\n* Menu:\n\n* Usage::    Running demo.\n* Index::\n\n"
    "\x1f\nFile: demo.info,  Node: Usage,  Next: Index,  Prev: Top,  Up: Top\n\n"
    "1 Usage\n*******\n\nDemo folds the lines of its input.\n\n"
    "1.1 Options\n===========\n\nThe width option sets the column to fold at.\n\n"
    "1.1.1 Quiet runs\n................\n\nWith quiet, demo prints nothing on success.\n\n"
    "\x1f\nFile: demo.info,  Node: Index,  Prev: Usage,  Up: Top\n\nIndex\n*****\n\n"
    "\x00\x08[index\x00\x08]\n* Menu:\n\n"
    "* quiet:                                 Quiet runs.           (line 6)\n"
    "* width, the column to fold at:          Options.\n"
    "                                                               (line 12)\n\n"
    "\x1f\nTag Table:\nNode: Top\x7f212\nNode: Usage\x7f399\nNode: Index\x7f771\n\x1f\n"
    "End Tag Table\n\n\x1f\nLocal Variables:\ncoding: utf-8\nEnd:\n"
)


def test_a_gnu_info_manual_keeps_its_text_and_sections_not_its_navigation():
    """An Info manual is plain text with navigation between its nodes: a node's header
    line, the index's entries and the table of node offsets are not what a reader
    searches, and each would match every query naming its node's words."""
    doc = extract("demo.info", INFO.encode())
    assert doc.format == "text" == format_of("find.info-2.gz") == format_of("sed.info.gz")
    text = " ".join(u.text for u in doc.units)
    for gone in ("File: demo.info", "Node: ", "(line ", "Tag Table", "index\x00", "coding:"):
        assert gone not in text, gone
    assert "* Usage:: Running demo." in text  # a menu is the manual's own table of contents
    assert ("1 Usage", "1.1 Options", "1.1.1 Quiet runs") in _heading_paths(doc)
    lines = source_text("demo.info", INFO.encode())[0].split("\n")
    u = next(u for u in doc.units if "prints nothing" in u.text)
    p = locate(u.segments, u.text, u.text.index("prints nothing"), doc.encoding)
    assert lines[p.line - 1] == "With quiet, demo prints nothing on success."


def test_a_line_of_dots_underlines_only_a_title_of_its_length():
    doc = extract("notes.txt", b"Loading\n..........\n\nThe loader reads each file in turn.\n")
    assert all(u.heading_path == () for u in doc.units)
