"""``kbx mentions`` and ``kbx recognizers``: what the recognizers found, where, and how much."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from kbx.errors import BadArgument
from kbx.extract.textmap import locate, unpack
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
from kbx.store.read import parse_spec, resolve


@dataclass
class MentionRow:
    """One mention, at the original line it came from."""

    path: str
    line: int
    text: str
    type: str
    value: str | None
    confidence: float
    recognizer: str
    version: str
    unit: str
    start: int
    end: int


@dataclass
class RecognizerRow:
    """One recognizer's metadata and what it has done in this index."""

    name: str
    version: str
    types: list[str]
    filter: bool
    units: int
    units_total: int
    mentions: int
    failed: int


def _doc_date(raw: str | None) -> date | None:
    try:
        return date.fromisoformat(raw) if raw and len(raw) == 10 else None
    except ValueError:
        return None


def mentions(
    index: Index, spec: str, type_: str | None = None, registry: Registry | None = None
) -> list[MentionRow]:
    """Mentions in a document (optionally only lines START-END, only one type). Values
    that need the document (a relative date) are resolved against its date here, in the
    document's context, since one unit can sit in documents of different dates."""
    path, start, end = parse_spec(spec)
    _, rel = resolve(index, path)
    with index.reader() as con:
        doc = con.execute("SELECT doc_date FROM documents WHERE path = ?", [rel]).fetchone()
        if not doc:
            raise BadArgument(f"{rel} is not in the index; run `kbx index` first")
        rows = con.execute(
            """SELECT pl.ordinal, pl.offsets, u.text, m.start_char, m.end_char, m.type, m.text,
                      m.value, m.confidence, m.recognizer, m.version, u.unit_hash
               FROM documents d JOIN placements pl USING (doc_id) JOIN units u USING (unit_id)
               JOIN mentions m ON m.unit_hash = u.unit_hash
               WHERE d.path = ? AND (? IS NULL OR m.type = upper(?))
               ORDER BY pl.ordinal, m.start_char, m.recognizer""",
            [rel, type_, type_],
        ).fetchall()
    registry = registry if registry is not None else Registry.load()
    resolvers = {r.info.name: r.resolve for r in registry if hasattr(r, "resolve")}
    when = _doc_date(doc[0])
    out, maps = [], {}
    for ordinal, blob, text, s, e, typ, mtext, value, conf, rec, ver, unit in rows:
        if rec in resolvers:
            value = resolvers[rec](value, when)
        segments = maps.setdefault(ordinal, unpack(blob))
        line = locate(segments, text, s).line
        if start is not None and not (start <= line <= end):
            continue
        out.append(MentionRow(rel, line, mtext, typ, value, conf, rec, ver, unit, s, e))
    return out


def recognizers(index: Index, registry: Registry) -> list[RecognizerRow]:
    """Each installed recognizer with the units it has processed and the mentions found."""
    with index.reader() as con:
        total = con.execute("SELECT count(*) FROM units").fetchone()[0]
        out = []
        for r in registry:
            units, failed = con.execute(
                "SELECT count(*) FILTER (error IS NULL), count(*) FILTER (error IS NOT NULL) "
                "FROM runs WHERE recognizer = ? AND version = ?",
                [r.info.name, r.info.version],
            ).fetchone()
            found = con.execute(
                "SELECT count(*) FROM mentions WHERE recognizer = ? AND version = ?",
                [r.info.name, r.info.version],
            ).fetchone()[0]
            out.append(
                RecognizerRow(
                    r.info.name,
                    r.info.version,
                    list(r.info.types),
                    r.info.filter,
                    units,
                    total,
                    found,
                    failed,
                )
            )
    return out
