"""PDF: pypdfium2's text layer, page by page, with the outline as headings.

A PDF has no source lines, so its "original" is the extracted text: pages joined
by a form feed line, lines as pdfium lays them out. ``kbx read`` shows the same
text, so cited lines and read lines agree. A page with no text is reported.

The outline (bookmarks) is the only structure a PDF declares: each entry names a
page and often a position on it, so text from that point on gets the entry's path.
A text layer written with a font that has no Unicode map decodes to mojibake; it is
refused like a missing text layer, since indexing it would only add noise.
"""

from __future__ import annotations

import ctypes
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from kbx.errors import ExtractError
from kbx.extract.formats.pages import furniture, paragraphs
from kbx.extract.model import PAGES_WITHOUT_TEXT, PROSE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

PAGE_BREAK = "\f"
_PARAGRAPH_GAP = re.compile(r"\n[ \t]*\n")
# Below this share of word-like tokens a text layer is garbled. The eval set's real PDFs
# score 0.67 (OCR of a 1969 typewriter scan) to 0.99; mojibake samples 0.00 to 0.20.
READABLE_MIN = 0.4
READABLE_MIN_TOKENS = 30  # fewer tokens say too little to judge
_VOWELS = {"LATIN": "aeiouy", "GREEK": "αεηιουω", "CYRILLIC": "аеёиоуыэюяіїєә"}
_JOINERS = "-'’./"  # inside a word: co-op, l'été, e.g., and/or
_ASCII_VOWEL = frozenset("aeiouyAEIOUY")
_EDGE = "\"'()[]{}<>.,;:!?«»“”‘’„*/\\|-–—"
_COLUMN = 30.0  # points left of an outline target that a heading's first letter may sit


@dataclass
class Mark:
    """Where an outline entry's section starts: page index and offset in its text."""

    page: int
    offset: int
    path: tuple[str, ...]


def _read(data: bytes, outline: bool = True) -> tuple[list[str], Metadata, list[Mark]]:
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        raise ExtractError(f"corrupt or encrypted PDF: {e}") from e
    try:
        try:
            entries = _entries(pdf) if outline else {}
        except Exception:  # the outline is optional: a broken one must cost no text
            entries = {}
        out: list[str] = []
        marks: list[Mark] = []
        for i in range(len(pdf)):
            page = pdf[i]
            tp = page.get_textpage()
            text = tp.get_text_bounded() or ""
            text = text.replace("\r\n", "\n").replace("\r", "\n").replace(PAGE_BREAK, " ")
            after, offset = 0, 0  # an entry found nowhere follows the one before it
            for title, x, y, path in entries.get(i, []):
                at = _anchor(tp, title, x, y, after)
                if at is not None:
                    after, offset = at, _offset(tp, text, at)
                marks.append(Mark(i, offset, path))
            tp.close()
            page.close()
            out.append(text)
        marks.sort(key=lambda m: (m.page, m.offset))
        return out, _metadata(pdf), marks
    finally:
        pdf.close()


def page_texts(data: bytes) -> tuple[list[str], Metadata]:
    """The text of every page (line breaks normalized) and the document info."""
    pages, meta, _ = _read(data, outline=False)
    return pages, meta


def _target(bookmark: pdfium.PdfBookmark) -> tuple[int, float | None, float | None] | None:
    """Page index, x and y (points from the bottom) an outline entry points to."""
    dest = bookmark.get_dest()
    if dest is None:  # the entry may point through a GoTo action instead
        action = pdfium_c.FPDFBookmark_GetAction(bookmark)
        if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_GOTO:
            return None
        raw = pdfium_c.FPDFAction_GetDest(bookmark.pdf, action)
        dest = pdfium.PdfDest(raw, bookmark.pdf) if raw else None
    index = dest.get_index() if dest is not None else None
    if index is None:
        return None
    mode, pos = dest.get_view()
    if mode == pdfium_c.PDFDEST_VIEW_XYZ:
        has = [ctypes.c_int() for _ in range(3)]
        xyz = [ctypes.c_float() for _ in range(3)]
        pdfium_c.FPDFDest_GetLocationInPage(dest, *map(ctypes.byref, has + xyz))
        x = xyz[0].value if has[0].value and xyz[0].value > 0 else None
        return index, x, xyz[1].value if has[1].value else None
    if mode in (pdfium_c.PDFDEST_VIEW_FITH, pdfium_c.PDFDEST_VIEW_FITBH) and pos:
        return index, None, pos[0]
    if mode == pdfium_c.PDFDEST_VIEW_FITR and len(pos) == 4:
        return index, pos[0], pos[3]
    return index, None, None


def _anchor(
    tp: pdfium.PdfTextPage, title: str, x: float | None, y: float | None, after: int
) -> int | None:
    """The character index where an entry's heading starts on its page, or None.

    The title as printed nearest below the target wins (running headers and tables of
    contents repeat titles); else the first character below the target; else nothing.
    A target sits at or just above its heading's top, at its left edge or left of it.
    """

    def fits(i: int) -> bool:
        left, _, _, top = tp.get_charbox(i)
        return (y is None or top <= y + 2) and (x is None or left >= x - _COLUMN)

    best = None
    search = tp.search(title, index=after) if title else None
    while search is not None and (hit := search.get_next()) is not None:
        if hit[0] >= after and fits(hit[0]):
            if y is None:
                return hit[0]
            top = tp.get_charbox(hit[0])[3]
            if best is None or top > tp.get_charbox(best)[3]:
                best = hit[0]
    if best is not None or y is None:
        return best
    for i in range(after, tp.count_chars()):
        if tp.get_text_range(i, 1).strip() and fits(i):
            return i
    return None


def _offset(tp: pdfium.PdfTextPage, page: str, index: int) -> int:
    """Offset in the page's text of character ``index`` (the two can drift apart: line
    breaks are normalized and some characters count twice), found by its next letters."""
    snippet = [c for c in tp.get_text_range(index, 24) if c.isalnum()][:12]
    pattern = r"\W*".join(map(re.escape, snippet))
    hits = [m.start() for m in re.finditer(pattern, page)] if snippet else []
    if not hits:
        return min(index, len(page))
    at = min(hits, key=lambda h: abs(h - index))
    line = page.rfind("\n", 0, at) + 1
    return line if len(page[line:at].strip()) <= 12 else at  # a section number before it


Entry = tuple[str, float | None, float | None, tuple[str, ...]]  # title, x, y, path


def _entries(pdf: pdfium.PdfDocument) -> dict[int, list[Entry]]:
    """The outline's entries by page index, in outline order, each with its path."""
    out: dict[int, list[Entry]] = {}
    stack: list[str] = []
    for bookmark in pdf.get_toc():
        title = " ".join(bookmark.get_title().split())
        stack = [*stack[: bookmark.level], title]
        target = _target(bookmark)
        if title and target is not None and 0 <= target[0] < len(pdf):
            out.setdefault(target[0], []).append((title, target[1], target[2], tuple(stack)))
    return out


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "").split(" ")[0]
    return "CJK" if name in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC") else name


def _wordlike(token: str) -> bool:
    """Letters (with their combining marks) of one script, with a vowel where the script
    writes vowels; punctuation inside is allowed. CJK writes no spaces, so a token there
    is a whole clause, Latin words and digits included."""
    scripts = {_script(c) for c in token if c.isalpha()}
    if "CJK" in scripts:
        return {unicodedata.category(c)[0] for c in token} <= {"L", "M", "N", "P"}
    chars = [c for c in token if c not in _JOINERS]
    kinds = {unicodedata.category(c)[0] for c in chars}
    if not chars or not kinds <= {"L", "M"} or len(scripts) != 1:
        return False
    vowels = _VOWELS.get(scripts.pop())
    bases = {unicodedata.normalize("NFD", c)[0] for c in "".join(chars).lower()}
    return vowels is None or not bases.isdisjoint(vowels)


def _neutral(token: str) -> bool:
    """Punctuation, symbols and spaces only (unprintable and private-use ones excepted)."""
    return all(unicodedata.category(c)[0] in "NPSZ" for c in token)


def readable_share(text: str) -> tuple[float, int]:
    """Share of word-like tokens among tokens that hold a letter or an unprintable
    character. Numbers and identifiers (any token with a digit: ``seL4``, ``v18.2``),
    punctuation and symbols (plot markers) are neutral: they say nothing of the font."""
    n = good = 0
    for raw in text.split():
        token = raw.strip(_EDGE)
        if token.isascii() and token.isalpha():  # the common case, quickly
            n += 1
            good += not _ASCII_VOWEL.isdisjoint(token)
        elif not any(c.isdigit() for c in token) and not _neutral(token):
            n += 1
            good += _wordlike(token)
    return (good / n if n else 1.0), n


def virtual_text(pages: list[str]) -> str:
    """The line-addressable text of a PDF: its pages joined by form-feed lines, pdfium's
    mark of a hyphen at a line's end (``\\x02``, the line break already gone) shown as the
    hyphen it is: one character for one, so every offset stays where it was."""
    return ("\n" + PAGE_BREAK + "\n").join(pages).replace(SOFT_HYPHEN, "-")


SOFT_HYPHEN = "\x02"  # pdfium's hyphen at a line's end: ``near\x02est``
_AROUND = re.compile(r"(\w+)\x02(\w+)")
_WORDS = re.compile(r"\w+(?:-\w+)*")


def hyphen_joins(text: str) -> set[int]:
    """The offsets of the line-end hyphens of ``text`` that split one word (``near-est``),
    which the clean text joins, against those of a compound (``better-informed``), which it
    keeps. The document decides: the word written whole elsewhere joins, written with its
    hyphen elsewhere keeps it; otherwise a hyphen between two words the document uses on
    their own, or two capitalized names, is a compound's, and any other is a break inside
    a word."""
    if SOFT_HYPHEN not in text:
        return set()
    seen = Counter(w.lower() for w in _WORDS.findall(_AROUND.sub(" ", text)))
    parts = {p for w in seen for p in w.split("-")}
    joins = set()
    for m in _AROUND.finditer(text):
        a, b = m.group(1).lower(), m.group(2).lower()
        names = m.group(1)[0].isupper() and m.group(2)[0].isupper()  # Allyn-Feuer
        if seen[a + b] or not (seen[f"{a}-{b}"] or (a in parts and b in parts) or names):
            joins.add(m.start(2) - 1)
    return joins


def _pdf_date(raw: str | None) -> str | None:
    m = re.match(r"D?:?(\d{4})(\d{2})?(\d{2})?", raw or "")
    if not m:
        return None
    y, mo, d = m.group(1), m.group(2) or "01", m.group(3) or "01"
    try:
        return datetime(int(y), int(mo), int(d)).date().isoformat()
    except ValueError:
        return y


def _metadata(pdf: pdfium.PdfDocument) -> Metadata:
    info = {k: v for k, v in pdf.get_metadata_dict(skip_empty=True).items()}
    authors = [a.strip() for a in re.split(r";|,| and ", info.get("Author", "")) if a.strip()]
    return Metadata(
        title=info.get("Title") or None,
        date=_pdf_date(info.get("CreationDate")),
        authors=authors,
        fields=info,
    )


def _flowing(b: TextBuilder, piece: str, at: int, joins: set[int], shift: int) -> None:
    """``b.flowing`` of a paragraph starting at ``at`` of the virtual text, its words
    hyphenated at a line's end joined where ``joins`` (offsets into the pages joined by one
    character: ``shift`` from the virtual text's) says so, their other hyphens kept."""
    start = 0
    for i, c in enumerate(piece):
        if c == SOFT_HYPHEN and at + i - shift in joins:
            b.flowing(piece[start:i].replace(SOFT_HYPHEN, "-"), at + start)
            start = i + 1
    b.flowing(piece[start:].replace(SOFT_HYPHEN, "-"), at + start)


def parse(data: bytes) -> tuple[list[Block], Metadata, list[str], str]:
    """Blocks, metadata, warnings and the virtual text of one PDF."""
    pages, meta, marks = _read(data)
    text = virtual_text(pages)
    share, n = readable_share(text)
    if n >= READABLE_MIN_TOKENS and share < READABLE_MIN:
        raise ExtractError(
            f"garbled text layer (a font without a Unicode map?): {share:.0%} of words readable"
        )
    table = LineTable(text)
    blocks: list[Block] = []
    warnings: list[str] = []
    empty: list[int] = []  # pages with no text layer
    joins = hyphen_joins(PAGE_BREAK.join(pages))  # one separator: the pages' offsets + 1 each
    cuts = furniture(pages)
    offset = 0
    path: tuple[str, ...] = ()
    for number, page in enumerate(pages, start=1):
        if not page.strip():
            empty.append(number)
        spans = [(0, path)] + [(m.offset, m.path) for m in marks if m.page == number - 1]
        for k, (start, section) in enumerate(spans):
            end = spans[k + 1][0] if k + 1 < len(spans) else len(page)
            for at, piece in paragraphs(page, start, end, cuts[number - 1], _PARAGRAPH_GAP):
                b = TextBuilder(table)
                _flowing(b, piece, offset + at, joins, 2 * (number - 1))
                if b.text().strip():
                    blocks.append(Block.built(b, PROSE, section, page=number))
        path = spans[-1][1]
        offset += len(page) + 3
    if pages and not blocks:
        raise ExtractError(f"no extractable text on any of {len(pages)} pages (scanned?)")
    if empty:
        shown = ", ".join(map(str, empty[:10])) + (
            f" and {len(empty) - 10} more" if len(empty) > 10 else ""
        )
        warnings.append(f"{PAGES_WITHOUT_TEXT}: {len(empty)} of {len(pages)} ({shown})")
    return blocks, meta, warnings, text
