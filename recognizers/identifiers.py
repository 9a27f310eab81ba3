"""Identifiers that work as filters: DOI, ISBN, ISSN, ORCID and arXiv IDs.

Candidates are found with regular expressions and kept only when they can be
trusted: check digits are verified with python-stdnum (ISBN, ISSN, ORCID's ISO
7064 mod 11-2), and the kinds whose shape alone is ambiguous (ISSN, ISBN-10,
new-style arXiv numbers) need a label nearby. Precision first: these are filters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from kbx.recognizers.base import Mention, RecognizerInfo
from stdnum import isbn, issn
from stdnum.iso7064 import mod_11_2

_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>\[\]{}|\\^`]+")
_DOI_TRAILING = ".,;:!?*"
_LABEL = r"(?:\s*[:=]\s*[{\"]?\s*|\s+)"
_ISBN = re.compile(rf"(?i)\bISBN(?:-?1[03])?{_LABEL}(?P<id>(?:[\dX][\s-]?){{9,12}}[\dX])\b")
_ISBN13 = re.compile(
    r"\b(?P<id>97[89][-\u2010 ]\d{1,5}[-\u2010 ]\d{1,7}[-\u2010 ]\d{1,7}[-\u2010 ][\dX])\b"
)
_ISSN = re.compile(rf"(?i)\b[ep]?ISSN{_LABEL}(?P<id>\d{{4}}-?\d{{3}}[\dX])\b")
_ORCID = re.compile(r"\b(?P<id>\d{4}-\d{4}-\d{4}-\d{3}[\dX])\b")
_ARXIV_NEW = re.compile(r"\b(?P<id>(?P<yymm>\d{4})\.(?P<num>\d{4,5}))(?P<v>v\d+)?\b")
_ARCHIVES = (
    "astro-ph|cond-mat|gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math-ph|nlin|nucl-ex|nucl-th|physics|"
    "quant-ph|math|cs|q-bio|q-fin|stat|chao-dyn|solv-int|patt-sol|adap-org|comp-gas|alg-geom|"
    "dg-ga|funct-an|q-alg|cmp-lg|mtrl-th|supr-con|acc-phys|ao-sci|atom-ph|bayes-an|chem-ph|plasm-ph"
)
_ARXIV_OLD = re.compile(rf"\b(?P<id>(?:{_ARCHIVES})(?:\.[A-Z]{{2}})?/\d{{7}})(?P<v>v\d+)?\b")
_ARXIV_CONTEXT = re.compile(r"(?i)(arxiv|eprint)[^\n]{0,24}$")


def _doi(text: str) -> Iterator[Mention]:
    for m in _DOI.finditer(text):
        doi = m.group()
        while doi and (
            doi[-1] in _DOI_TRAILING or (doi[-1] == ")" and doi.count("(") < doi.count(")"))
        ):
            doi = doi[:-1]
        if "/" in doi and not doi.endswith("/"):
            yield Mention(m.start(), m.start() + len(doi), "DOI", doi, doi.lower())


def _isbn(text: str) -> Iterator[Mention]:
    seen = set()
    for rx in (_ISBN, _ISBN13):
        for m in rx.finditer(text):
            raw = m.group("id").rstrip(" -")
            digits = re.sub(r"[\s\-\u2010]", "", raw)
            if len(digits) in (10, 13) and isbn.is_valid(digits) and m.start("id") not in seen:
                seen.add(m.start("id"))
                start = m.start("id")
                yield Mention(start, start + len(raw), "ISBN", raw, isbn.to_isbn13(digits))


def _issn(text: str) -> Iterator[Mention]:
    for m in _ISSN.finditer(text):
        raw = m.group("id")
        if issn.is_valid(raw):
            yield Mention(m.start("id"), m.end("id"), "ISSN", raw, issn.format(raw))


def _orcid(text: str) -> Iterator[Mention]:
    for m in _ORCID.finditer(text):
        raw = m.group("id")
        if mod_11_2.is_valid(raw.replace("-", "")):
            yield Mention(m.start(), m.end(), "ORCID", raw, raw.upper())


def _arxiv(text: str) -> Iterator[Mention]:
    for m in _ARXIV_OLD.finditer(text):
        yield Mention(m.start(), m.end(), "ARXIV", m.group(), m.group("id"))
    for m in _ARXIV_NEW.finditer(text):
        yy, mm = int(m.group("yymm")[:2]), int(m.group("yymm")[2:])
        if not 1 <= mm <= 12 or len(m.group("num")) != (5 if yy >= 15 else 4) or yy < 7:
            continue
        if _ARXIV_CONTEXT.search(text, max(0, m.start() - 40), m.start()):
            yield Mention(m.start(), m.end(), "ARXIV", m.group(), m.group("id"))


class IdentifierRecognizer:
    """DOI, ISBN, ISSN, ORCID and arXiv identifiers, validated; usable as filters."""

    info = RecognizerInfo(
        name="identifiers", version="1", types=("DOI", "ISBN", "ISSN", "ORCID", "ARXIV")
    )

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text in texts:
            found = [*_doi(text), *_isbn(text), *_issn(text), *_orcid(text), *_arxiv(text)]
            out.append(sorted(found, key=lambda m: (m.start, m.end)))
        return out
