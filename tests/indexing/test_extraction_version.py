"""An extractor that changed reads its format's files again on the next `kbx index`, though
their bytes did not change: else an index keeps the units an older kbx cut from them."""

from __future__ import annotations

import json

import duckdb

from kbx.extract.document import EXTRACTION_VERSIONS
from kbx.indexing.ingest import EXTRACTION, index
from kbx.store.db import Index


def test_a_format_whose_extractor_changed_is_read_again_once(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("Plain notes on the valve.\n")
    (root / "b.md").write_text("# Notes\n\nThe pump, in Markdown.\n")
    first = index(root)
    assert first.new == 2
    db = Index.for_root(root).db
    with duckdb.connect(str(db)) as con:
        (meta,) = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [EXTRACTION]).fetchone()
        assert json.loads(meta) == EXTRACTION_VERSIONS
        older = {**EXTRACTION_VERSIONS, "text": "0"}  # as a kbx with another text extractor
        con.execute("UPDATE kbx_meta SET value = ? WHERE key = ?", [json.dumps(older), EXTRACTION])
    again = index(root)
    assert (again.updated, again.unchanged) == (1, 1)  # the text file, not the Markdown one
    assert index(root).unchanged == 2  # once


def test_an_index_that_records_no_extraction_reads_the_changed_formats_again(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("Plain notes on the valve.\n")
    (root / "b.md").write_text("# Notes\n\nThe pump, in Markdown.\n")
    index(root)
    with duckdb.connect(str(Index.for_root(root).db)) as con:
        con.execute("DELETE FROM kbx_meta WHERE key = ?", [EXTRACTION])  # an older kbx's index
    again = index(root)
    changed = sum(v != "1" for f, v in EXTRACTION_VERSIONS.items() if f in ("text", "markdown"))
    assert again.updated == changed and again.unchanged == 2 - changed
