"""Indexing: counts, incremental re-runs, sweeping, failures recorded, ignores honoured."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from helpers import attached

from kbx import present
from kbx.analysis import Analyzer
from kbx.indexing.ingest import index
from kbx.indexing.read import read_one
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.status import status
from kbx.source.walk import Found
from kbx.store.db import Index


def _rows(root: Path, sql: str, params=()) -> list[tuple]:
    with attached(Index.for_root(root).db) as con:
        return con.execute(sql, params).fetchall()


def _walked(corpus: Path, **settings):
    """``index(corpus)`` with the identifiers alone, for the tests of the walk and of the
    units, which no recognizer changes: the models' passes are not their point."""
    return index(corpus, registry=Registry([IdentifierRecognizer()]), **settings)


def test_first_index_reads_every_format_and_skips_ignored_and_hidden(corpus):
    r = index(corpus)
    assert (r.new, r.failed, r.skipped) == (5, 0, 0)
    paths = {p for (p,) in _rows(corpus, "SELECT path FROM documents")}
    assert paths == {"notes/cedar.md", "web.html", "paper.tex", "runbook.txt", "report.pdf"}
    placed = _rows(corpus, "SELECT count(*) FROM placements")[0][0]
    assert placed == r.units_added > 5
    # Every placement points at a unit, and every unit is placed.
    assert _rows(corpus, "SELECT count(*) FROM placements p ANTI JOIN units u USING (unit_id)") == [
        (0,)
    ]
    meta = _rows(
        corpus, "SELECT title, doc_date, authors FROM documents WHERE path = 'notes/cedar.md'"
    )
    assert meta == [("Cedar supplier approval", "2021-03-04", ["Ann Lee"])]


def test_second_run_with_nothing_changed_reads_nothing(indexed_corpus):
    corpus = indexed_corpus
    r = index(corpus)
    assert (r.new, r.updated, r.unchanged, r.removed, r.units_added) == (0, 0, 5, 0, 0)


def test_the_walk_settings_given_once_are_kept_until_changed(corpus):
    def paths() -> set[str]:
        return {p for (p,) in _rows(corpus, "SELECT path FROM documents WHERE status = 'ok'")}

    assert _walked(corpus, hidden=True).new == 6 and ".hidden/secret.md" in paths()
    assert _walked(corpus).removed == 0 and ".hidden/secret.md" in paths()  # still there
    assert _walked(corpus, hidden=False).removed == 1 and ".hidden/secret.md" not in paths()
    assert _walked(corpus).new == 0  # and left out from now on
    _walked(corpus, max_size=1000)
    (corpus / "big.md").write_text("# Big\n\n" + "word " * 400)
    assert _walked(corpus).skipped == 1 and "big.md" not in paths()  # the cap it was given
    _walked(corpus, max_size=10_000)
    assert "big.md" in paths()


def test_touched_file_with_same_bytes_is_unchanged(indexed_corpus):
    corpus = indexed_corpus
    os.utime(corpus / "web.html", ns=(1, 1_000_000_000))
    r = index(corpus)
    assert (r.updated, r.unchanged) == (0, 5)
    assert _rows(corpus, "SELECT mtime_ns FROM documents WHERE path = 'web.html'") == [
        (1_000_000_000,)
    ]


def test_edit_rewrites_only_the_changed_units_and_sweeps_the_old(indexed_corpus):
    corpus = indexed_corpus
    md = corpus / "notes" / "cedar.md"
    before = dict(_rows(corpus, "SELECT unit_hash, unit_id FROM units"))
    md.write_text(md.read_text().replace("Collect the", "Always collect the"))
    r = index(corpus)
    assert (r.updated, r.unchanged, r.units_added, r.units_swept) == (1, 4, 1, 1)
    after = dict(_rows(corpus, "SELECT unit_hash, unit_id FROM units"))
    kept = set(before) & set(after)
    assert len(kept) == len(before) - 1
    assert all(before[h] == after[h] for h in kept)  # unchanged units were not rewritten


def test_removed_file_is_dropped_and_its_units_swept(indexed_corpus):
    corpus = indexed_corpus
    (corpus / "runbook.txt").unlink()
    r = index(corpus)
    assert (r.removed, r.units_swept) == (1, 1)
    assert _rows(corpus, "SELECT count(*) FROM documents WHERE path = 'runbook.txt'") == [(0,)]
    assert _rows(corpus, "SELECT count(*) FROM units u ANTI JOIN placements USING (unit_id)") == [
        (0,)
    ]


def test_shared_units_are_stored_once(corpus):
    (corpus / "copy.md").write_bytes((corpus / "notes" / "cedar.md").read_bytes())
    r = _walked(corpus)
    n_units = _rows(corpus, "SELECT count(*) FROM units")[0][0]
    n_placements = _rows(corpus, "SELECT count(*) FROM placements")[0][0]
    cedar = _rows(corpus, "SELECT n_units FROM documents WHERE path = 'copy.md'")[0][0]
    assert n_placements == n_units + cedar and r.units_added == n_units


def test_bad_files_are_recorded_and_the_run_goes_on(corpus):
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (corpus / "blob.md").write_bytes(b"\x00\x01\x02\x03" * 100)
    (corpus / "empty.txt").write_bytes(b"")
    (corpus / "big.txt").write_text("x " * 5000)
    (corpus / "loop.md").symlink_to(corpus / "loop.md")
    r = _walked(corpus, max_size=8000)
    assert r.new == 5 and r.failed == 3 and r.skipped == 2  # an empty file is skipped
    reasons = dict(_rows(corpus, "SELECT path, error FROM documents WHERE status != 'ok'"))
    assert "corrupt" in reasons["broken.pdf"]
    assert "binary" in reasons["blob.md"]
    assert reasons["empty.txt"] == "empty file"
    assert "size cap" in reasons["big.txt"]
    assert "loop" in reasons["loop.md"]
    statuses = dict(_rows(corpus, "SELECT path, status FROM documents"))
    assert statuses["big.txt"] == "skipped" and statuses["broken.pdf"] == "failed"
    assert statuses["empty.txt"] == "skipped"


def test_a_file_that_breaks_after_indexing_loses_its_stale_units(indexed_corpus):
    corpus = indexed_corpus
    (corpus / "report.pdf").write_bytes(b"%PDF-1.4 truncated")
    r = index(corpus)
    assert r.failed == 1
    assert _rows(corpus, "SELECT status, n_units FROM documents WHERE path = 'report.pdf'") == [
        ("failed", 0)
    ]


def test_a_file_that_vanishes_mid_run_is_reported_not_raised(corpus):
    out = read_one(str(corpus), Found("gone.md", 10, 1), None, 1000, Analyzer())
    assert out.status == "vanished"
    out = read_one(str(corpus), Found("x.md", error="Permission denied"), None, 1000, Analyzer())
    assert (out.status, out.error) == ("unreadable", "Permission denied")


def test_symlinked_folder_loop_ends(corpus):
    (corpus / "notes" / "again").symlink_to(corpus / "notes")
    (corpus / "outside").symlink_to("/usr/share")
    r = _walked(corpus)
    assert r.new == 5


def test_parallel_and_serial_extraction_store_the_same(corpus, tmp_path):
    for i in range(40):
        (corpus / f"n{i}.md").write_text(f"# Note {i}\n\nbody {i} text\n")
    reg = Registry([IdentifierRecognizer()])  # the extraction is the point, not the models
    a = index(corpus, workers=1, registry=reg)
    b = index(corpus, tmp_path / "par.duckdb", workers=2, registry=reg)
    assert a.units_added == b.units_added and a.new == b.new == 45


def test_a_failed_file_stays_failed_and_is_retried(corpus):
    (corpus / "blob.md").write_bytes(b"\x00\x01\x02\x03" * 100)
    assert _walked(corpus).failed == 1
    r = _walked(corpus)
    assert (r.failed, r.unchanged) == (1, 5)
    assert _rows(corpus, "SELECT status, error FROM documents WHERE path = 'blob.md'") == [
        ("failed", "binary file (NUL bytes)")
    ]


def test_a_date_written_at_the_top_becomes_the_document_date(corpus):
    (corpus / "incident.txt").write_text("Incident report\n\nIncident: 2022-01-19, 14:05 GMT\n")
    (corpus / "undated.txt").write_text("Notes\n\nNothing dated here; it happened in 2021.\n")
    index(corpus)
    dates = dict(_rows(corpus, "SELECT path, doc_date FROM documents"))
    assert dates["incident.txt"] == "2022-01-19"
    assert dates["undated.txt"] is None  # a year alone is not the document's date
    assert dates["notes/cedar.md"] == "2021-03-04"  # metadata first


def test_the_date_from_text_follows_the_date_recognizer(corpus):
    (corpus / "incident.txt").write_text("Incident report\n\nIncident: 2022-01-19, 14:05 GMT\n")
    index(corpus, registry=Registry([IdentifierRecognizer()]))  # dates not installed
    assert _rows(corpus, "SELECT doc_date FROM documents WHERE path = 'incident.txt'") == [(None,)]
    index(corpus, registry=Registry([DateRecognizer()]))
    assert _rows(
        corpus,
        "SELECT d.doc_date, c.version FROM documents d JOIN doc_context c USING (doc_id) "
        "WHERE d.path = 'incident.txt'",
    ) == [("2022-01-19", DateRecognizer().info.version)]
    bumped = DateRecognizer()
    bumped.info = dataclasses.replace(bumped.info, version="9")
    index(corpus, registry=Registry([bumped]))  # nothing changed on disk; a new version
    assert _rows(corpus, "SELECT DISTINCT version FROM doc_context") == [("9",)]
    index(corpus, registry=Registry([IdentifierRecognizer()]))  # turned off: undone
    assert _rows(corpus, "SELECT doc_date FROM documents WHERE path = 'incident.txt'") == [(None,)]
    assert _rows(corpus, "SELECT count(*) FROM doc_context") == [(0,)]
    assert _rows(corpus, "SELECT doc_date FROM documents WHERE path = 'notes/cedar.md'") == [
        ("2021-03-04",)  # metadata dates are never touched
    ]


def test_a_date_in_inline_code_is_not_the_document_date(corpus):
    (corpus / "snippet.md").write_text("Run `date -d 2022-01-19` to see the format.\n\nMore.\n")
    (corpus / "prose.md").write_text("Filed on 2022-01-19, and `2023-05-06` is a sample.\n")
    index(corpus)
    dates = dict(_rows(corpus, "SELECT path, doc_date FROM documents"))
    assert dates["snippet.md"] is None
    assert dates["prose.md"] == "2022-01-19"


def test_files_of_formats_kbx_does_not_read_are_counted_by_kind(corpus):
    for name in ("data.json", "logo.PNG", "dump.json.gz", "Makefile", "more.json"):
        (corpus / name).write_bytes(b"{}")
    r = _walked(corpus)
    assert r.passed_over == {".json": 2, ".png": 1, ".json.gz": 1, "no extension": 1}
    s = status(Index.for_root(corpus))
    assert s.passed_over == r.passed_over  # as the last full walk counted them
    (line,) = present.passed_over(s.passed_over, "not read")
    assert line.startswith("not read 5 files of formats kbx does not read (2 .json, 1 ")
    assert "1 .png" in line and "1 .json.gz" in line  # the most common first
    (corpus / "data.json").unlink()
    assert _walked(corpus).passed_over[".json"] == 1
