"""Plain text: paragraphs separated by blank lines (form feeds count as blank).

Plain text declares no structure, but RFCs, READMEs and manuals write their headings
in a few fixed shapes: a numbered line (``4.2.1.  Foo Bar``, ``Appendix A.  Baz``), a
line underlined with ``===``/``---`` (reStructuredText, setext), an ALL-CAPS line, or
a well-known title (``Abstract``, ``References``); a changelog's entry line (Debian's,
GNU's) opens the entry, so each entry is a section of its own. Each shape must stand alone between
blank lines, be short and not end like a sentence, and (except underlined ones, which
are explicit) be followed by body text or a deeper heading: a numbered list, a table of
contents or a page header then yields no heading, because none of them is followed by
a paragraph of its own. Headings nest by numbering depth, underline style or rank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbx.extract.formats.pages import furniture, paragraphs
from kbx.extract.model import PROSE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

PAGE_BREAK = "\f"
_PARAGRAPH = re.compile(r"\n[ \t\f\v]*\n")
_TITLE = r"(?P<title>(?:[A-Za-z\"'(]|\d[\w-]*[A-Za-z])[^\n]{0,120})"  # 0-RTT Data
_NUMBERED = re.compile(r"(?P<num>\d{1,2}(?:\.\d{1,2}){0,5})\.?[ \t]+" + _TITLE)
_APPENDIX = re.compile(r"(?i:appendix)[ \t]+(?P<num>[A-Z])(?:[.:]?[ \t]+" + _TITLE + r")?")
_LETTERED = re.compile(r"(?P<num>[A-Z](?:\.\d{1,2}){1,5})\.?[ \t]+" + _TITLE)
_CAPS = re.compile(r"[A-Z][A-Z '&/,()-]{2,59}")
_UNDERLINE = re.compile(r"([=\-~^*#+.])\1{2,}[ \t]*")  # "." under an Info subsubsection
_KNOWN = {
    "abstract",
    "status of this memo",
    "copyright notice",
    "table of contents",
    "contents",
    "introduction",
    "acknowledgments",
    "acknowledgements",
    "contributors",
    "references",
    "bibliography",
    "glossary",
    "index",
    "preface",
    "author's address",
    "authors' addresses",
    "full copyright statement",
    "intellectual property",
}
# A table of contents line (dot leaders, or a page number after a gap) and page furniture:
# an RFC footer ``Rescorla   Standards Track   [Page 12]`` or header ``RFC 8446   TLS   ...``.
_TOC_LINE = re.compile(r".*(?:\.{3,}|(?:\. ){3,}|\s{2,})\s*(?:\d+|[ivxlc]+)\s*$")
_FURNITURE = re.compile(r".*\[Page [0-9ivxlc]+\]\s*$|(?:RFC[: ]+\d+|Internet-Draft)\s{2,}\S")
# A GNU Info manual's navigation, not its text: a node's header (``File: grep.info,  Node:
# Usage,  Next: ...``, after the \x1f that opens a node), the tables of node offsets at its
# end, an index node's mark and entries (``* --count:   Output.   (line 12)``, the line
# number maybe wrapped onto a line of its own); and, in a node of its own, Emacs's local
# variables.
_INFO = re.compile(
    r"File: [^,\n]+,\s+Node: .*|\* Menu:|Tag Table:|End Tag Table|Indirect:|\(Indirect\)"
    r"|(?:Node|Ref): [^\x7f\n]*\x7f\d+|\S+\.info(?:-\d+)?: \d+|\x00\x08\[index\x00\x08\]"
)
_INDEX_ENTRY = re.compile(r"\* .+:\s+.+\.\s*(?:\(line\s+\d+\))?|\(line\s+\d+\)")
_LOCAL_VARIABLES = re.compile(r"Local Variables:|coding: [\w-]+|End:")
# A changelog entry's first line opens its section: Debian's ``pkg (1.2-1) unstable;
# urgency=medium`` and GNU's ``2021-03-04  Ann Lee  <ann@example.org>``; so does a release
# line of a NEWS file, GNU's ``* Noteworthy changes in release 3.8 (2021-08-01) [stable]``
# or ``* Version 3.7.9 (released 2023-02-09)``, dated in its parentheses.
_ENTRY = re.compile(
    r"[a-z0-9][a-z0-9.+-]* \([^()\s]+\)(?: [\w.+/-]+)+; *urgency=\w+.*"
    r"|\d{4}-\d\d-\d\d[ \t]{1,2}\S[^\n<>]*<[^\s<>@]+@[^\s<>]+>"
    r"|(?:\* )?(?:Noteworthy changes in release|[Vv]ersion|[Rr]elease) v?\d[\w.+~-]*"
    r" \((?:released )?[^()\n]*\d{4}[^()\n]*\)(?: \[[\w -]+\])?"
)
_WORDS = re.compile(r"[\w '&()/,.-]*[\w)]")  # a title-like line: no sentence end
_WIDTH = 72  # an RFC's line width, to tell a centered heading (RFC 791) from an indented one

Heading = tuple[int, str]  # (nesting level, title as the heading path shows it)


def _line_heading(lines: list[str]) -> Heading | None:
    """The heading a lone line (or a numbered one wrapped onto an aligned second line)
    would be by its shape alone, or None."""
    line = lines[0]
    if len(lines) == 1 and _ENTRY.fullmatch(line.rstrip()):
        return 1, " ".join(line.split())
    body = line.strip()
    indent = len(line) - len(line.lstrip())
    centered = indent >= 8 and abs(_WIDTH - indent - len(body) - indent) <= 8
    if max(map(len, lines)) > 80 or (indent and not centered) or _TOC_LINE.fullmatch(body):
        return None
    wrapped = len(lines) == 2
    if wrapped:
        body += " " + lines[1].strip()
    title = " ".join(body.split())
    for shape in (_NUMBERED, _LETTERED, _APPENDIX):
        m = shape.fullmatch(body)
        if m:
            words = (m.group("title") or "X").split()
            depth = m.group("num").count(".") + 1
            if wrapped and len(lines[1]) - len(lines[1].lstrip()) != line.find(words[0]):
                return None
            if re.search(r"\s{3,}|[.,;:]$", (m.group("title") or "").rstrip()) or len(words) > 16:
                return None
            return None if depth == 1 and words[0][0].islower() else (depth, title)
    if wrapped:
        return None
    if title.lower() in _KNOWN and not indent:
        return 1, title
    if _CAPS.fullmatch(body) and not re.search(r"\s{3,}", body) and len(body.split()) <= 8:
        return 1, title
    return None


def _manual_heading(lines: list[str]) -> Heading | None:
    """A manual page's section heading as ``man`` renders it: an ALL-CAPS line at the
    margin (``DESCRIPTION``) with its body indented on the next lines, no blank line
    between. The indent is the page's own mark that the line heads what follows."""
    if len(lines) < 2 or lines[0][:1].isspace() or not lines[1][:1].isspace():
        return None
    head = _line_heading(lines[:1])
    return head if head and _CAPS.fullmatch(lines[0].strip()) else None


def _underlined(lines: list[str], ranks: dict[str, int]) -> Heading | None:
    """A title underlined (and maybe overlined) with one character; its level follows
    the order in which styles first appear, as in reST."""
    over = len(lines) >= 3 and bool(_UNDERLINE.fullmatch(lines[0]))
    title, under = (lines[1], lines[2]) if over else (lines[0], lines[1] if len(lines) > 1 else "")
    if not _UNDERLINE.fullmatch(under) or title[:1].isspace() or not title.strip():
        return None
    title = " ".join(title.split())
    if len(title) > 80 or len(under.strip()) < min(len(title), 8) or title.endswith((".", ",")):
        return None
    if under[0] == "." and len(under.strip()) != len(title):  # dots that only lead or trail
        return None
    style = ("^" if over else "") + under[0]
    return ranks.setdefault(style, len(ranks) + 1), title


def _is_furniture(piece: str) -> bool:
    lines = [ln.strip() for ln in piece.splitlines() if ln.strip()]
    if all(_FURNITURE.match(ln) for ln in lines):
        return True
    node, index = "\x1f" in piece, "(line " in piece  # a menu is text, an index is not
    return all(
        _INFO.fullmatch(ln)
        or index and _INDEX_ENTRY.fullmatch(ln)
        or node and _LOCAL_VARIABLES.fullmatch(ln)
        for ln in lines
    )


def _is_body(piece: str) -> bool:
    """Text a heading can own: more than one line, a long one, or one that is not just
    words (a lone short title-like line is more likely a table-of-contents entry)."""
    lines = [ln.strip() for ln in piece.splitlines() if ln.strip()]
    if len(lines) != 1:
        return len(lines) > 1
    return len(lines[0]) >= 40 or not _WORDS.fullmatch(lines[0])


@dataclass
class _Found:
    """A heading a paragraph opens: which of its lines hold the title, and how many
    lines it takes (an underline is not text; what follows it in the paragraph is)."""

    heading: Heading
    first: int
    count: int
    taken: int


def _content(piece: str) -> tuple[int, list[str]]:
    """A paragraph's lines without blank ones around it, and how many blank lines lead."""
    lines = piece.split("\n")
    lead = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines))
    while lines and not lines[-1].strip():
        lines.pop()
    return lead, lines[lead:]


def _headings(pieces: list[str]) -> list[_Found | None]:
    """For each paragraph, the heading it opens, or None.

    Walked backwards so that a heading is kept only when what follows it (page
    furniture skipped) is body text or a kept heading deeper than itself; an
    underlined heading is explicit and always kept.
    """
    ranks: dict[str, int] = {}
    found: list[_Found | None] = []
    strong: list[bool] = []
    for piece in pieces:
        lines = _content(piece)[1]
        under = _underlined(lines, ranks) if lines else None
        manual = _manual_heading(lines) if under is None else None  # NAME, then its body
        head = _line_heading(lines) if under is None and 0 < len(lines) <= 2 else None
        if under is not None:
            over = int(bool(_UNDERLINE.fullmatch(lines[0])))
            found.append(_Found(under, over, 1, 2 + over))
        elif head is None and manual is not None:
            found.append(_Found(manual, 0, 1, 1))
        else:
            found.append(_Found(head, 0, len(lines), len(lines)) if head else None)
        strong.append(under is not None or (head is None and manual is not None))  # explicit
    after: Heading | None = None  # the kept heading that the next content paragraph opens
    body_next = False
    for i in range(len(pieces) - 1, -1, -1):
        f = found[i]
        if f is None:
            if not _is_furniture(pieces[i]):
                after, body_next = None, _is_body(pieces[i])
        elif strong[i] or body_next or (after is not None and after[0] > f.heading[0]):
            after, body_next = f.heading, False
        else:
            found[i] = None
            after, body_next = None, False
    return found


def _page_cuts(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` of the page furniture lines of a text paginated by form feeds
    (``pages.furniture``), in order."""
    pages = text.split(PAGE_BREAK)
    if len(pages) < 3:
        return []
    out, at = [], 0
    for page, cuts in zip(pages, furniture(pages), strict=True):
        out += [(at + a, at + b) for a, b in cuts]
        at += len(page) + 1
    return out


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """``(offset, text)`` of each paragraph, page furniture left out: lines a paginated
    file repeats at its pages' edges, and paragraphs of RFC headers and footers alone."""
    pieces = paragraphs(text, 0, len(text), _page_cuts(text), _PARAGRAPH)
    return [(at, p) for at, p in pieces if p.strip() and not _is_furniture(p)]


def parse(text: str, original: str, encoding: str) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks of one plain-text file (it declares no title), with detected headings."""
    table = LineTable(text, encoding, original)
    pieces = _paragraphs(text)
    blocks: list[Block] = []
    stack: list[Heading] = []
    for (start, piece), found in zip(pieces, _headings([p for _, p in pieces]), strict=True):
        parts = [(start, piece)]
        if found is not None:
            level, title = found.heading
            stack = [h for h in stack if h[0] < level] + [(level, title)]
            lead, lines = _content(piece)
            starts = [
                start + sum(len(ln) + 1 for ln in piece.split("\n")[: lead + k])
                for k in range(len(lines) + 1)
            ]
            title_end = starts[found.first + found.count] - 1
            rest = starts[min(found.taken, len(lines))]
            parts = [
                (starts[found.first], text[starts[found.first] : title_end]),
                (rest, text[rest : start + len(piece)]),
            ]
        path = tuple(t for _, t in stack)
        for at, part in parts:
            b = TextBuilder(table)
            _flowing(b, part, at)
            if b.text().strip():
                blocks.append(Block.built(b, PROSE, path))
    return blocks, Metadata(), []


# A word broken at a line's end with U+2010 HYPHEN, as ``man`` hyphenates: ``speci‐`` then
# ``fied`` on the next line (a hyphen typed by the author is U+002D).
_BROKEN = re.compile(r"(?<=[^\W\d_])\u2010\n[ \t]*(?=[^\W\d_])")


def _flowing(b: TextBuilder, part: str, at: int) -> None:
    """``b.flowing`` of a paragraph, a word hyphenated at a line's end joined."""
    start = 0
    for m in _BROKEN.finditer(part):
        b.flowing(part[start : m.start()], at + start)
        start = m.end()
    b.flowing(part[start:], at + start)
