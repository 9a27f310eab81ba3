"""Crashes and concurrency: a killed index run completes next time; readers wait or say busy."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import duckdb
import pytest

from kbx.errors import IndexBusy, SchemaError
from kbx.indexing import ingest
from kbx.indexing.ingest import index
from kbx.search.status import status
from kbx.store.db import Index, connect

FORK = multiprocessing.get_context("fork")


def _many(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"doc{i:02}.md").write_text(f"# Doc {i}\n\nShared paragraph.\n\nOwn text {i}.\n")
    return root


def _check_consistent(db: Path, n_docs: int) -> None:
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute(
            "SELECT count(*), count(*) FILTER (status = 'ok') FROM documents"
        ).fetchone() == (n_docs, n_docs)
        assert con.execute(
            "SELECT count(*) FROM documents d WHERE n_units != "
            "(SELECT count(*) FROM placements p WHERE p.doc_id = d.doc_id)"
        ).fetchone() == (0,)
        assert con.execute("SELECT count(*) - count(DISTINCT unit_hash) FROM units").fetchone() == (
            0,
        )
        assert con.execute(
            "SELECT count(*) FROM units ANTI JOIN placements USING (unit_id)"
        ).fetchone() == (0,)
    finally:
        con.close()


def _index_killed_in_the_third_batch(root: Path) -> None:
    """Index in batches of five, killed (SIGKILL) with the third batch's units and placements
    written and its transaction not committed: run in a forked child."""
    ingest.BATCH_DOCS = 5
    calls = []
    real = ingest._write_units

    def dying(con, docs):
        n = real(con, docs)
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    ingest._write_units = dying
    ingest.index(root, workers=1)


def test_kill_9_mid_transaction_then_the_next_run_completes(tmp_path):
    root = _many(tmp_path / "docs", 30)
    child = FORK.Process(target=_index_killed_in_the_third_batch, args=(root,))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL
    db = Index.for_root(root).db
    con = duckdb.connect(str(db), read_only=True)
    committed = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    con.close()
    assert committed == 10  # two batches committed, the third rolled back
    r = index(root)
    assert (r.new, r.unchanged) == (20, 10)
    _check_consistent(db, 30)


def _hold(db: Path, seconds: float) -> multiprocessing.Process:
    """A forked child holding ``db`` open for writing for ``seconds``, once it has it."""
    locked = FORK.Event()

    def hold():
        con = duckdb.connect(str(db))
        locked.set()
        time.sleep(seconds)
        con.close()

    p = FORK.Process(target=hold)
    p.start()
    assert locked.wait(60)
    return p


def test_reader_waits_for_a_short_writer(indexed_corpus):
    corpus = indexed_corpus
    idx = Index.for_root(corpus)
    holder = _hold(idx.db, 1.0)
    started = time.monotonic()
    s = status(idx)
    assert s.documents == {"ok": 5}
    assert time.monotonic() - started > 0.3  # it waited rather than failing
    holder.join()


def test_reader_says_busy_when_the_writer_stays(indexed_corpus):
    corpus = indexed_corpus
    idx = Index.for_root(corpus)
    holder = _hold(idx.db, 5.0)
    busy = pytest.raises(IndexBusy, match=r"the index is busy: process \d+ .* is writing")
    with busy, connect(idx.db, read_only=True, wait=0.5):
        pass
    holder.kill()
    holder.join()


def test_a_newer_schema_and_a_foreign_file_are_refused(tmp_path, indexed_corpus):
    corpus = indexed_corpus
    db = Index.for_root(corpus).db
    con = duckdb.connect(str(db))
    con.execute("UPDATE kbx_meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(SchemaError, match="schema version 99, newer than this kbx"):
        index(corpus)
    foreign = tmp_path / "other.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(SchemaError, match="not a kbx index"):
        index(corpus, foreign)
