"""Postings upkeep: rebuilding them when the analysis chain changes, keeping them sorted.

BM25 reads the postings of a few terms; sorted by term, DuckDB's zone maps let it
skip every row group that cannot hold them. Batches append unsorted tails, so an
index run that added many rows rewrites the table in term order.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import duckdb

from kbx.analysis import ANALYSIS_VERSION, LANG_TERM, Analyzer, analyze_units
from kbx.errors import SchemaError
from kbx.languages import SNOWBALL
from kbx.store.arrays import bump
from kbx.store.db import rows_select, set_meta
from kbx.store.transaction import transaction

RESORT_FRACTION = 0.1
GENERATION = "postings_generation"  # kbx_meta key: bumped by every write of postings
REWRITTEN = "postings_rewritten"  # kbx_meta key: the generation units were last analyzed again


def mapped_path(db: Path) -> Path:
    """Where the postings of ``db`` are exported as arrays (store/postings_file.py)."""
    return db.with_name(f"{db.name}.postings.npy")


def touched(con: duckdb.DuckDBPyConnection, rewritten: bool = False) -> None:
    """Inside the caller's transaction: units or their postings changed, so the mapped
    postings of the old generation (store/postings_file.py) are no longer used.
    ``rewritten``: stored units' postings were replaced in place, which a delta over the
    mapped base (units added and deleted since) cannot say: the next export is whole."""
    bump(con, GENERATION)
    if rewritten:
        (gen,) = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [GENERATION]).fetchone()
        set_meta(con, REWRITTEN, gen)


def term_rows(source: str, key: str) -> str:
    """SQL for one row per term from a relation holding ``analyze_units``' columns
    (space-separated ``terms``, ``tfs`` and ``htfs``), each row keyed by ``key``."""
    return f"""SELECT {key}, unnest(string_split(terms, ' ')) AS term,
                      unnest(string_split(tfs, ' '))::INTEGER AS tf,
                      unnest(string_split(htfs, ' '))::INTEGER AS htf
               FROM {source} WHERE terms <> ''"""


def drop_unused_terms(con: duckdb.DuckDBPyConnection, candidates: str) -> None:
    """Delete the terms among ``candidates`` (SQL of ``term_id``s: those of postings just
    deleted) that no posting uses any more, so an edited or removed passage's words leave
    the term list that statistics count and searches map, as a fresh build never had them."""
    con.execute(
        f"""DELETE FROM terms WHERE term_id IN ({candidates})
            AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.term_id = terms.term_id)"""
    )


def rebuild_postings(
    con: duckdb.DuckDBPyConnection, analyzer: Analyzer, unit_ids: list[int] | None = None
) -> int:
    """Re-analyze stored units (all, or those given; files are not read again) and replace
    their postings in one transaction; returns the units done."""
    where = "" if unit_ids is None else "WHERE list_contains(?, unit_id)"
    rows = con.execute(
        f"SELECT unit_id, text, kind, heading_path FROM units {where}",
        [] if unit_ids is None else [unit_ids],
    ).fetchall()
    units = [SimpleNamespace(text=t, kind=k, heading_path=tuple(h)) for _, t, k, h in rows]
    analyzed = analyze_units(units, analyzer)
    select, params = rows_select(
        ["unit_id", "terms", "tfs", "htfs", "n_terms"],
        [(r[0], *a) for r, a in zip(rows, analyzed, strict=True)],
    )
    with transaction(con):
        if unit_ids is None:
            con.execute("DELETE FROM postings")
            con.execute("DELETE FROM terms")
        else:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE old_terms AS SELECT DISTINCT term_id FROM postings "
                "WHERE list_contains(?, unit_id)",
                [unit_ids],
            )
            con.execute("DELETE FROM postings WHERE list_contains(?, unit_id)", [unit_ids])
        con.execute(f"CREATE OR REPLACE TEMP TABLE analyzed AS {select}", params)
        con.execute(f"CREATE OR REPLACE TEMP TABLE rebuilt AS {term_rows('analyzed', 'unit_id')}")
        con.execute(
            "INSERT INTO terms SELECT nextval('term_ids'), term "
            "FROM (SELECT DISTINCT term FROM rebuilt) ANTI JOIN terms USING (term)"
        )
        con.execute(
            "INSERT INTO postings SELECT t.term_id, r.unit_id, r.tf, r.htf "
            "FROM rebuilt r JOIN terms t USING (term) ORDER BY t.term_id, r.unit_id"
        )
        con.execute(
            "UPDATE units SET n_terms = a.n_terms FROM analyzed a WHERE units.unit_id = a.unit_id"
        )
        con.execute("DROP TABLE rebuilt")
        con.execute("DROP TABLE analyzed")
        if unit_ids is not None:
            drop_unused_terms(con, "SELECT term_id FROM old_terms")
            con.execute("DROP TABLE old_terms")
        touched(con, rewritten=True)
        if unit_ids is None:
            _mark_sorted(con)
    if unit_ids is not None:
        resort_postings(con)
    record_languages(con)
    return len(rows)


def _mark_sorted(con: duckdb.DuckDBPyConnection) -> None:
    n = con.execute("SELECT count(*) FROM postings").fetchone()[0]
    set_meta(con, "postings_sorted", str(n))


def resort_postings(con: duckdb.DuckDBPyConnection) -> bool:
    """Rewrite the postings in term order if enough unsorted rows were appended."""
    total = con.execute("SELECT count(*) FROM postings").fetchone()[0]
    row = con.execute("SELECT value FROM kbx_meta WHERE key = 'postings_sorted'").fetchone()
    sorted_rows = int(row[0]) if row else 0
    if abs(total - sorted_rows) <= RESORT_FRACTION * max(total, 1):
        return False
    with transaction(con):
        con.execute(
            "CREATE TEMP TABLE resorted AS SELECT * FROM postings ORDER BY term_id, unit_id"
        )
        con.execute("DELETE FROM postings")
        con.execute("INSERT INTO postings SELECT * FROM resorted")
        con.execute("DROP TABLE resorted")
        _mark_sorted(con)
    return True


# the kbx_meta keys of the analysis chain
ANALYZER_KEYS = ("stemmer", "protected", "analysis", "languages")
ANALYSIS = "analysis"  # kbx_meta key: the ``ANALYSIS_VERSION`` that made the postings
LANGUAGES = "languages"  # kbx_meta key: units per language other than English, as JSON


def analyzer_of(con: duckdb.DuckDBPyConnection, stemmer: str | None = None) -> Analyzer:
    """The analysis chain the index was built with (or with another stemmer): its stemmer
    and the names ``kbx gazetteer check`` protected."""
    meta = dict(
        con.execute(
            "SELECT key, value FROM kbx_meta "
            "WHERE key IN ('stemmer', 'protected', 'analysis', 'languages')"
        ).fetchall()
    )
    return analyzer_from(meta, stemmer)


def analyzer_from(
    meta: dict[str, str], stemmer: str | None = None, current: bool = False
) -> Analyzer:
    """``analyzer_of`` from ``kbx_meta`` rows the caller read (``ANALYZER_KEYS`` among them).
    With ``current`` (a search), an index whose postings another version of the chain
    made is refused: its terms and the query's would not meet."""
    if current and "stemmer" in meta and meta.get(ANALYSIS) != ANALYSIS_VERSION:
        made = meta.get(ANALYSIS) or "1"
        raise SchemaError(
            f"this index's postings were made by another version of the analysis chain "
            f"({made}; this kbx analyzes as {ANALYSIS_VERSION}: see ANALYSIS_VERSION in "
            "analysis.py for what changed); run `kbx index` to analyze them again (the "
            "files are not read again)"
        )
    protected = frozenset(json.loads(meta.get("protected", "[]")))
    stemmed = [lang for lang in json.loads(meta.get(LANGUAGES, "{}")) if SNOWBALL.get(lang)]
    return Analyzer(stemmer or meta.get("stemmer", "snowball"), protected, tuple(sorted(stemmed)))


def record_languages(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Count the units of each language other than English (their ``#lang=`` terms) into
    kbx_meta 'languages', which a query is analyzed in; returns the counts."""
    rows = con.execute(
        "SELECT t.term, count(*) FROM terms t JOIN postings p USING (term_id) "
        "WHERE starts_with(t.term, ?) GROUP BY t.term ORDER BY count(*) DESC, t.term",
        [LANG_TERM],
    ).fetchall()
    counts = {term.removeprefix(LANG_TERM): n for term, n in rows}
    set_meta(con, LANGUAGES, json.dumps(counts))
    return counts


def settle_analyzer(con: duckdb.DuckDBPyConnection, stemmer: str | None) -> Analyzer:
    """The index's analysis chain for a writer; choosing another stemmer, or postings an
    older version of the chain made (``analysis.ANALYSIS_VERSION``), rebuilds the postings
    from the stored units (the files are not read again)."""
    meta = dict(
        con.execute(
            "SELECT key, value FROM kbx_meta WHERE key IN ('stemmer', 'analysis')"
        ).fetchall()
    )
    analyzer = analyzer_of(con, stemmer)
    if meta.get("stemmer") != analyzer.stemmer or meta.get(ANALYSIS) != ANALYSIS_VERSION:
        rebuild_postings(con, analyzer)
        set_meta(con, "stemmer", analyzer.stemmer)
        set_meta(con, ANALYSIS, ANALYSIS_VERSION)
    return analyzer
