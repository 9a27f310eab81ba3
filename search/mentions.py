"""``kbx mentions`` and ``kbx recognizers``: what the recognizers found, where, and how much."""

from __future__ import annotations

from dataclasses import dataclass

from kbx.entities.lookup import check_type
from kbx.entities.positions import Positions
from kbx.errors import BadArgument
from kbx.extract import format_of
from kbx.extract.textmap import locate, unpack
from kbx.recognizers.registry import Registry
from kbx.source.cite import parse_spec, resolve
from kbx.store.db import Index


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
    installed: bool = True  # False: its mentions remain from before; `--purge` drops them


def mentions(index: Index, spec: str, type_: str | None = None) -> list[MentionRow]:
    """Mentions in a document (optionally only lines START-END, only one type). Values
    that need the document (a relative date) come from the document context layer,
    since one unit can sit in documents of different dates."""
    path, start, end = parse_spec(spec)
    _, rel = resolve(index.root, path)
    with index.reader() as con:
        if not con.execute("SELECT 1 FROM documents WHERE path = ?", [rel]).fetchone():
            if format_of(rel) is None:
                raise BadArgument(f"kbx does not index this kind of file: {rel}")
            raise BadArgument(f"{rel} is not in the index; run `kbx index` first")
        if type_ is not None:
            type_ = check_type(con, type_)
        rows = con.execute(
            """SELECT pl.ordinal, pl.offsets, u.text, m.start_char, m.end_char, m.type, m.text,
                      CASE WHEN dm.doc_id IS NULL THEN m.value ELSE dm.value END,
                      m.confidence, m.recognizer, m.version, u.unit_hash
               FROM documents d JOIN placements pl USING (doc_id) JOIN units u USING (unit_id)
               JOIN mentions m ON m.unit_hash = u.unit_hash
               LEFT JOIN doc_mentions dm ON dm.doc_id = d.doc_id AND dm.unit_hash = m.unit_hash
                   AND dm.recognizer = m.recognizer AND dm.version = m.version
                   AND dm.start_char = m.start_char
               WHERE d.path = ? AND (? IS NULL OR m.type = upper(?))
               ORDER BY pl.ordinal, m.start_char, m.recognizer""",
            [rel, type_, type_],
        ).fetchall()
    out, maps, seen, positions = [], {}, set(), Positions()
    for ordinal, blob, text, s, e, typ, mtext, value, conf, rec, ver, unit in rows:
        chain, base = positions.start(rel, ordinal, text, blob)
        here = (chain, base + s, typ, mtext, value, rec)  # a mention in two overlapping
        if here in seen:  # windows sits at one place in the file: listed once
            continue
        seen.add(here)
        segments = maps.setdefault(ordinal, unpack(blob))
        at = locate(segments, text, s)
        if start is not None and not (start <= at.line <= end):
            continue
        out.append(MentionRow(rel, at.line, mtext, typ, value, conf, rec, ver, unit, s, e))
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
        gone = con.execute(  # what recognizers no longer installed (or turned off) left
            """SELECT recognizer, any_value(version), count(*) FILTER (error IS NULL),
                      count(*) FILTER (error IS NOT NULL),
                      (SELECT count(*) FROM mentions m WHERE m.recognizer = r.recognizer)
               FROM runs r WHERE NOT list_contains(?, recognizer)
               GROUP BY recognizer ORDER BY recognizer""",
            [[r.info.name for r in registry]],
        ).fetchall()
        for name, version, units, failed, found in gone:
            out.append(RecognizerRow(name, version, [], False, units, total, found, failed, False))
    return out
