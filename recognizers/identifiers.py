"""Identifiers that work as filters: DOI, ISBN, ISSN, ORCID, arXiv and CVE IDs.

Candidates are found with regular expressions and kept only when they can be
trusted: check digits are verified with python-stdnum (ISBN, ISSN, ORCID's ISO
7064 mod 11-2), and the kinds whose shape alone is ambiguous (ISSN, ISBN-10,
new-style arXiv numbers) need a label nearby. Precision first: these are filters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from stdnum import isbn, issn
from stdnum.iso7064 import mod_11_2

from kbx.recognizers.base import Mention, RecognizerInfo

# A BibTeX escape (``\_``) belongs to the DOI; a publisher's URL path after it does not.
_DOI = re.compile(r"\b10\.\d{4,9}/(?:\\[_%&#]|[^\s\"'<>\[\]{}|\\^`])+")
_DOI_TRAILING = ".,;:!?*"
_DOI_URL_TAIL = re.compile(
    r"/(?:full|abstract|pdf|epdf|eprint|meta|fulltext|html|suppl|summary)(?:/.*)?$", re.I
)
# A label ("ISBN", "issn =", '"ISSN": [') governs the identifiers that follow it on its
# line, so lists such as {0924-2708, 1601-5215} are read whole.
_ISBN_LABEL = re.compile(r"(?i)\bISBN(?:-?1[03])?\b")
_ISSN_LABEL = re.compile(r"(?i)\b[ep]?ISSN\b")
# Between a label and its identifiers, or between two of them: punctuation, space, and
# the keys of Crossref's JSON ({"issn-type": [{"type": "print", "value": "0360-4012"}]}).
_GAP = re.compile(r"(?:\s+|[\"':=\[\]{}(),;-]|type|value|print|electronic){0,40}")
_ISBN_SHAPE = re.compile(r"(?<![\w.-])(?P<id>(?:[\dX][\s\u2010-]?){9,12}[\dX])(?![\w-])")
_ISBN13 = re.compile(  # a book's EAN needs no label: 978/979 and a valid check digit
    r"(?<![\w-])(?P<id>97[89](?:[-\u2010 ]?\d){9}[-\u2010 ]?[\dX])(?![\w-])"
)
_ISSN_SHAPE = re.compile(r"(?<![\w-])(?P<id>\d{4}-?\d{3}[\dX])(?![\w-])")
_ORCID = re.compile(r"\b(?P<id>\d{4}-\d{4}-\d{4}-\d{3}[\dX])\b")
_ARXIV_NEW = re.compile(r"\b(?P<id>(?P<yymm>\d{4})\.(?P<num>\d{4,5}))(?P<v>v\d+)?\b")
_ARCHIVES = (
    "astro-ph|cond-mat|gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math-ph|nlin|nucl-ex|nucl-th|physics|"
    "quant-ph|math|cs|q-bio|q-fin|stat|chao-dyn|solv-int|patt-sol|adap-org|comp-gas|alg-geom|"
    "dg-ga|funct-an|q-alg|cmp-lg|mtrl-th|supr-con|acc-phys|ao-sci|atom-ph|bayes-an|chem-ph|plasm-ph"
)
_ARXIV_OLD = re.compile(rf"\b(?P<id>(?:{_ARCHIVES})(?:\.[A-Z]{{2}})?/\d{{7}})(?P<v>v\d+)?\b")
_CVE = re.compile(r"\bCVE-(?:19|20)\d\d-\d{4,7}\b")
_ARXIV_CONTEXT = re.compile(r"(?i)(arxiv|eprint)[^\n]{0,24}$")
# Cheap necessary conditions, tried before each scan: most units hold no identifier, and a
# pattern that opens with ``\b`` or a class is tried at every position, where one that
# opens with a literal jumps between its occurrences (ten to thirty times faster). Each hint
# holds wherever its pattern matches (``\d`` stays Unicode: full-width digits too).
_ORCID_HINT = re.compile(r"-(?<=\d{4}-)\d{4}-")
_ARXIV_NEW_HINT = re.compile(r"\.(?<=\d{4}\.)\d{4}")
_ARXIV_OLD_HINT = re.compile(r"/\d{7}")
_ISBN13_HINT = re.compile(r"97[89](?:[-\u2010 ]?\d){9}")


def _folded(text: str) -> str:
    """The text as the labels' ``(?i)`` reads their letters "s", "b" and "n": lower case, and
    the long s (U+017F), which ``(?i)s`` matches too, as "s"; "SBN" and "SSN" then hold."""
    low = text.lower()
    return low.replace("\u017f", "s") if "\u017f" in low else low


def doi_as_written(found: str) -> str:
    """A DOI match less what follows it in prose or a URL: closing punctuation, an
    unbalanced parenthesis, a publisher's path (``/full``, ``/epdf``, ``/eprint/…``)."""
    doi = _DOI_URL_TAIL.sub("", found) if found.count("/") > 1 else found
    while doi and (
        doi[-1] in _DOI_TRAILING or (doi[-1] == ")" and doi.count("(") < doi.count(")"))
    ):
        doi = doi[:-1]
    return doi


def doi_value(written: str) -> str:
    r"""The canonical DOI: lower case, BibTeX escapes undone (``10.1/a\_b`` is ``10.1/a_b``)."""
    return re.sub(r"\\([_%&#])", r"\1", written).lower()


def find_doi(text: str) -> str | None:
    """The first DOI in ``text`` (a URL, ``doi:…``, a BibTeX field), canonical; or None."""
    m = _DOI.search(text)
    doi = doi_as_written(m.group()) if m else ""
    return doi_value(doi) if "/" in doi and not doi.endswith("/") else None


def _doi(text: str) -> Iterator[Mention]:
    if "10." not in text:
        return
    for m in _DOI.finditer(text):
        doi = doi_as_written(m.group())
        if "/" in doi and not doi.endswith("/"):
            yield Mention(m.start(), m.start() + len(doi), "DOI", doi, doi_value(doi))


def _labelled(text: str, label: re.Pattern, shape: re.Pattern) -> Iterator[re.Match]:
    """Candidates of ``shape`` that follow a ``label``, one after another, separated only
    by punctuation and space (``issn = {0924-2708, 1601-5215}``, ``"ISSN": ["…", "…"]``)."""
    for lm in label.finditer(text):
        pos = lm.end()
        while True:
            gap = _GAP.match(text, pos)
            m = shape.match(text, gap.end())
            if not m:
                break
            yield m
            pos = m.end()


def _isbn(text: str) -> Iterator[Mention]:
    seen = set()
    labelled = _labelled(text, _ISBN_LABEL, _ISBN_SHAPE) if "sbn" in _folded(text) else ()
    for m in [*labelled, *(_ISBN13.finditer(text) if _ISBN13_HINT.search(text) else ())]:
        raw = m.group("id").rstrip(" -")
        digits = re.sub(r"[\s\-\u2010]", "", raw)
        if len(digits) in (10, 13) and isbn.is_valid(digits) and m.start("id") not in seen:
            seen.add(m.start("id"))
            start = m.start("id")
            yield Mention(start, start + len(raw), "ISBN", raw, isbn.to_isbn13(digits))


def _issn(text: str) -> Iterator[Mention]:
    if "ssn" not in _folded(text):
        return
    seen = set()
    for m in _labelled(text, _ISSN_LABEL, _ISSN_SHAPE):
        raw = m.group("id")
        if issn.is_valid(raw) and m.start() not in seen:
            seen.add(m.start())
            yield Mention(m.start("id"), m.end("id"), "ISSN", raw, issn.format(raw))


def _orcid(text: str) -> Iterator[Mention]:
    if not _ORCID_HINT.search(text):
        return
    for m in _ORCID.finditer(text):
        raw = m.group("id")
        if mod_11_2.is_valid(raw.replace("-", "")):
            yield Mention(m.start(), m.end(), "ORCID", raw, raw.upper())


def _arxiv(text: str) -> Iterator[Mention]:
    if _ARXIV_OLD_HINT.search(text):
        for m in _ARXIV_OLD.finditer(text):
            yield Mention(m.start(), m.end(), "ARXIV", m.group(), m.group("id"))
    if not _ARXIV_NEW_HINT.search(text):
        return
    for m in _ARXIV_NEW.finditer(text):
        yy, mm = int(m.group("yymm")[:2]), int(m.group("yymm")[2:])
        if not 1 <= mm <= 12 or len(m.group("num")) != (5 if yy >= 15 else 4) or yy < 7:
            continue
        if _ARXIV_CONTEXT.search(text, max(0, m.start() - 40), m.start()):
            yield Mention(m.start(), m.end(), "ARXIV", m.group(), m.group("id"))


def _cve(text: str) -> Iterator[Mention]:
    """CVE IDs: no check digit, but a shape nothing else has (MITRE's CVE-YYYY-NNNN+)."""
    if "CVE-" not in text:
        return
    for m in _CVE.finditer(text):
        yield Mention(m.start(), m.end(), "CVE", m.group(), m.group())


class IdentifierRecognizer:
    """DOI, ISBN, ISSN, ORCID, arXiv and CVE identifiers, validated; usable as filters.
    Each mention's key is its entity: the lower-case type and the value (``doi:10.…``)."""

    info = RecognizerInfo(
        name="identifiers", version="3", types=("DOI", "ISBN", "ISSN", "ORCID", "ARXIV", "CVE")
    )

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text in texts:
            found = [
                *_doi(text),
                *_isbn(text),
                *_issn(text),
                *_orcid(text),
                *_arxiv(text),
                *_cve(text),
            ]
            out.append(
                [
                    replace(m, key=f"{m.type.lower()}:{m.value}")
                    for m in sorted(found, key=lambda m: (m.start, m.end))
                ]
            )
        return out
