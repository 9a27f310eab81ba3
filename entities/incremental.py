"""The entity layer after a write of a few documents: their rows recomputed, the rest kept.

Each per-document write lists the documents it touched in ``layer_stale`` (``mark_stale``
in its own transaction). The layer's rows split in two: the corpus-wide ones (entities,
aliases) and those of one document (links, authored, passage dates) or one unit (passage
quantities). An update rebuilds the corpus-wide rows whole, as a full rebuild does (SQL
and small Python passes), and recomputes only the stale documents' rows and their units'
quantities, by the very statements of ``build`` restricted to them (``entities/scope.py``).

That equals a full rebuild when every corpus-wide decision another document's rows were
built with is unchanged. Those decisions are stored beside the layer (``layer_basis``):
which entity each person key is merged into, which entity each written author name is,
what each resolved work's citing passages also name; and the entities' types and the
aliases' owners, which ``_carried`` reads, are the stored entities and aliases. The
update compares the new decisions with the old; where one that a document outside the
write reads has changed (a key it mentions, an author it names, a work it cites, a short
form of its names), the update is rolled back and the layer rebuilt whole. So is it where
a model found names (their votes and evidence span the corpus: ``_names``), where most
documents are stale (the whole rebuild is then as cheap), and for every write that is not
one document's (``mark_dirty``: the gazetteer, a recognizer's version, a resolver).
"""

from __future__ import annotations

import duckdb

from kbx.annotate.names import short_form
from kbx.entities import scope
from kbx.entities.build import BASIS, build, built, long_names
from kbx.store.transaction import transaction

MOST = 0.5  # past this share of the documents stale, a whole rebuild is as cheap

# The old layer's corpus-wide rows, kept for the comparison (TEMP TABLE name: query).
_KEPT = {
    "old_basis": f"SELECT part, k, v FROM {BASIS}",
    "old_types": "SELECT entity_id, type FROM entities",
    "old_owners": "SELECT alias, min(entity_id) AS owner FROM aliases "
    "WHERE NOT starts_with(entity_id, 'name:') GROUP BY alias",
}


class _Wider(Exception):
    """A corpus-wide decision that other documents read changed: rebuild whole."""


def update(con: duckdb.DuckDBPyConnection) -> list[int] | None:
    """Recompute the stale documents' rows of the layer in one transaction; returns those
    documents, or None where the layer must be rebuilt whole (nothing written then)."""
    if con.execute("SELECT 1 FROM recognizer_info WHERE names LIMIT 1").fetchone():
        return None  # a model's names: votes and evidence across the corpus
    stale = [
        d for (d,) in con.execute("SELECT DISTINCT doc_id FROM layer_stale ORDER BY 1").fetchall()
    ]
    (docs,) = con.execute("SELECT count(*) FROM documents").fetchone()
    if len(stale) > MOST * docs:
        return None
    try:
        with transaction(con):
            scope.enter(con, stale)
            for name, query in _KEPT.items():
                con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {query}")
            for table in ("entities", "aliases", BASIS):
                con.execute(f"DELETE FROM {table}")
            for table in ("links", "authored", "passage_dates"):
                con.execute(f"DELETE FROM {table} WHERE {scope.within(True, 'doc_id')}")
            con.execute(
                "DELETE FROM passage_quantities WHERE unit_id NOT IN (SELECT unit_id FROM units) "
                f"OR {scope.units_within(True, 'unit_id')}"
            )
            build(con, scoped=True)
            if _others_read_a_change(con):
                raise _Wider
            built(con)
    except _Wider:
        return None
    finally:
        scope.leave(con)
        for name in _KEPT:
            con.execute(f"DROP TABLE IF EXISTS {name}")
    return stale


def _others_read_a_change(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a document outside the scope reads a corpus-wide decision that changed."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE basis_changed AS
            SELECT DISTINCT part, k FROM (
                (SELECT part, k, v FROM {BASIS} EXCEPT SELECT * FROM old_basis)
                UNION ALL (SELECT * FROM old_basis EXCEPT SELECT part, k, v FROM {BASIS})
                UNION ALL SELECT 'type', entity_id, NULL FROM (
                    (SELECT entity_id, type FROM entities EXCEPT FROM old_types)
                    UNION ALL (FROM old_types EXCEPT SELECT entity_id, type FROM entities)))"""
    )
    try:
        return _keyed_elsewhere(con) or _owner_changed_elsewhere(con)
    finally:
        con.execute("DROP TABLE basis_changed")


def _keyed_elsewhere(con: duckdb.DuckDBPyConnection) -> bool:
    """A changed person merge or entity type of a key another document mentions, a changed
    entity of an author another document names, or changed names of a work it cites."""
    return bool(
        con.execute(
            f"""SELECT 1 FROM basis_changed b JOIN mentions m ON m.key = b.k
                JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
                WHERE b.part IN ('person', 'type') AND NOT {scope.within(True, "pl.doc_id")}
                UNION ALL
                SELECT 1 FROM basis_changed b JOIN documents d ON list_contains(d.authors, b.k)
                WHERE b.part = 'author' AND NOT {scope.within(True, "d.doc_id")}
                UNION ALL
                SELECT 1 FROM basis_changed b JOIN links l ON l.entity_id = b.k
                WHERE b.part = 'cited' AND NOT {scope.within(True, "l.doc_id")}
                LIMIT 1"""
        ).fetchone()
    )


def _owner_changed_elsewhere(con: duckdb.DuckDBPyConnection) -> bool:
    """An alias whose owner changed that is a short form of a keyed name of another
    document (``_carried`` carries a short form its name's entity owns, or no one does)."""
    changed = {
        a
        for (a,) in con.execute(
            """WITH new AS (SELECT alias, min(entity_id) AS owner FROM aliases
                            WHERE NOT starts_with(entity_id, 'name:') GROUP BY alias)
               SELECT coalesce(n.alias, o.alias) FROM new n FULL JOIN old_owners o
                   ON o.alias = n.alias
               WHERE n.owner IS DISTINCT FROM o.owner"""
        ).fetchall()
    }
    if not changed:
        return False
    names = long_names(con, f"NOT {scope.within(True)}")
    return any(short_form(text, type_) in changed for _, _, _, type_, text, _ in names)
