"""Schema 4: an index from before inline code and table cells were stored is migrated, and its
next `kbx index` reads every file again, ending where a fresh build of the same files ends."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

from kbx.indexing.ingest import index
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.consistency import contents
from kbx.store.schema import REEXTRACT, SCHEMA_VERSION

DOC = (
    "# Notes\n\nThe enum `MONDAY` and plain Friday.\n\n| When | x |\n|-|-|\n| 4 March 2021 | y |\n"
)


def _docs(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.md").write_text(DOC)
    (root / "b.md").write_text("# Other\n\nNothing coded here, written on 5 May 2020.\n")
    return root


def _as_schema_3(db: Path) -> None:
    """Turn a fresh index into what kbx wrote at schema 3: units hashed by heading path and
    text alone, no code or cell columns, and the dates run of version 2, which read inline
    code (it found `MONDAY`)."""
    con = duckdb.connect(str(db))
    units = con.execute("SELECT unit_hash, heading_path, text FROM units").fetchall()
    for new, path, text in units:
        old = hashlib.sha256(("\x1f".join(path) + "\x1e" + text).encode()).hexdigest()
        for table in ("units", "runs", "mentions", "doc_mentions"):
            con.execute(f"UPDATE {table} SET unit_hash = ? WHERE unit_hash = ?", [old, new])
    unit, text = con.execute(
        "SELECT unit_hash, text FROM units WHERE text LIKE '%MONDAY%'"
    ).fetchone()
    at = text.index("MONDAY")
    con.execute(
        "INSERT INTO mentions VALUES (?, 'dates', '2', ?, ?, 'DATE', 'MONDAY', 'REL:WD:0:~', 0.6, "
        "NULL)",
        [unit, at, at + 6],
    )
    for table in ("runs", "mentions"):
        con.execute(f"UPDATE {table} SET version = '2' WHERE recognizer = 'dates'")
    con.execute("UPDATE recognizer_info SET version = '2' WHERE name = 'dates'")
    con.execute("ALTER TABLE units DROP COLUMN code_spans")
    con.execute("ALTER TABLE units DROP COLUMN breaks")
    con.execute("UPDATE kbx_meta SET value = '3' WHERE key = 'schema_version'")
    con.close()


def _read(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_schema_3_index_is_read_again_and_ends_as_a_fresh_build(tmp_path):
    registry = Registry([DateRecognizer()])
    old = _docs(tmp_path / "old")
    index(old, registry=registry)
    db = old / ".kbx" / "index.duckdb"
    _as_schema_3(db)
    assert ("MONDAY",) in _read(db, "SELECT text FROM mentions")
    report = index(old, registry=registry)
    assert (report.updated, report.unchanged) == (2, 0)  # unchanged files, read again
    meta = dict(_read(db, "SELECT key, value FROM kbx_meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION) and REEXTRACT not in meta
    assert ("MONDAY",) not in _read(db, "SELECT text FROM mentions")
    ((text, code, breaks),) = _read(
        db, "SELECT text, code_spans, breaks FROM units WHERE text LIKE '%MONDAY%'"
    )
    table = text.index("When")
    assert code == [[text.index("MONDAY"), text.index("MONDAY") + 6]]
    assert breaks == [i for i, c in enumerate(text) if c in "|\n" and i > table]
    fresh = _docs(tmp_path / "fresh")
    index(fresh, registry=registry)
    con_old = duckdb.connect(str(db), read_only=True)
    con_new = duckdb.connect(str(fresh / ".kbx" / "index.duckdb"), read_only=True)
    assert contents(con_old) == contents(con_new)
    con_old.close()
    con_new.close()
    assert index(old, registry=registry).unchanged == 2  # read again once, not every time
