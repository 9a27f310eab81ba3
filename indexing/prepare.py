"""In the worker: an extracted document turned into the rows the writer stores.

Everything per character or per token happens here, beside the extraction, so the
writing process only concatenates rows and hands them to DuckDB: the terms of each unit,
its offset map packed, its line range and hash, and the mentions of the recognizers that
run with extraction (the rule-based ones), so a unit's text is never shipped twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime

from kbx.analysis import Analyzer, analyze_units
from kbx.annotate.run import recognize_batch
from kbx.errors import OverBudget
from kbx.extract import Document
from kbx.extract.textmap import pack
from kbx.recognizers.base import Recognizer

# unit rows, in this order (``k``, the unit's place in its batch, is added by the writer)
UNIT_COLUMNS = [
    "unit_hash",
    "heading_path",
    "text",
    "n_tokens",
    "kind",
    "terms",
    "tfs",
    "htfs",
    "n_terms",
    "code_spans",
    "breaks",
]
# placement rows: the unit is its index into the document's ``units``
PLACEMENT_COLUMNS = ["ordinal", "unit", "kind", "page", "start_line", "end_line", "offsets"]


@dataclass
class Prepared:
    """What the store keeps of one extracted file (see the column lists above); mentions
    and runs are rows of their tables, keyed by unit hash."""

    format: str
    encoding: str
    title: str | None
    doc_date: str | None
    authors: list[str]
    meta: str  # the metadata fields as JSON
    warnings: list[str]
    units: list[tuple] = field(default_factory=list)
    placements: list[tuple] = field(default_factory=list)
    mentions: list[tuple] = field(default_factory=list)
    runs: list[tuple] = field(default_factory=list)

    @property
    def n_units(self) -> int:
        return len(self.placements)


_WITH_EXTRACTION: list[Recognizer] = []  # set before the workers fork; see ``run_with``
# Units this process recognized in this run: a copy of a passage met again is not. Its
# first document carried the runs, and whatever reached the store without them (that
# document failed to be stored) gets them in the pass after the batches.
_RECOGNIZED: set[str] = set()
RECOGNIZED_MAX = 200_000  # forgotten past this, so memory does not grow with the corpus


def run_with(recognizers: list[Recognizer]) -> None:
    """The recognizers every prepared document is read by (set before forking)."""
    _WITH_EXTRACTION[:] = recognizers
    _RECOGNIZED.clear()


def prepare(doc: Document, analyzer: Analyzer, skip: frozenset[str] = frozenset()) -> Prepared:
    """The rows of one document. Units in ``skip`` (those its last version placed, which
    have their runs) are not shown to the recognizers."""
    meta = doc.meta
    out = Prepared(
        doc.format,
        doc.encoding,
        meta.title,
        doc_date(meta.date),
        list(meta.authors),
        json.dumps(meta.fields, default=_json_default),
        list(doc.warnings),
    )
    first: dict[str, int] = {}  # unit hash -> its index in out.units
    todo: list[int] = []  # units to recognize, by index into out.units
    for ordinal, u in enumerate(doc.units):
        h = u.hash
        if h not in first:
            first[h] = len(out.units)
            out.units.append((h, u))
            if h not in skip and h not in _RECOGNIZED:
                todo.append(first[h])
        start, end = u.lines
        out.placements.append((ordinal, first[h], u.kind, u.page, start, end, pack(u.offset_map)))
    units = [u for _, u in out.units]
    terms = analyze_units(units, analyzer)
    out.units = [
        (h, list(u.heading_path), u.text, u.n_tokens, u.kind, *t, _spans(u), list(u.breaks) or None)
        for (h, u), t in zip(out.units, terms, strict=True)
    ]
    _recognize(out, [out.units[i] for i in todo])
    return out


def _spans(u) -> list[list[int]] | None:
    return [list(c) for c in u.code_spans] or None  # NULL: none


def _recognize(out: Prepared, rows: list[tuple]) -> None:
    """Mentions and runs of the recognizers that run with extraction. Past the file's
    time budget, none are kept: the pass after the batches runs them, without one."""
    if not rows or not _WITH_EXTRACTION:
        return
    # hash, text, heading path, kind, code spans, breaks: the rows annotate.run reads
    batch = [(row[0], row[2], row[1], row[4], row[9], row[10]) for row in rows]
    try:
        for r in _WITH_EXTRACTION:
            mentions, runs = recognize_batch(r, batch)
            out.mentions += mentions
            out.runs += runs
    except OverBudget:
        out.mentions, out.runs = [], []
        return
    if len(_RECOGNIZED) > RECOGNIZED_MAX:
        _RECOGNIZED.clear()
    _RECOGNIZED.update(row[0] for row in batch)


def doc_date(raw: str | None) -> str | None:
    """An ISO date (or year-month, or year) from a metadata value, else None."""
    if not raw:
        return None
    raw = str(raw).strip()
    for fmt, n in (("%Y-%m-%d", 10), ("%Y-%m", 7), ("%Y", 4)):
        try:
            datetime.strptime(raw[:n], fmt)
            return raw[:n]
        except ValueError:
            continue
    for fmt in ("%d %B %Y", "%B %d, %Y", "%B %Y", "%d %b %Y", "%b %d, %Y"):
        try:
            parsed = datetime.strptime(raw, fmt)
            return parsed.strftime("%Y-%m" if fmt == "%B %Y" else "%Y-%m-%d")
        except ValueError:
            continue
    return None


def _json_default(value):
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)
