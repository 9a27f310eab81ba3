"""W3C Web Annotation (JSON-LD): one ``AnnotationCollection`` whose first page holds one
``Annotation`` per mention, written item by item.

The target is the original file (a ``file:`` URI) with a ``TextPositionSelector`` over the
file's characters (as decoded; for a PDF, its extracted text, the one kbx cites lines of),
found through the unit's offset map, and a ``TextQuoteSelector`` whose ``exact`` is the
file's characters there (markup inside the span included) with 32 characters of ``prefix``
and ``suffix``. A file changed or gone since it was indexed has no such characters: its
annotations carry only the quote, from the clean text, and the report counts it as stale.
The body is the type (``tagging``), the normalized value (``describing``) and the entity
(``identifying``: a Wikidata, DOI, ORCID … URI where the ID has one); ``creator`` is the
recognizer and its version.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from bisect import bisect_right
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

from kbx import __version__
from kbx.export.read import Doc, Found, Placed, documents, relative
from kbx.extract.textmap import Segment, locate, unpack

if TYPE_CHECKING:
    from kbx.export.run import Job

CONTEXT = "http://www.w3.org/ns/anno.jsonld"
AROUND = 32
_URIS = {  # an entity ID's prefix -> the URI people resolve it by
    "doi": "https://doi.org/",
    "orcid": "https://orcid.org/",
    "arxiv": "https://arxiv.org/abs/",
    "cve": "https://www.cve.org/CVERecord?id=",
    "isbn": "urn:isbn:",
    "issn": "urn:issn:",
}
_QID = re.compile(r"Q[1-9]\d*")


def entity_uri(entity: str) -> str:
    """The URI of an entity ID: ``Q312`` is Wikidata's, ``doi:10.…`` doi.org's; any other
    is a kbx URN."""
    if _QID.fullmatch(entity):
        return f"http://www.wikidata.org/entity/{entity}"
    kind, _, rest = entity.partition(":")
    if kind in _URIS and rest:
        return _URIS[kind] + quote(rest, safe="/:.-_")
    return "urn:kbx:entity:" + quote(entity, safe=":.-_")


class Source:
    """The original characters of one file and where its lines start, if the file is as it
    was indexed."""

    def __init__(self, job: Job, doc: Doc):
        from kbx.extract import source_text  # the parsers: only when an export needs them

        self.text: str | None = None
        if not relative(doc.path):
            return
        try:
            data = (job.index.root / doc.path).read_bytes()
        except OSError:
            return
        if hashlib.sha256(data).hexdigest() != doc.sha256:
            return
        self.text = source_text(doc.path, data)[0]
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col


def _span(
    src: Source, segments: list[Segment], starts: list[int], p: Placed, m: Found
) -> tuple[int, int]:
    """``[start, end)`` of a mention in the file's characters: from its first character's
    position to just past its last's (past the whole source of a decoded entity)."""
    a = locate(segments, p.text, m.start)
    start = src.offset(a.line, a.col)
    last = max(m.start, m.end - 1)
    i = max(bisect_right(starts, last) - 1, 0)
    b = locate(segments, p.text, last)
    end = src.offset(b.line, b.col) + 1
    if not segments[i][4] and i + 1 < len(segments):  # synthetic: up to the next segment
        _, line, col, _, _ = segments[i + 1]
        if line == b.line and col > b.col:
            end = src.offset(line, col)
    return start, max(end, start)


def annotation(job: Job, doc: Doc, src: Source, segments, starts, p: Placed, m: Found) -> dict:
    """One mention as a W3C ``Annotation`` (``starts``: the clean starts of ``segments``)."""
    if src.text is not None:
        start, end = _span(src, segments, starts, p, m)
        t = src.text
        selectors = [
            {"type": "TextPositionSelector", "start": start, "end": end},
            {
                "type": "TextQuoteSelector",
                "exact": t[start:end],
                "prefix": t[max(0, start - AROUND) : start],
                "suffix": t[end : end + AROUND],
            },
        ]
    else:
        t = p.text
        selectors = [
            {
                "type": "TextQuoteSelector",
                "exact": t[m.start : m.end],
                "prefix": t[max(0, m.start - AROUND) : m.start],
                "suffix": t[m.end : m.end + AROUND],
            }
        ]
    body: list[dict] = [{"type": "TextualBody", "purpose": "tagging", "value": m.type}]
    if m.value is not None:
        body.append({"type": "TextualBody", "purpose": "describing", "value": m.value})
    if m.entity:
        body.append(
            {"type": "SpecificResource", "purpose": "identifying", "source": entity_uri(m.entity)}
        )
    ident = "\x1f".join(map(str, (doc.path, p.unit, m.recognizer, m.version, m.start, m.end)))
    ident += f"\x1f{m.type}\x1f{p.chain}\x1f{p.base}"
    return {
        "id": "urn:kbx:mention:" + hashlib.sha256(ident.encode()).hexdigest()[:32],
        "type": "Annotation",
        "motivation": "tagging",
        "creator": {
            "id": f"urn:kbx:recognizer:{quote(m.recognizer)}:{quote(m.version)}",
            "type": "Software",
            "name": f"{m.recognizer}@{m.version}",
        },
        "body": body,
        "target": {
            "source": (job.index.root / doc.path).as_uri(),
            "selector": selectors,
        },
    }


def write(job: Job, f: TextIO) -> None:
    """The collection's head, each annotation as it is made, then its ``total``."""
    r, done = job.report, 0
    collection = f"urn:uuid:{uuid.uuid4()}"
    head = {
        "@context": CONTEXT,
        "id": collection,
        "type": "AnnotationCollection",
        "label": f"kbx mentions of {job.index.root}",
        "generator": {"type": "Software", "name": f"kbx {__version__}"},
    }
    page = {"id": f"{collection}/page1", "type": "AnnotationPage", "partOf": collection}
    f.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "first": ')
    f.write(json.dumps(page, ensure_ascii=False)[:-1] + ', "items": [')
    first = True
    for doc in documents(job.con, job.sel):
        src: Source | None = None
        for p in doc.placements:
            if not p.mentions:
                continue
            src = src or Source(job, doc)
            segments = unpack(p.offsets)
            starts = [s[0] for s in segments]
            for m in p.mentions:
                made = annotation(job, doc, src, segments, starts, p, m)
                item = json.dumps(made, ensure_ascii=False)
                f.write(("\n" if first else ",\n") + item)
                first = False
                r.mentions += 1
        if src is not None and src.text is None:
            r.stale += 1
        done += 1
        job.progress(done, job.sel.documents)
    f.write(f'\n]}}, "total": {r.mentions}}}\n')
    if r.stale:
        r.notes.append(
            f"{r.stale} documents changed or gone since indexed: their annotations quote the "
            "clean text and have no TextPositionSelector; run `kbx index` first"
        )
