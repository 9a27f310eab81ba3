"""Rebuilding postings from the stored clean text, when the analysis chain changes."""

from __future__ import annotations

import duckdb
from kbx.extract.analysis import Analyzer


def rebuild_postings(con: duckdb.DuckDBPyConnection, analyzer: Analyzer) -> int:
    """Re-analyze every stored unit and heading; files are not read again. Returns units done."""
    units = con.execute("SELECT unit_id, text, kind FROM units").fetchall()
    rows = []
    lengths = []
    for unit_id, text, kind in units:
        terms = analyzer.terms(text, code=kind == "code")
        rows.extend((unit_id, t, tf) for t, tf in terms.items())
        lengths.append((unit_id, sum(terms.values())))
    heads = con.execute("SELECT DISTINCT doc_id, ordinal, heading_path FROM placements").fetchall()
    head_rows = [
        (doc_id, ordinal, t)
        for doc_id, ordinal, path in heads
        for t in analyzer.terms(" ".join(path or []))
    ]
    con.execute("BEGIN")
    for table in ("postings", "heading_terms", "terms"):
        con.execute(f"DELETE FROM {table}")
    if rows or head_rows:
        u, t, f = (list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [])
        con.execute(
            "CREATE TEMP TABLE rp AS SELECT unnest($1) AS unit_id, unnest($2) AS term, "
            "unnest($3) AS tf",
            [u, t, f],
        )
        d, o, ht = (list(c) for c in zip(*head_rows, strict=True)) if head_rows else ([], [], [])
        con.execute(
            "CREATE TEMP TABLE rh AS SELECT unnest($1) AS doc_id, unnest($2) AS ordinal, "
            "unnest($3)::VARCHAR AS term",
            [d, o, ht],
        )
        con.execute(
            "INSERT INTO terms SELECT nextval('term_ids'), term FROM "
            "(SELECT term FROM rp UNION SELECT term FROM rh)"
        )
        con.execute(
            "INSERT INTO postings SELECT t.term_id, rp.unit_id, rp.tf "
            "FROM rp JOIN terms t USING (term)"
        )
        con.execute(
            "INSERT INTO heading_terms SELECT t.term_id, rh.doc_id, rh.ordinal "
            "FROM rh JOIN terms t USING (term)"
        )
        ids, lens = (list(c) for c in zip(*lengths, strict=True))
        con.execute(
            "UPDATE units SET n_terms = l.n FROM (SELECT unnest($1) AS id, unnest($2) AS n) l "
            "WHERE units.unit_id = l.id",
            [ids, lens],
        )
        con.execute("DROP TABLE rp")
        con.execute("DROP TABLE rh")
    con.execute("COMMIT")
    return len(units)
