"""The document context layer: mention values that depend on the document they sit in.

A relative date ("yesterday") is stored in its unit's mention as a relative value;
since one unit can sit in documents of different dates, its resolved value lives here,
keyed by document, and is recomputed whenever a document or its mentions change.
"""

from __future__ import annotations

from datetime import date

import duckdb

from kbx.recognizers.registry import Registry
from kbx.store.db import mark_dirty, rows_select


def document_date(raw: str | None) -> date | None:
    """A document's date as a day, when its metadata (or first lines) gave one."""
    try:
        return date.fromisoformat(raw) if raw and len(raw) == 10 else None
    except ValueError:
        return None


def refresh(con: duckdb.DuckDBPyConnection, registry: Registry) -> int:
    """Recompute the layer for documents whose context-dependent mentions it lacks or that
    changed since; returns how many values were written."""
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
    con.execute("BEGIN")
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
    con.execute("COMMIT")
    return len(resolved)
