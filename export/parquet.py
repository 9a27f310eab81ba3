"""Parquet: one file per table (DuckDB ``COPY … (FORMAT parquet)``, which streams), so
pandas, polars or DuckDB read an index without kbx. The columns are the store's own (the
README's "Exports" lists them); beside the six tables issue 19 names, ``doc_mentions``
holds the values mentions take in each document (a relative date, resolved). With filters,
each table keeps only what the chosen passages reach: their documents, units and
placements, the mentions of those units (of the chosen types and recognizers) and their
values per document, the entities the passages name or the mentions key, and those
entities' gazetteer log. Rows keep the store's order (DuckDB preserves insertion order),
with no sort that would hold a large table in memory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kbx.export.run import Job

_UNITS = "SELECT unit_id FROM export_places"
_MENTIONS = (
    "SELECT m.* FROM mentions m WHERE m.unit_hash IN "
    f"(SELECT unit_hash FROM units WHERE unit_id IN ({_UNITS})) AND {{mentions}}"
)
_ENTITIES = f"""SELECT * FROM entities WHERE entity_id IN (
    SELECT l.entity_id FROM links l JOIN export_places p ON p.doc_id = l.doc_id
        AND (l.unit_id IS NULL OR l.unit_id = p.unit_id)
    UNION SELECT key FROM ({_MENTIONS}) WHERE key IS NOT NULL)"""
TABLES = {  # table -> its rows when filtered (over the chosen placements, export_places)
    "documents": "SELECT * FROM documents WHERE doc_id IN (SELECT doc_id FROM export_places)",
    "units": f"SELECT * FROM units WHERE unit_id IN ({_UNITS})",
    "placements": "SELECT pl.* FROM placements pl "
    "SEMI JOIN export_places p USING (doc_id, ordinal)",
    "mentions": _MENTIONS,
    "doc_mentions": f"""SELECT dm.* FROM doc_mentions dm
        WHERE EXISTS (SELECT 1 FROM export_places p JOIN units u USING (unit_id)
                      WHERE p.doc_id = dm.doc_id AND u.unit_hash = dm.unit_hash)
          AND EXISTS (SELECT 1 FROM ({_MENTIONS}) x WHERE x.unit_hash = dm.unit_hash
                      AND x.recognizer = dm.recognizer AND x.version = dm.version
                      AND x.start_char = dm.start_char)""",
    "entities": _ENTITIES,
    "gazetteer_log": "SELECT * FROM gazetteer_log WHERE entry_id IN "
    f"(SELECT entity_id FROM ({_ENTITIES}))",
}


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def write(job: Job, folder: Path) -> None:
    con, sel, r = job.con, job.sel, job.report
    types, recs = sel.mention_params
    params = {"types": types, "recs": recs}
    counts = {}
    for done, (table, rows) in enumerate(TABLES.items(), start=1):
        select = (
            rows.format(mentions=sel.mention_where) if sel.filtered else f"SELECT * FROM {table}"
        )
        uses = params if "$types" in select else None
        target = folder / f"{table}.parquet"
        (n,) = con.execute(
            f"COPY ({select}) TO {_literal(target)} (FORMAT parquet)",
            uses,
        ).fetchone()
        counts[table] = n
        r.files += 1
        job.progress(done, len(TABLES))
    r.documents, r.units, r.mentions = counts["documents"], counts["units"], counts["mentions"]
