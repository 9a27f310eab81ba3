"""PDF: pypdfium2's text layer, page by page.

A PDF has no source lines, so its "original" is the extracted text: pages joined
by a form feed line, lines as pdfium lays them out. ``kbx read`` shows the same
text, so cited lines and read lines agree. A page with no text is reported.
"""

from __future__ import annotations

import re
from datetime import datetime

import pypdfium2 as pdfium

from kbx.errors import ExtractError
from kbx.extract.model import PROSE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

PAGE_BREAK = "\f"
_PARAGRAPH_GAP = re.compile(r"\n[ \t]*\n")


def page_texts(data: bytes) -> tuple[list[str], Metadata]:
    """The text of every page (line breaks normalized) and the document info."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        raise ExtractError(f"corrupt or encrypted PDF: {e}") from e
    try:
        out = []
        for i in range(len(pdf)):
            page = pdf[i]
            tp = page.get_textpage()
            text = tp.get_text_bounded() or ""
            tp.close()
            page.close()
            out.append(text.replace("\r\n", "\n").replace("\r", "\n").replace(PAGE_BREAK, " "))
        return out, _metadata(pdf)
    finally:
        pdf.close()


def virtual_text(pages: list[str]) -> str:
    """The line-addressable text of a PDF: its pages joined by form-feed lines."""
    return ("\n" + PAGE_BREAK + "\n").join(pages)


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


def parse(data: bytes) -> tuple[list[Block], Metadata, list[str], str]:
    """Blocks, metadata, warnings and the virtual text of one PDF."""
    pages, meta = page_texts(data)
    text = virtual_text(pages)
    table = LineTable(text)
    blocks: list[Block] = []
    warnings: list[str] = []
    offset = 0
    for number, page in enumerate(pages, start=1):
        if not page.strip():
            warnings.append(f"page {number}: no extractable text (image only?)")
        pos = 0
        for piece in _PARAGRAPH_GAP.split(page):
            start = page.find(piece, pos)
            pos = start + len(piece)
            b = TextBuilder(table)
            b.flowing(piece, offset + start)
            if b.text().strip():
                blocks.append(Block(b.text(), b.segments, PROSE, (), number))
        offset += len(page) + 3
    if pages and not blocks:
        raise ExtractError(f"no extractable text on any of {len(pages)} pages (scanned?)")
    return blocks, meta, warnings, text
