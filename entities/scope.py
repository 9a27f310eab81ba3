"""Which documents a build of the entity layer writes the rows of: every one (a whole
rebuild), or those a write touched (``entities/incremental.py``), listed in TEMP TABLE
``layer_scope`` with their units in ``layer_scope_units``. The corpus-wide rows (entities,
aliases, the basis) are always built whole; a document's rows are built by the same
statements either way, each with the predicate below."""

from __future__ import annotations

import duckdb

SCOPE = "layer_scope"  # TEMP TABLE (doc_id): the documents whose rows are rebuilt
SCOPE_UNITS = "layer_scope_units"  # TEMP TABLE (unit_id): their units, and units none places


def within(scoped: bool, column: str = "pl.doc_id") -> str:
    """SQL: whether the document ``column`` names is one this build writes rows for."""
    return f"{column} IN (SELECT doc_id FROM {SCOPE})" if scoped else "true"


def units_within(scoped: bool, column: str = "u.unit_id") -> str:
    """SQL: whether the unit ``column`` names is one this build writes quantities for."""
    return f"{column} IN (SELECT unit_id FROM {SCOPE_UNITS})" if scoped else "true"


def enter(con: duckdb.DuckDBPyConnection, doc_ids: list[int]) -> None:
    """Make the scope tables: the documents, their units, and the units no document places
    (a unit's quantities are its own, and a swept unit's go)."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {SCOPE} AS SELECT unnest(?::INTEGER[]) AS doc_id",
        [doc_ids],
    )
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE {SCOPE_UNITS} AS
            SELECT DISTINCT unit_id FROM placements WHERE doc_id IN (SELECT doc_id FROM {SCOPE})
            UNION SELECT unit_id FROM units ANTI JOIN placements USING (unit_id)"""
    )


def leave(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the scope tables."""
    con.execute(f"DROP TABLE IF EXISTS {SCOPE}; DROP TABLE IF EXISTS {SCOPE_UNITS}")
