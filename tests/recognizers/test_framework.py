"""The framework: metadata checked, plugins by entry point, runs cached by (unit, name, version)."""

from __future__ import annotations

import duckdb
import pytest
from helpers import Words, attached

from kbx.annotate.run import record_info
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import purge
from kbx.recognizers.base import RecognizerInfo
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.mentions import mentions, recognizers
from kbx.store import arrays
from kbx.store.db import ENTITIES_DIRTY, RUNS, Index, is_dirty


def _q(corpus, sql, params=()):
    con = duckdb.connect(str(Index.for_root(corpus).db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_metadata_is_checked_and_names_are_unique():
    with pytest.raises(BadArgument, match="use lower case"):
        RecognizerInfo(name="Bad Name", version="1", types=("X",))
    with pytest.raises(BadArgument, match="version and its types"):
        RecognizerInfo(name="ok", version="", types=("X",))
    with pytest.raises(BadArgument, match="in upper case.*'dataset'"):  # --type could not reach it
        RecognizerInfo(name="ok", version="1", types=("DATASET", "dataset"))
    with pytest.raises(BadArgument, match="in upper case.*'Work of art'"):
        RecognizerInfo(name="ok", version="1", types=("WORK",), boost_types=("Work of art",))
    assert RecognizerInfo(name="ok", version="1", types=("WORK_OF_ART", "3D")).types[1] == "3D"
    assert RecognizerInfo(name="ok", version="1", types=("PROGRAMMING LANGUAGE",)).types
    with pytest.raises(BadArgument, match="two recognizers are named 'words'"):
        Registry([Words(), Words()])
    with pytest.raises(BadArgument, match="choose from words"):
        Registry([Words()]).get("nope")


def test_a_plugin_package_is_found_by_its_entry_point():
    names = [r.info.name for r in Registry.load()]
    assert "acronyms" in names and "identifiers" in names  # tests/plugin, installed by make


def test_runs_are_cached_and_a_run_with_nothing_found_still_counts(corpus):
    words = Words()
    first = index(corpus, registry=Registry([words]))
    n_units = _q(corpus, "SELECT count(*) FROM units")[0][0]
    assert words.calls == n_units and first.recognizers[0].units == n_units
    assert _q(corpus, "SELECT count(*) FROM runs WHERE n_mentions = 0")[0][0] > 0
    index(corpus, registry=Registry([words]))
    assert words.calls == n_units  # nothing re-run


def test_a_shared_unit_reuses_its_mentions(corpus):
    words = Words()
    index(corpus, registry=Registry([words]))
    calls = words.calls
    (corpus / "copy.md").write_bytes((corpus / "notes" / "cedar.md").read_bytes())
    index(corpus, registry=Registry([words]))
    assert words.calls == calls
    assert mentions(Index.for_root(corpus), "copy.md")[0].text == "Cedar"


def test_a_version_bump_redoes_only_that_recognizer(corpus):
    index(corpus, registry=Registry([Words("1"), IdentifierRecognizer()]))
    ids_before = _q(
        corpus, "SELECT count(*), min(ran_at) FROM runs WHERE recognizer = 'identifiers'"
    )
    index(corpus, registry=Registry([Words("2"), IdentifierRecognizer()]))
    assert _q(corpus, "SELECT DISTINCT version FROM runs WHERE recognizer = 'words'") == [("2",)]
    assert _q(corpus, "SELECT DISTINCT version FROM mentions WHERE recognizer = 'words'") == [
        ("2",)
    ]
    ids_after = _q(
        corpus, "SELECT count(*), min(ran_at) FROM runs WHERE recognizer = 'identifiers'"
    )
    assert ids_after == ids_before  # untouched


def test_recognizer_info_is_written_once_for_what_changed(corpus):
    """``record_info`` rewrites the rows of recognizers whose info changed, in one write
    that marks the entity layer stale and the runs' generation new; unchanged, it writes
    nothing (it runs at the start of every index and every pass)."""
    index(corpus, registry=Registry([Words("1"), IdentifierRecognizer()]))
    db = Index.for_root(corpus).db
    with attached(db, read_only=False) as con:
        con.execute("DELETE FROM kbx_meta WHERE key = ?", [ENTITIES_DIRTY])
        generation = arrays.generation(con, RUNS)
        record_info(con, [Words("1"), IdentifierRecognizer()])
        assert arrays.generation(con, RUNS) == generation and not is_dirty(con)
        ids = con.execute("SELECT * FROM recognizer_info WHERE name = 'identifiers'").fetchall()
        record_info(con, [Words("2"), IdentifierRecognizer()])
        assert arrays.generation(con, RUNS) > generation and is_dirty(con)
        assert con.execute(
            "SELECT name, version FROM recognizer_info ORDER BY name"
        ).fetchall() == [
            ("identifiers", IdentifierRecognizer().info.version),
            ("words", "2"),
        ]
        assert (
            con.execute("SELECT * FROM recognizer_info WHERE name = 'identifiers'").fetchall()
            == ids
        )


def test_a_failing_unit_is_recorded_and_retried(corpus):
    r = index(corpus, registry=Registry([Words(fail_on="Runbook")]))
    (report,) = r.recognizers
    assert len(report.failures) == 1 and "cannot read this one" in report.failures[0][1]
    assert report.units == _q(corpus, "SELECT count(*) FROM units")[0][0]
    fixed = Words()
    index(corpus, registry=Registry([fixed]))
    assert fixed.calls == 1  # only the failed unit again
    assert _q(corpus, "SELECT count(*) FROM runs WHERE error IS NOT NULL") == [(0,)]


def test_mentions_are_cited_at_original_lines_and_swept_with_their_units(corpus):
    (corpus / "refs.md").write_text("# Refs\n\nThe seL4 paper:\ndoi:10.1145/1629575.1629596.\n")
    index(corpus, registry=Registry([IdentifierRecognizer()]))
    idx = Index.for_root(corpus)
    (m,) = mentions(idx, "refs.md", "doi")
    assert (m.line, m.text, m.value, m.recognizer) == (
        4,
        "10.1145/1629575.1629596",
        "10.1145/1629575.1629596",
        "identifiers",
    )
    assert mentions(idx, "refs.md:1-3") == []
    (row,) = recognizers(idx, Registry([IdentifierRecognizer()]))
    assert row.units == row.units_total and row.mentions >= 1
    (corpus / "refs.md").unlink()
    index(corpus, registry=Registry([IdentifierRecognizer()]))
    assert _q(corpus, "SELECT count(*) FROM mentions WHERE value LIKE '10.1145/1629575%'") == [(0,)]


def test_relative_dates_resolve_against_their_documents_date(corpus):
    from kbx.recognizers.dates import DateRecognizer

    body = "# Log\n\nThe fix landed yesterday.\n"
    (corpus / "a.md").write_text("---\ndate: 2021-03-10\n---\n" + body)
    (corpus / "b.md").write_text("---\ndate: 2022-01-01\n---\n" + body)
    (corpus / "c.md").write_text(body)
    registry = Registry([DateRecognizer()])
    index(corpus, registry=registry)
    idx = Index.for_root(corpus)
    get = lambda p: [m.value for m in mentions(idx, p, "date") if m.text == "yesterday"]  # noqa: E731
    assert get("a.md") == ["2021-03-09"]
    assert get("b.md") == ["2021-12-31"]  # the same unit, another document, another date
    assert get("c.md") == [None]  # no document date: unresolved, never today


def test_a_plugin_that_fails_to_load_is_set_aside(monkeypatch):
    from importlib.metadata import EntryPoint

    import kbx.recognizers.registry as registry_module

    eps = [
        EntryPoint("gone", "kbx_no_such_module:Thing", "kbx.recognizers"),
        EntryPoint(
            "identifiers", "kbx.recognizers.identifiers:IdentifierRecognizer", "kbx.recognizers"
        ),
    ]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: eps)
    registry = Registry.load()
    assert [r.info.name for r in registry] == ["identifiers"]
    assert registry.broken[0][0] == "gone" and "ModuleNotFoundError" in registry.broken[0][1]


def test_the_context_layer_follows_a_changed_document_date(corpus):
    from kbx.recognizers.dates import DateRecognizer

    registry = Registry([DateRecognizer()])
    note = corpus / "a.md"
    note.write_text("---\ndate: 2021-03-10\n---\n# Log\n\nShipped yesterday.\n")
    index(corpus, registry=registry)
    note.write_text("---\ndate: 2021-06-02\n---\n# Log\n\nShipped yesterday.\n")
    index(corpus, registry=registry)
    idx = Index.for_root(corpus)
    assert [m.value for m in mentions(idx, "a.md", "date")] == ["2021-06-01"]
    note.unlink()
    index(corpus, registry=registry)
    assert _q(corpus, "SELECT count(*) FROM doc_mentions d ANTI JOIN documents USING (doc_id)") == [
        (0,)
    ]


def test_recognizers_that_do_not_read_code_leave_code_units_alone(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text(
        "# Notes\n\nThe crate weighs 5 kg and shipped on 4 March 2021.\n\n## Code\n\n"
        "```python\nprint('\\x1b[31m red', 0x0B, 1L)  # MONDAY, 10 ms, doi:10.1000/xyz123\n```\n"
    )
    index(root, registry=Registry([QuantityRecognizer(), DateRecognizer(), IdentifierRecognizer()]))
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT u.kind, m.recognizer, m.text FROM mentions m JOIN units u USING (unit_hash)"
    ).fetchall()
    runs = con.execute(
        "SELECT u.kind, r.recognizer, r.n_mentions FROM runs r JOIN units u USING (unit_hash) "
        "WHERE u.kind = 'code' ORDER BY r.recognizer"
    ).fetchall()
    con.close()
    assert {(k, r) for k, r, _ in rows} == {
        ("prose", "quantities"),
        ("prose", "dates"),
        ("code", "identifiers"),  # a DOI is a DOI, even in a comment
    }
    assert [(r, n) for _, r, n in runs] == [("dates", 0), ("identifiers", 1), ("quantities", 0)]


def test_an_uninstalled_recognizer_is_listed_and_can_be_purged(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Cedar\n\nProject Cedar, doi:10.1000/xyz123.\n")
    index(root, registry=Registry([Words(), IdentifierRecognizer()]))
    idx = Index.for_root(root)
    now = Registry([IdentifierRecognizer()])  # words was uninstalled since
    (gone,) = [r for r in recognizers(idx, now) if not r.installed]
    assert (gone.name, gone.mentions) == ("words", 2)
    with pytest.raises(BadArgument, match="is installed and on"):
        purge(idx, ["identifiers"], now)
    assert purge(idx, ["words"], now) == {"words": 2}
    assert [r.name for r in recognizers(idx, now)] == ["identifiers"]
    con = duckdb.connect(str(idx.db), read_only=True)
    assert con.execute("SELECT count(*) FROM mentions WHERE recognizer = 'words'").fetchone() == (
        0,
    )
    con.close()
    with pytest.raises(BadArgument, match="no recognizer named 'words'"):
        purge(idx, ["words"], now)


def test_a_mention_in_the_overlap_of_two_windows_is_listed_once(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    words = " ".join(f"word{i}" for i in range(900))  # one paragraph: windowed, overlapping
    middle = words.split()
    middle.insert(360, "doi:10.1000/xyz123")  # inside the overlap of windows 1 and 2
    (root / "long.txt").write_text("Title\n\n" + " ".join(middle) + "\n")
    index(root, registry=Registry([IdentifierRecognizer()]))
    idx = Index.for_root(root)
    con = duckdb.connect(str(idx.db), read_only=True)
    (units,) = con.execute(
        "SELECT count(DISTINCT unit_hash) FROM mentions WHERE type = 'DOI'"
    ).fetchone()
    con.close()
    found = [m for m in mentions(idx, "long.txt") if m.type == "DOI"]
    assert units == 2 and len(found) == 1  # two windows hold it; the file has it once
