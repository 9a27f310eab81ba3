"""What is consistent in a store and what is not: orphaned units swept (inside the
transaction that orphans them, and once more at the start of every writing command, see
``kbx.entities.build.repair``), the problems ``kbx status`` reports, and a digest of every
table that the crash tests compare a repaired store with a fresh build by."""

from __future__ import annotations

import duckdb

from kbx.store import passages_file
from kbx.store.db import is_dirty, mark_dirty, mark_stale, runs_changed
from kbx.store.postings import drop_unused_terms, touched
from kbx.store.transaction import transaction


def problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What is inconsistent now (for ``kbx status``; the next writing command repairs it)."""
    found = []
    if orphans := _orphans(con):
        found.append(f"{orphans} units no document places (swept by the next `kbx index`)")
    if is_dirty(con):
        found.append(
            "the entity layer is older than the mentions (rebuilt by the next `kbx index`)"
        )
    return found


def unplace(con: duckdb.DuckDBPyConnection, doc_ids: list[int]) -> None:
    """Delete the documents' placements, keeping the units they placed as candidates for
    ``drop_orphans`` in the same transaction; their rows of the entity layer are stale."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE unplaced AS "
        "SELECT DISTINCT unit_id FROM placements WHERE list_contains(?, doc_id)",
        [doc_ids],
    )
    con.execute("DELETE FROM placements WHERE list_contains(?, doc_id)", [doc_ids])
    mark_stale(con, doc_ids)
    passages_file.touched(con, doc_ids)


def drop_orphans(con: duckdb.DuckDBPyConnection, everywhere: bool = False) -> int:
    """Delete units no document places any more (those just unplaced, or with
    ``everywhere`` all of them), with their postings, the terms only they used, runs and
    mentions, inside the caller's transaction; returns how many. Units just unplaced were
    their documents' (``unplace`` marked those stale); any others ask for a whole rebuild."""
    source = "units" if everywhere else "unplaced JOIN units USING (unit_id)"
    con.execute(
        "CREATE OR REPLACE TEMP TABLE orphans AS SELECT unit_id, unit_hash "
        f"FROM {source} ANTI JOIN placements USING (unit_id)"
    )
    (n,) = con.execute("SELECT count(*) FROM orphans").fetchone()
    if n:
        for table in ("mentions", "runs"):
            con.execute(f"DELETE FROM {table} WHERE unit_hash IN (SELECT unit_hash FROM orphans)")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE orphan_terms AS SELECT DISTINCT term_id FROM postings "
            "WHERE unit_id IN (SELECT unit_id FROM orphans)"
        )
        con.execute("DELETE FROM postings WHERE unit_id IN (SELECT unit_id FROM orphans)")
        drop_unused_terms(con, "SELECT term_id FROM orphan_terms")
        con.execute("DROP TABLE orphan_terms")
        con.execute("DELETE FROM units WHERE unit_id IN (SELECT unit_id FROM orphans)")
        if everywhere:
            mark_dirty(con)
        runs_changed(con)
        touched(con)
        passages_file.touched(con, [])  # units alone: the delta finds them gone
    con.execute("DROP TABLE orphans")
    if not everywhere:
        con.execute("DROP TABLE unplaced")
    return n


def sweep(con: duckdb.DuckDBPyConnection) -> int:
    """Delete every unit no document places; returns how many. Every writing command
    starts with it and there are almost never any: one read says so, and only then does a
    transaction open."""
    if not _orphans(con):
        return 0
    with transaction(con):
        return drop_orphans(con, everywhere=True)


def _orphans(con: duckdb.DuckDBPyConnection) -> int:
    (n,) = con.execute("SELECT count(*) FROM units ANTI JOIN placements USING (unit_id)").fetchone()
    return n


CONTENT = {  # every table, free of ids and times: what two builds of the same files share
    "documents": "SELECT path, sha256, status, doc_date, title, n_units FROM documents",
    "units": "SELECT unit_hash, text, n_terms FROM units",
    "placements": "SELECT d.path, p.ordinal, u.unit_hash, p.start_line, p.end_line "
    "FROM placements p JOIN documents d USING (doc_id) JOIN units u USING (unit_id)",
    "terms": "SELECT term FROM terms",
    "postings": "SELECT t.term, u.unit_hash, p.tf, p.htf FROM postings p "
    "JOIN terms t USING (term_id) JOIN units u USING (unit_id)",
    "runs": "SELECT unit_hash, recognizer, version, n_mentions, error FROM runs",
    "mentions": "SELECT * FROM mentions",
    "doc_mentions": "SELECT d.path, x.* EXCLUDE (doc_id) FROM doc_mentions x "
    "JOIN documents d USING (doc_id)",
    "doc_names": "SELECT d.path, n.* EXCLUDE (doc_id) FROM doc_names n "
    "JOIN documents d USING (doc_id)",
    "entities": "SELECT * FROM entities",
    "aliases": "SELECT * FROM aliases",
    "links": "SELECT d.path, u.unit_hash, l.entity_id, l.filter FROM links l "
    "JOIN documents d USING (doc_id) LEFT JOIN units u USING (unit_id)",
    "authored": "SELECT d.path, u.unit_hash, a.entity_id FROM authored a "
    "JOIN documents d USING (doc_id) LEFT JOIN units u USING (unit_id)",
    "passage_dates": "SELECT d.path, u.unit_hash, x.lo, x.hi FROM passage_dates x "
    "JOIN documents d USING (doc_id) LEFT JOIN units u USING (unit_id)",
    "passage_quantities": "SELECT u.unit_hash, x.* EXCLUDE (unit_id) FROM passage_quantities x "
    "JOIN units u USING (unit_id)",
    "layer_basis": "SELECT * FROM layer_basis",
    "gazetteer": "SELECT * EXCLUDE (added_at, retracted_at) FROM gazetteer",
    "gazetteer_log": "SELECT * EXCLUDE (logged_at) FROM gazetteer_log",
}


def contents(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every table's rows, free of ids and times, sorted: equal for equal stores. The crash
    tests and benchmarks compare a repaired store with a fresh build by this."""
    return {t: sorted(map(repr, con.execute(sql).fetchall())) for t, sql in CONTENT.items()}
