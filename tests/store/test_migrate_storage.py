"""Schema 7: an index whose unit texts and offset maps DuckDB compressed is rewritten with
those two columns uncompressed (search reads them by id), row for row."""

from __future__ import annotations

from pathlib import Path

import duckdb
from helpers import write_corpus

from kbx.indexing.ingest import index
from kbx.search.search import search
from kbx.store.consistency import contents
from kbx.store.db import Index
from kbx.store.schema import SCHEMA_VERSION

COLUMNS = {"units": "text", "placements": "offsets"}


def _as_schema_6(db: Path) -> None:
    """The tables as kbx wrote them at schema 6: the same columns, compressed as DuckDB
    chooses (a copy made by ``CREATE TABLE AS`` takes the default)."""
    con = duckdb.connect(str(db))
    for table in COLUMNS:
        con.execute(f"CREATE TABLE {table}_old AS SELECT * FROM {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE {table}_old RENAME TO {table}")
    con.execute("UPDATE kbx_meta SET value = '6' WHERE key = 'schema_version'")
    con.close()


def _compression(db: Path) -> dict[str, set[str]]:
    con = duckdb.connect(str(db))
    con.execute("CHECKPOINT")
    try:
        return {
            table: {
                c
                for (c,) in con.execute(
                    f"SELECT compression FROM pragma_storage_info('{table}') "
                    "WHERE column_name = ? AND segment_type <> 'VALIDITY'",
                    [column],
                ).fetchall()
            }
            for table, column in COLUMNS.items()
        }
    finally:
        con.close()


def test_texts_and_offset_maps_are_stored_uncompressed_after_the_migration(tmp_path):
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    with idx.reader() as con:
        before = contents(con)
    hits = [(h.path, h.start_line, h.end_line) for h in search(idx, "supplier approval").hits]
    _as_schema_6(idx.db)
    assert _compression(idx.db)["units"] != {"Uncompressed"}  # the copy compressed its texts

    with idx.writer() as con:  # any writer migrates
        (version,) = con.execute(
            "SELECT value FROM kbx_meta WHERE key = 'schema_version'"
        ).fetchone()
        assert version == str(SCHEMA_VERSION)
        assert contents(con) == before
    assert _compression(idx.db) == {"units": {"Uncompressed"}, "placements": {"Uncompressed"}}
    again = [(h.path, h.start_line, h.end_line) for h in search(idx, "supplier approval").hits]
    assert again == hits and hits
    (root / "new.md").write_text("# New\n\nA supplier approval form, signed.\n")
    index(root, workers=1)  # rows written after the migration are stored the same way
    assert _compression(idx.db) == {"units": {"Uncompressed"}, "placements": {"Uncompressed"}}


def test_duckdb_draws_no_progress_bar_of_its_own(tmp_path):
    """A long statement (this migration's copy at 200k units takes 20 s) would draw DuckDB's
    bar across kbx's own on stderr."""
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    for opened in (idx.reader, idx.writer):
        with opened() as con:
            setting = "SELECT current_setting('enable_progress_bar')"
            assert con.execute(setting).fetchone() == (False,)
