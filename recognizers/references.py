"""Bibliography entries: BibTeX records, and reference-list lines written out in full
("Vaswani et al. 2017. Attention is all you need…"), found by shape.

A BibTeX record with a ``doi`` field is linked to that DOI at once (its key). Any other
entry is a candidate for ``kbx resolve``, which matches the whole string against
Crossref (``query.bibliographic``) and keeps a match only when its title and year agree
with the string (:func:`agrees`). The value of a line entry is the line without its list
marker; of a BibTeX record, "Authors. Year. Title. Venue."
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.identifiers import find_doi

_ENTRY = re.compile(r"@(\w+)\s*\{\s*[^,\s]+\s*,", re.IGNORECASE)
_FIELD = re.compile(r"(\w+)\s*=\s*(?:\{((?:[^{}]|\{[^{}]*\})*)\}|\"([^\"]*)\"|(\d+))", re.DOTALL)
_HEADING = re.compile(  # also numbered, as RFCs have them: "12.1. Normative References"
    r"(?im)^\s*(?:[\dA-Z]+(?:\.\d+)*\.?\s+)?(?:normative\s+|informative\s+)?"
    r"(references|bibliography|works cited|literature cited)\s*$"
)
_MARKER = re.compile(r"^\s*(?:\[\d{1,4}\]|\d{1,4}\.|[-*•])\s+")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")
_NAME = r"[A-Z][a-z'’-]+(?:[- ][A-Z][a-z'’-]+)?"
_AUTHORISH = re.compile(  # et al.; Surname, A.; A. Surname; Surname AB (Vancouver); Surname, First
    rf"\bet al\b|\b{_NAME},\s+(?:[A-Z]\.\s*)+|\b(?:[A-Z]\.\s*)+{_NAME}"
    rf"|\b{_NAME}\s+[A-Z]{{1,3}}\b(?![a-z])|\b{_NAME},\s+[A-Z][a-z]+"
)
_SKIP_TYPES = {"comment", "string", "preamble"}


def _braces_end(text: str, start: int) -> int:
    """The index after the brace that closes the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _bibtex(text: str) -> Iterator[Mention]:
    for m in _ENTRY.finditer(text):
        if m.group(1).lower() in _SKIP_TYPES:
            continue
        end = _braces_end(text, text.index("{", m.start()))
        fields = {
            k.lower(): " ".join((a or b or c).replace("{", "").replace("}", "").split())
            for k, a, b, c in _FIELD.findall(text[m.end() : end])
        }
        if "title" not in fields:
            continue
        authors = " and ".join(fields.get("author", "").split(" and ")[:6])
        venue = fields.get("journal") or fields.get("booktitle") or fields.get("publisher", "")
        value = ". ".join(x for x in (authors, fields.get("year"), fields["title"], venue) if x)
        doi = find_doi(fields.get("doi", ""))
        yield Mention(m.start(), end, "REFERENCE", text[m.start() : end], value, 1.0,
                      f"doi:{doi}" if doi else None)  # fmt: skip


def looks_like_reference(line: str, in_section: bool = False) -> bool:
    """A line long enough, with a year and author-like names (``Surname, A.``, ``A.
    Surname``, ``Surname AB``, ``Surname, First`` or ``et al.``); under a References
    heading, a year and five words are enough."""
    if not (40 <= len(line) <= 1500 and _YEAR.search(line)):
        return False
    return bool(_AUTHORISH.search(line)) or (in_section and len(line.split()) >= 5)


def _lines(text: str, in_list: bool = False) -> Iterator[Mention]:
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if _HEADING.match(line):
            in_list = True
            continue
        if in_list and line.strip() and len(line.split()) <= 4 and not _YEAR.search(line):
            in_list = False  # another heading ended the list
        marker = _MARKER.match(line)
        body = line[marker.end() :] if marker else line.lstrip()
        if (in_list or marker) and looks_like_reference(body, in_list):
            a = start + len(line) - len(line.lstrip()) if not marker else start + marker.end()
            b = start + len(line.rstrip())
            doi = find_doi(text[a:b])
            key = f"doi:{doi}" if doi else None
            yield Mention(a, b, "REFERENCE", text[a:b], text[a:b], 0.8, key)


class ReferenceRecognizer:
    """Bibliography entries, for linking to their works."""

    info = RecognizerInfo(name="references", version="2", types=("REFERENCE",), headings=True)

    def recognize(
        self, texts: Sequence[str], headings: Sequence[Sequence[str]] | None = None
    ) -> list[list[Mention]]:
        out = []
        for i, text in enumerate(texts):
            section = any(_HEADING.match(h) for h in (headings[i] if headings else ()))
            found = list(_bibtex(text)) if "@" in text else []
            taken = [(m.start, m.end) for m in found]
            found += [
                m for m in _lines(text, section) if not any(a <= m.start < b for a, b in taken)
            ]
            out.append(sorted(found, key=lambda m: m.start))
        return out
