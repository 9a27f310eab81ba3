"""Reprocessing: only stale runs, only the chosen recognizer, atomic per batch, resumable."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path

import duckdb
import pytest
from helpers import Words, attached, copy_index, die_at
from inprocess import run_cli

from kbx.annotate import run as recognize_module
from kbx.annotate.plan import plan
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.status import status
from kbx.store.db import Index

N_DOCS = 40
BATCH = 5


def _corpus(root: Path) -> Path:
    """Forty one-unit documents; every one mentions cedar twice, one has a DOI."""
    root.mkdir()
    for i in range(N_DOCS):
        (root / f"doc{i:02}.md").write_text(
            f"# Doc {i}\n\nCedar note {i}: the cedar grove, row {i * 7}.\n"
            + ("\nSee doi:10.1145/1629575.1629596.\n" if i == 3 else "")
        )
    return root


def _q(root: Path, sql: str, params=()):
    with attached(Index.for_root(root).db) as con:
        return con.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """The corpus indexed once per module, with words 1 and identifiers in batches of five."""
    root = _corpus(tmp_path_factory.mktemp("template") / "docs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(recognize_module, "BATCH_UNITS", BATCH)
        index(root, registry=Registry([Words("1"), IdentifierRecognizer()]))
    return root


@pytest.fixture
def indexed(template, tmp_path, monkeypatch):
    """A copy of the template, with passes in batches of five."""
    monkeypatch.setattr(recognize_module, "BATCH_UNITS", BATCH)
    return copy_index(template, tmp_path / "docs").root


def test_a_bump_is_planned_then_redone_for_that_recognizer_only(indexed):
    idx = Index.for_root(indexed)
    ids_before = _q(indexed, "SELECT unit_hash, ran_at FROM runs WHERE recognizer = 'identifiers'")
    id_mentions = _q(indexed, "SELECT count(*) FROM mentions WHERE recognizer = 'identifiers'")
    bumped = Registry([Words("2"), IdentifierRecognizer()])
    (ids, words) = plan(idx, bumped)  # in name order
    assert (words.stale, words.missing, words.current, words.todo) == (N_DOCS, 0, 0, N_DOCS)
    assert ids.todo == 0 and ids.current == N_DOCS
    assert words.estimate_s is not None and words.estimate_s > 0
    (row,) = [r for r in status(idx, bumped).recognizers if r["name"] == "words"]
    assert row["stale"] == N_DOCS

    report = reprocess(idx, bumped, ["words"])
    (done,) = report.done
    assert (done.units, done.mentions, done.removed) == (N_DOCS, 2 * N_DOCS, 2 * N_DOCS)
    assert _q(indexed, "SELECT DISTINCT version FROM mentions WHERE recognizer = 'words'") == [
        ("2",)
    ]
    assert _q(indexed, "SELECT DISTINCT version FROM runs WHERE recognizer = 'words'") == [("2",)]
    # the other recognizer's runs and mentions are exactly as they were
    assert (
        _q(indexed, "SELECT unit_hash, ran_at FROM runs WHERE recognizer = 'identifiers'")
        == ids_before
    )
    assert (
        _q(indexed, "SELECT count(*) FROM mentions WHERE recognizer = 'identifiers'") == id_mentions
    )
    assert all(r.todo == 0 for r in plan(idx, bumped))


def test_a_dry_run_changes_nothing(indexed):
    idx = Index.for_root(indexed)
    before = _q(indexed, "SELECT * FROM runs ORDER BY ALL")
    report = reprocess(idx, Registry([Words("2")]), dry_run=True)
    assert report.plan[0].todo == N_DOCS and report.done == []
    assert _q(indexed, "SELECT * FROM runs ORDER BY ALL") == before


def test_a_failing_unit_is_listed_and_retried_next_run(indexed):
    idx = Index.for_root(indexed)
    report = reprocess(idx, Registry([Words("2", fail_on="note 17:")]))
    (done,) = report.done
    assert done.units == N_DOCS and len(done.failures) == 1
    assert "cannot read this one" in done.failures[0][1]
    (row,) = plan(idx, Registry([Words("2")]))
    assert (row.failed, row.todo) == (1, 1)
    fixed = Words("2")
    reprocess(idx, Registry([fixed]))
    assert fixed.calls == 1


def test_all_redoes_current_runs(indexed):
    idx = Index.for_root(indexed)
    (row,) = plan(idx, Registry([Words("1")]), redo_all=True)
    assert (row.current, row.forced) == (0, N_DOCS)
    again = Words("1")
    reprocess(idx, Registry([again]), redo_all=True)
    assert again.calls == N_DOCS
    assert plan(idx, Registry([again]))[0].todo == 0


def test_two_workers_give_the_same_mentions_as_one(tmp_path, monkeypatch):
    monkeypatch.setattr(recognize_module, "BATCH_UNITS", BATCH)
    monkeypatch.setattr("kbx.annotate.plan.BATCH_UNITS", BATCH)
    results = []
    built = _corpus(tmp_path / "built")
    index(built, registry=Registry([Words("1")]), workers=1)
    for n in (1, 2):  # the same index, each reprocessed by n workers
        root = copy_index(built, tmp_path / f"w{n}").root
        reprocess(Index.for_root(root), Registry([Words("2")]), workers=n)
        results.append(
            _q(root, "SELECT unit_hash, start_char, end_char, version FROM mentions ORDER BY ALL")
        )
    assert results[0] == results[1] and len(results[0]) == 2 * N_DOCS


def _killed(root: Path, where: str, mode: str = "bump") -> None:
    """A forked child reprocesses with a bumped version (or all, forced) and kills itself
    with SIGKILL: after the third batch commits ("after"), or inside the third batch's
    transaction, its old mentions already deleted ("inside")."""

    def child():
        recognize_module.BATCH_UNITS = BATCH
        calls = []
        real_insert, real_write = recognize_module._insert, recognize_module._write

        def insert(con, table, rows):
            real_insert(con, table, rows)
            if where == "inside" and table == "mentions" and len(calls) == 2:
                os.kill(os.getpid(), signal.SIGKILL)

        def write(con, results):
            n = real_write(con, results)
            calls.append(1)
            if where == "after" and len(calls) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            return n

        recognize_module._insert, recognize_module._write = insert, write
        forced = mode == "all"
        words = Words("1" if forced else "2")
        reprocess(Index.for_root(root), Registry([words]), redo_all=forced)

    p = multiprocessing.get_context("fork").Process(target=child)
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL


def test_a_killed_pass_resumes_without_redoing_a_finished_batch(indexed):
    _killed(indexed, "after")
    assert _q(
        indexed,
        "SELECT version, count(*) FROM runs WHERE recognizer = 'words' GROUP BY 1 ORDER BY 1",
    ) == [
        ("1", N_DOCS - 3 * BATCH),
        ("2", 3 * BATCH),
    ]
    rest = Words("2")
    report = reprocess(Index.for_root(indexed), Registry([rest]))
    assert rest.calls == N_DOCS - 3 * BATCH
    assert report.done[0].removed == 2 * (N_DOCS - 3 * BATCH)
    assert _q(
        indexed, "SELECT version, count(*) FROM mentions WHERE recognizer = 'words' GROUP BY 1"
    ) == [("2", 2 * N_DOCS)]


def test_a_kill_inside_a_batch_leaves_its_units_with_their_old_mentions(indexed):
    _killed(indexed, "inside")
    # the two committed batches are new; every other unit keeps both old mentions
    per_unit = _q(
        indexed,
        "SELECT version, count(*) FROM mentions WHERE recognizer = 'words' "
        "GROUP BY unit_hash, version ORDER BY ALL",
    )
    assert sorted(set(per_unit)) == [("1", 2), ("2", 2)]
    assert sum(1 for v, _ in per_unit if v == "2") == 2 * BATCH
    assert len(per_unit) == N_DOCS  # no unit lost its mentions, none has both versions


def test_an_interrupted_forced_pass_continues_on_the_next_run(indexed):
    _killed(indexed, "after", "all")
    idx = Index.for_root(indexed)
    (row,) = plan(idx, Registry([Words("1")]))  # no --all: the pending pass still counts
    assert (row.forced, row.current) == (N_DOCS - 3 * BATCH, 3 * BATCH)
    rest = Words("1")
    reprocess(idx, Registry([rest]))
    assert rest.calls == N_DOCS - 3 * BATCH
    assert plan(idx, Registry([Words("1")]))[0].todo == 0  # the pass is finished


def test_readers_see_whole_units_while_a_pass_runs(indexed):
    fork = multiprocessing.get_context("fork")
    started = fork.Event()

    def slow_pass():  # a forked child, reprocessing in batches of two
        recognize_module.BATCH_UNITS = 2
        started.set()
        reprocess(Index.for_root(indexed), Registry([Words("2", delay=0.05)]))

    child = fork.Process(target=slow_pass)
    child.start()
    assert started.wait(60)
    db = str(Index.for_root(indexed).db)
    answered, busy = 0, 0
    while child.is_alive():
        try:
            con = duckdb.connect(db, read_only=True)
        except duckdb.IOException:
            busy += 1
            time.sleep(0.01)
            continue
        try:
            rows = con.execute(
                "SELECT unit_hash, list(DISTINCT version), count(*) FROM mentions "
                "WHERE recognizer = 'words' GROUP BY 1"
            ).fetchall()
        finally:
            con.close()
        answered += 1
        assert len(rows) == N_DOCS
        assert all(len(versions) == 1 and n == 2 for _, versions, n in rows)
    child.join()
    assert child.exitcode == 0
    assert answered > 0
    found = run_cli("search", "cedar grove", "--json", cwd=indexed)
    assert found.returncode == 0 and json.loads(found.stdout)["hits"]


def test_the_command_plans_runs_and_reports(indexed):
    dry = run_cli("reprocess", "--dry-run", "--json", cwd=indexed)
    assert dry.returncode == 0, dry.stderr
    body = json.loads(dry.stdout)
    assert body["dry_run"] and body["done"] == []
    assert {p["name"] for p in body["plan"]} >= {"identifiers", "dates"}
    ran = run_cli("reprocess", "-r", "identifiers", "--all", cwd=indexed)
    assert ran.returncode == 0, ran.stderr
    assert (
        f"identifiers: {N_DOCS} units" in ran.stdout and "1 mentions added, 1 removed" in ran.stdout
    )
    unknown = run_cli("reprocess", "-r", "nope", cwd=indexed)
    assert unknown.returncode == 2 and "no recognizer named 'nope'" in unknown.stderr


def test_a_batch_of_a_superseded_version_is_not_written(indexed):
    from datetime import datetime

    con = duckdb.connect(str(Index.for_root(indexed).db))
    try:
        con.execute("UPDATE recognizer_info SET version = '9' WHERE name = 'words'")
        (h,) = con.execute("SELECT unit_hash FROM units LIMIT 1").fetchone()
        before = con.execute("SELECT count(*) FROM runs WHERE recognizer = 'words'").fetchone()
        with pytest.raises(recognize_module.Superseded, match="words 9 replaced 1"):
            recognize_module._write(
                con, {"words": ([], [(h, "words", "1", 0, None, datetime.now())])}
            )
        after = con.execute("SELECT count(*) FROM runs WHERE recognizer = 'words'").fetchone()
        assert after == before  # rolled back: the newer runs stand
    finally:
        con.close()


def test_the_counts_a_pass_starts_from_are_the_units_it_lists(indexed):
    """``lacking`` counts what ``missing`` lists, one statement for every recognizer: after
    an index, for a new version, past a redo time, with a failed run, and beside the run of
    a unit no longer stored."""
    idx = Index.for_root(indexed)
    recognizers = [Words("2"), IdentifierRecognizer()]  # words 1 ran: 2 is a new version

    def both(redo=None):
        with idx.writer() as con:
            counted = recognize_module.lacking(con, recognizers, redo)
            listed = {
                r.info.name: len(
                    recognize_module.missing(con, r, redo_from=(redo or {}).get(r.info.name))
                )
                for r in recognizers
            }
        return counted, listed

    counted, listed = both()
    assert counted == listed == {"words": N_DOCS, "identifiers": 0}
    with idx.writer() as con:
        con.execute(
            "UPDATE runs SET error = 'boom' WHERE recognizer = 'identifiers' AND unit_hash = "
            "(SELECT min(unit_hash) FROM runs)"
        )
        con.execute(
            "INSERT INTO runs SELECT 'gone', recognizer, version, 0, NULL, ran_at FROM runs "
            "WHERE recognizer = 'identifiers' LIMIT 1"
        )
        (when,) = con.execute("SELECT max(ran_at) FROM runs").fetchone()
    counted, listed = both()
    assert counted == listed and listed["identifiers"] == 1
    counted, listed = both({"identifiers": when})  # runs before this count as missing
    assert counted == listed and listed["identifiers"] >= N_DOCS - 1


def test_a_small_pass_commits_every_recognizer_at_once(indexed, monkeypatch):
    """Killed after its first commit, a pass whose recognizers each have one batch has
    written all of them: their runs and mentions went in one transaction."""
    idx = Index.for_root(indexed)
    monkeypatch.setattr(recognize_module, "BATCH_UNITS", N_DOCS)  # each one's work: one batch
    ((before,),) = _q(indexed, "SELECT max(ran_at) FROM runs")

    def forced():
        reprocess(idx, Registry([Words("2"), IdentifierRecognizer()]), redo_all=True)

    assert die_at("recognize.batch:1", forced) == 137
    ran = "SELECT recognizer, version, count(*) FROM runs WHERE ran_at > ? GROUP BY ALL ORDER BY 1"
    ids = IdentifierRecognizer().info.version
    assert _q(indexed, ran, [before]) == [("identifiers", ids, N_DOCS), ("words", "2", N_DOCS)]
    assert _q(indexed, "SELECT count(*) FROM runs") == [(2 * N_DOCS,)]  # no old run is left
    added = _q(
        indexed, "SELECT count(*) FROM mentions WHERE recognizer = 'words' AND version = '2'"
    )
    assert added == [(2 * N_DOCS,)]
