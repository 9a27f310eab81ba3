"""The entity layer after a write of a few documents: their rows recomputed, the rest kept.

Each per-document write lists the documents it touched in ``layer_stale`` (``mark_stale``
in its own transaction). The layer's rows split in two: the corpus-wide ones (entities,
aliases, and the basis: the decisions the documents' rows are built with) and those of
one document (links, authored, passage dates) or one unit (passage quantities). An update
recomputes the stale documents' rows and their units' quantities by the very statements
of a whole rebuild, restricted to them (``build.document_rows``, ``entities/scope.py``).

Where the inputs of the corpus-wide rows are as they were (``entities/inputs.py``: the
keyed mentions, the signers, the authors), so are those rows, and the documents' rows are
built from them as stored. Otherwise the corpus-wide rows are rebuilt whole and the
decisions compared with the stored ones: which entity each person key is merged into,
which entity each written author is, what each resolved work's citing passages also name,
and each entity's type and each alias's owner (read by ``_carried``). Where one that a
document outside the write reads has changed (a key it mentions, an author it names, a
work it cites, a short form of its names), the update is rolled back and the layer
rebuilt whole. So is it where a model found names (their votes and evidence span the
corpus: ``_names``), where most documents are stale (the whole rebuild is then as cheap),
and for every write that is not one document's (``mark_dirty``: the gazetteer, a
recognizer's version, a resolver's answers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb

from kbx.annotate.names import short_form
from kbx.entities import scope
from kbx.entities.build import (
    BASIS,
    INPUTS_KEY,
    built,
    corpus_rows,
    document_rows,
    long_names,
)
from kbx.entities.inputs import digest
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


@dataclass(frozen=True)
class Updated:
    """What an update recomputed: these documents' rows, and the corpus-wide rows too
    where their inputs changed (``entities/inputs.py``)."""

    docs: list[int]
    corpus: bool


def update(con: duckdb.DuckDBPyConnection) -> Updated | None:
    """Recompute the stale documents' rows of the layer in one transaction; returns what
    it did, or None where the layer must be rebuilt whole (nothing written then)."""
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
            inputs = digest(con)
            kept = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [INPUTS_KEY]).fetchone()
            corpus = kept != (inputs,)
            if corpus:  # rebuilt, and compared with what other documents read of them
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
            document_rows(con, True, corpus_rows(con) if corpus else _as_built(con))
            if corpus and _others_read_a_change(con):
                raise _Wider
            built(con, inputs)
    except _Wider:
        return None
    finally:
        scope.leave(con)
        for name in _KEPT:
            con.execute(f"DROP TABLE IF EXISTS {name}")
    return Updated(stale, corpus)


def _as_built(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """The corpus-wide decisions as the basis keeps them: TEMP TABLE ``person_map`` made
    from it, and the works' cited entities returned (``corpus_rows`` does both when it
    builds them)."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE person_map AS
            SELECT k AS key, v AS entity_id FROM {BASIS} WHERE part = 'person'"""
    )
    rows = con.execute(f"SELECT k, v FROM {BASIS} WHERE part = 'cited'").fetchall()
    return {work: json.loads(others) for work, others in rows}


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
