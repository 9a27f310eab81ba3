"""The document context layer: mention values that depend on the document they sit in.

A relative date ("yesterday") is stored in its unit's mention as a relative value;
since one unit can sit in documents of different dates, its resolved value lives here,
keyed by document, and is recomputed whenever a document or its mentions change.
"""

from __future__ import annotations

import json
import re
from datetime import date

import duckdb

from kbx.recognizers.registry import Registry
from kbx.store.db import mark_dirty, rows_select
from kbx.store.transaction import transaction


def document_date(raw: str | None) -> date | None:
    """A document's date as a day, when its metadata (or first lines) gave one."""
    try:
        return date.fromisoformat(raw) if raw and len(raw) == 10 else None
    except ValueError:
        return None


HEAD_CHARS = 300  # how far into a document its own date is looked for


def document_dates(con: duckdb.DuckDBPyConnection, registry: Registry) -> int:
    """A document without a date in its metadata takes the first full date written at its
    top ("Incident: 2022-01-19", "4 March 2021"), found by the registry's date recognizer
    and recorded with its version in ``doc_context``: redone when that version changes,
    undone when dates are turned off. Returns the documents looked at."""
    dates = next((r for r in registry if r.info.name == "dates"), None)
    version = dates.info.version if dates else None
    rows = con.execute(
        """SELECT d.doc_id, u.text FROM documents d
           LEFT JOIN doc_context c ON c.doc_id = d.doc_id AND c.recognizer = 'dates'
           LEFT JOIN placements pl ON pl.doc_id = d.doc_id AND pl.ordinal = 0
           LEFT JOIN units u USING (unit_id)
           WHERE d.status = 'ok' AND (c.doc_id IS NOT NULL OR d.doc_date IS NULL)
             AND c.version IS DISTINCT FROM ?""",
        [version],
    ).fetchall()
    if not rows:
        return 0
    found = dates.recognize([(t or "")[:HEAD_CHARS] for _, t in rows]) if dates else []
    with transaction(con):
        ids = [doc_id for doc_id, _ in rows]
        con.execute(
            "DELETE FROM doc_context WHERE recognizer = 'dates' AND list_contains(?, doc_id)",
            [ids],
        )
        days = [_full_date(ms) for ms in found] if dates else [None] * len(rows)
        select, params = rows_select(["doc_id", "day"], list(zip(ids, days, strict=True)))
        con.execute(  # one statement for the batch: a first index asks this of every file
            f"UPDATE documents SET doc_date = x.day FROM ({select}) x "
            "WHERE documents.doc_id = x.doc_id",
            params,
        )
        if dates:
            found_at = [
                (i, "dates", version, json.dumps({"date": d}))
                for i, d in zip(ids, days, strict=True)
            ]
            select, params = rows_select(["doc_id", "recognizer", "version", "data"], found_at)
            con.execute(f"INSERT INTO doc_context {select}", params)
        mark_dirty(con)
    return len(rows)


def _full_date(mentions: list) -> str | None:
    for m in mentions:
        if m.type == "DATE" and m.value and re.fullmatch(r"\d{4}-\d\d-\d\d", m.value):
            return m.value
    return None


def refresh(con: duckdb.DuckDBPyConnection, registry: Registry) -> int:
    """Recompute the layer for documents whose context-dependent mentions it lacks or that
    changed since (their own dates first); returns how many values were written."""
    document_dates(con, registry)
    resolvers = {r.info.name: r for r in registry if r.info.needs_context and hasattr(r, "resolve")}
    if not resolvers:
        return 0
    names = list(resolvers)
    stale = con.execute(
        """SELECT DISTINCT pl.doc_id FROM placements pl JOIN units u USING (unit_id)
           JOIN mentions m ON m.unit_hash = u.unit_hash
           WHERE list_contains(?, m.recognizer)
             AND NOT EXISTS (SELECT 1 FROM doc_mentions x WHERE x.doc_id = pl.doc_id
                             AND x.unit_hash = m.unit_hash AND x.recognizer = m.recognizer
                             AND x.version = m.version AND x.start_char = m.start_char)
           UNION
           SELECT DISTINCT x.doc_id FROM doc_mentions x LEFT JOIN documents d USING (doc_id)
           WHERE x.doc_date IS DISTINCT FROM d.doc_date
              OR NOT EXISTS (SELECT 1 FROM placements pl JOIN units u USING (unit_id)
                             WHERE pl.doc_id = x.doc_id AND u.unit_hash = x.unit_hash)
              OR NOT EXISTS (SELECT 1 FROM mentions m WHERE m.unit_hash = x.unit_hash
                             AND m.recognizer = x.recognizer AND m.version = x.version)""",
        [names],
    ).fetchall()
    docs = [d for (d,) in stale]
    if not docs:
        return 0
    rows = con.execute(
        """SELECT pl.doc_id, d.doc_date, m.unit_hash, m.recognizer, m.version, m.start_char,
                  m.value
           FROM placements pl JOIN documents d USING (doc_id) JOIN units u USING (unit_id)
           JOIN mentions m ON m.unit_hash = u.unit_hash
           WHERE list_contains(?, pl.doc_id) AND list_contains(?, m.recognizer)""",
        [docs, names],
    ).fetchall()
    resolved = list(
        {
            (doc_id, h, rec, ver, start, when, resolvers[rec].resolve(value, document_date(when)))
            for doc_id, when, h, rec, ver, start, value in rows
        }
    )
    with transaction(con):
        con.execute("DELETE FROM doc_mentions WHERE list_contains(?, doc_id)", [docs])
        if resolved:
            columns = [
                "doc_id",
                "unit_hash",
                "recognizer",
                "version",
                "start_char",
                "doc_date",
                "value",
            ]
            select, params = rows_select(columns, resolved)
            con.execute(f"INSERT INTO doc_mentions {select}", params)
        mark_dirty(con)
    return len(resolved)
