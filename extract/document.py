"""One file's bytes to a Document: choose the parser by extension, decode, parse, pack units."""

from __future__ import annotations

import hashlib
import mimetypes
import posixpath
import re

from kbx.errors import ExtractError, NotItsFormat
from kbx.extract.compressed import expanded, inner_name
from kbx.extract.decode import declared_html_encoding, decode, looks_binary
from kbx.extract.formats import html, latex, markdown, pdf, roff, text
from kbx.extract.model import Block, Document, Metadata
from kbx.extract.units import pack

FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".tex": "latex",
    ".ltx": "latex",
    ".txt": "text",
    ".text": "text",
    ".rst": "text",
    ".bib": "text",  # BibTeX: read as text; the references recognizer reads its records
    ".info": "text",  # a GNU Info manual: text between its nodes' navigation (text.py)
}
_INFO_PART = re.compile(r"\.info-\d+")  # a part of a split Info manual: find.info-2.gz

# What each format's extractor is, as the index records it (kbx_meta 'extraction'): the
# next `kbx index` of an index another version's extractor read reads that format's files
# again, as a changed ANALYSIS_VERSION analyzes the postings again (a file's units are only
# made anew when it is read). An index that records none was read by versions "1".
# roff 1: manual pages' sources (``ls.1.gz``), new in this version.
# latex 3: a setup macro quoted by an unknown macro (\Cmd\setmainlanguage) is its name.
# pdf 3: pages with no text layer said as one warning, listed beside the file.
# html 2: the newline right after <pre> is no text (a passage then opened on the tag's line).
# text 3: GNU Info manuals' navigation left out; dots underline an Info subsubsection.
# text 2: man pages' sections and U+2010 joins; page furniture of form-feed pages; NEWS
#   release lines open sections. latex 2: % inside \url, \author{A and B}. pdf 2: running
#   heads and footers left out.
EXTRACTION_VERSIONS = {
    "markdown": "1", "html": "2", "pdf": "3", "latex": "3", "text": "3", "roff": "1"
}  # fmt: skip


# Plain-text documents by name alone, as source trees and Debian's docs ship them: a
# folder's README or ChangeLog holds what a user searches for first.
NAMED_TEXT = frozenset(
    {"readme", "changelog", "changes", "news", "history", "authors", "contributors",
     "thanks", "install", "todo", "copying", "license", "licence", "notice", "maintainers",
     "bugs", "faq", "hacking", "contributing", "copyright"}
)  # fmt: skip


# What a named file's suffix may say and still be that text: Debian's ``README.Debian``,
# ``changelog.Debian``, ``NEWS.Debian``, ``README.source``, an upstream's ``README.old``;
# not a program (``install.sh``, ``history.py``). A gzipped file is read as the file inside
# (extract/compressed.py).
NAMED_VARIANTS = frozenset(
    {".debian", ".source", ".upstream", ".old", ".orig", ".gnu", ".linux", ".unix", ".win32",
     ".developers", ".maintainers", ".legal"}
)  # fmt: skip


# A binNMU's changelog names the architecture it was rebuilt for: changelog.Debian.amd64.
ARCHITECTURES = frozenset(
    {".amd64", ".arm64", ".armel", ".armhf", ".i386", ".mips64el", ".ppc64el", ".riscv64",
     ".s390x", ".loong64"}
)  # fmt: skip


# ``libc.so.6``, ``libfoo.so.1.2.3``: a library's name ends like a manual page's, and a
# page may be named like a library (``ld.so.8``, ``libnss_systemd.so.2.8``), but only pages
# are gzipped.
_SHARED_LIBRARY = re.compile(r"\.so(?:\.\d+)+$")


def format_of(path: str) -> str | None:
    """The format kbx reads a file as, from its extension; else, by its name, plain text
    for a README or ChangeLog with no extension or one naming its variant (``NAMED_TEXT``,
    ``NAMED_VARIANTS``), a gzipped file by the name inside it; None if kbx does not index
    it."""
    inner = inner_name(path)
    if inner is not None:
        return format_of(inner) or ("roff" if _SHARED_LIBRARY.search(inner) else None)
    ext = posixpath.splitext(path)[1].lower()
    if ext in FORMATS:
        return FORMATS[ext]
    if _INFO_PART.fullmatch(ext):
        return "text"
    if roff.SUFFIX.fullmatch(ext) and not _SHARED_LIBRARY.search(path):
        return "roff"  # a manual page by its section, or a rotated log (read as text)
    return "text" if named_text(posixpath.basename(path)) else None


def named_text(name: str) -> bool:
    """Plain text by its name alone: a README or ChangeLog (``NAMED_TEXT``) with no suffix
    or only suffixes naming its variant (the first from ``NAMED_VARIANTS``, then any a
    file type does not claim: ``changelog.Debian.devmapper``), or a name in capitals with
    no suffix, as projects name their documents (``DETAILS``, ``KEYSERVER``, ``DCO``)."""
    if _CAPITALS.fullmatch(name):
        return True
    base, *variants = name.lower().split(".")
    if base not in NAMED_TEXT:
        return False
    known = NAMED_VARIANTS | ARCHITECTURES
    return not variants or (
        f".{variants[0]}" in known
        and all(f".{v}" in known or _TYPES.guess_type(f"x.{v}")[0] is None for v in variants)
    )


_CAPITALS = re.compile(r"[A-Z][A-Z0-9_-]{1,23}")
_TYPES = mimetypes.MimeTypes()  # Python's own table, not the machine's: the same everywhere


def source_text(path: str, data: bytes) -> tuple[str, str]:
    """The text that line numbers refer to, and its encoding (for PDF, the extracted text;
    for a gzipped file, the text inside)."""
    path, data = expanded(path, data)
    fmt = format_of(path)
    if fmt == "pdf":
        return pdf.virtual_text(pdf.page_texts(data)[0]), "utf-8"
    return decode(data, declared_html_encoding(data) if fmt == "html" else None)


def _normalize(original: str) -> str:
    """Line endings to ``\\n`` without changing the number of lines."""
    return original.replace("\r\n", "\n").replace("\r", " ")


def _title_as_root(blocks: list[Block], meta: Metadata) -> None:
    """Put a declared title at the root of every heading path (a title ranks like a
    heading); without one, the document's title is its first heading or line."""
    title = " ".join((meta.title or "").split())
    if title:
        for b in blocks:
            if not b.heading_path or b.heading_path[0] != title:
                b.heading_path = (title, *b.heading_path)
    elif blocks:
        first = blocks[0].heading_path[:1] or (blocks[0].text.split("\n")[0].strip(),)
        meta.title = first[0][:200] or None


def extract(path: str, data: bytes, plain: bool = False, limit: int | None = None) -> Document:
    """Extract one file; raises ExtractError with a reason a user can act on. ``plain``:
    read a Markdown, HTML or LaTeX file as plain text (its markup kept as written), what
    the ingest falls back to when the format's parser fails on it. A gzipped file is read
    as the text inside, at most ``limit`` bytes of it; its hash and size stay its own."""
    fmt = format_of(path)
    if fmt is None:
        raise ExtractError(f"unsupported file type: {posixpath.splitext(path)[1] or 'none'}")
    if plain:
        if fmt == "pdf":
            raise ExtractError("a PDF cannot be read as plain text")
        fmt = "text"
    sha, size = hashlib.sha256(data).hexdigest(), len(data)
    name, data = expanded(path, data, limit)
    if not data.strip():
        raise ExtractError("empty file")
    if looks_binary(data) and (fmt == "roff" or named_text(posixpath.basename(name))):
        raise NotItsFormat(
            f"a binary file, named like {'a manual page' if fmt == 'roff' else 'a text'}"
        )
    if fmt == "pdf":
        blocks, meta, warnings, _ = pdf.parse(data)
        encoding = "utf-8"
    else:
        declared = declared_html_encoding(data) if fmt == "html" else None
        original, encoding = decode(data, declared)
        clean = _normalize(original)
        if fmt == "markdown":
            blocks, meta, warnings = markdown.parse(
                clean, original, encoding, name.endswith(".mdx")
            )
        elif fmt == "html":
            blocks, meta, warnings = html.parse(clean, original, encoding)
        elif fmt == "latex":
            blocks, meta, warnings = latex.parse(clean, original, encoding, path)
        elif fmt == "roff":
            blocks, meta, warnings = roff.parse(clean, original, encoding)
        else:
            blocks, meta, warnings = text.parse(clean, original, encoding)
    _title_as_root(blocks, meta)
    units = pack(blocks, encoding)
    if not units:
        warnings = [*warnings, "no text found"]
    return Document(path, sha, size, fmt, encoding, meta, units, warnings)
