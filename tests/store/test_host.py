"""The process's one DuckDB instance: index files attached to it while open, detached after."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import threading

import duckdb
import pytest

from kbx.errors import BadArgument, IndexBusy, SchemaError
from kbx.store import db
from kbx.store.db import Index, connect


def _attached(under) -> list[str]:
    """The files under ``under`` attached to this process's instance now."""
    host = db._HOST.con
    if host is None:
        return []
    rows = host.execute("SELECT path FROM duckdb_databases() WHERE path IS NOT NULL").fetchall()
    return [r[0] for r in rows if r[0].startswith(str(under))]


def _opens_read_write(path) -> str:
    """Whether another process can open ``path`` for writing now."""
    code = "import duckdb, sys; duckdb.connect(sys.argv[1]).close(); print('ok')"
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def test_two_indexes_are_two_attachments_of_one_instance_and_closing_detaches(tmp_path):
    a, b = Index.for_root(tmp_path / "a"), Index.for_root(tmp_path / "b")
    with a.writer() as ca, b.writer() as cb:
        ca.execute("CREATE TABLE t AS SELECT 1 AS x")
        cb.execute("CREATE TABLE t AS SELECT 2 AS x")
        assert sorted(_attached(tmp_path)) == sorted([str(a.db), str(b.db)])
        # Each cursor reads its own file under the same table name.
        assert ca.execute("SELECT x FROM t").fetchone() == (1,)
        assert cb.execute("SELECT x FROM t").fetchone() == (2,)
        assert db.cursor(ca).execute("SELECT x FROM t").fetchone() == (1,)
    assert _attached(tmp_path) == []
    # Detached means let go: another process writes it, and the log was checkpointed.
    assert _opens_read_write(a.db) == "ok"
    assert not a.db.with_name(a.db.name + ".wal").exists()


def test_a_reader_beside_this_process_writer_shares_its_attachment(tmp_path):
    idx = Index.for_root(tmp_path)
    with idx.writer() as w:
        w.execute("CREATE TABLE t (x INT)")
        w.execute("INSERT INTO t VALUES (1)")
        with idx.reader() as r:
            assert r.execute("SELECT count(*) FROM t").fetchone() == (1,)
            w.execute("INSERT INTO t VALUES (2)")
            assert r.execute("SELECT count(*) FROM t").fetchone() == (2,)
        assert _attached(tmp_path) == [str(idx.db)]  # the reader's close left the writer's file
        assert w.execute("SELECT count(*) FROM t").fetchone() == (2,)
    assert _attached(tmp_path) == []


def test_a_writer_waits_for_this_process_reader_and_says_busy_at_its_deadline(tmp_path):
    idx = Index.for_root(tmp_path)
    with idx.writer():
        pass
    busy = pytest.raises(IndexBusy, match="this process reads it")
    with idx.reader(), busy, connect(idx.db, read_only=False, wait=0.2):
        pass
    with idx.reader() as r:  # another thread lets the file go: the writer gets it
        got = []
        t = threading.Thread(target=lambda: got.append(_write_once(idx)))
        t.start()
        r.execute("SELECT 1").fetchone()
    t.join(10)
    assert got == [1]


def _write_once(idx: Index) -> int:
    with idx.writer() as w:
        return w.execute("SELECT 1").fetchone()[0]


def test_a_failed_attach_leaves_nothing_attached(tmp_path):
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database" * 100)
    with pytest.raises(SchemaError, match="not a valid DuckDB database"), connect(junk, True):
        pass
    assert _attached(tmp_path) == []


def _child(path: str, out) -> None:
    with connect(db.Path(path), read_only=True) as con:
        out.put(con.execute("SELECT count(*) FROM t").fetchone()[0])


def test_a_forked_child_opens_its_own_instance(tmp_path):
    idx = Index.for_root(tmp_path)
    with idx.writer() as w:
        w.execute("CREATE TABLE t AS SELECT range AS x FROM range(3)")
    with idx.reader():  # the parent's instance is live, with the file attached
        parent = db._HOST.con
        fork = multiprocessing.get_context("fork")
        out = fork.Queue()
        child = fork.Process(target=_child, args=(str(idx.db), out))
        child.start()
        assert out.get(timeout=20) == 3
        child.join(20)
        assert child.exitcode == 0
        assert db._HOST.con is parent


def test_spills_never_go_to_the_working_folder(tmp_path):
    idx = Index.for_root(tmp_path)
    with idx.writer() as con:
        where = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
    assert where.startswith(db.tempfile.gettempdir())
    assert isinstance(db._HOST.con, duckdb.DuckDBPyConnection)


@pytest.mark.parametrize("value", ["3", "0", ""])
def test_kbx_duckdb_threads_sets_the_instances_threads(tmp_path, monkeypatch, value):
    monkeypatch.setenv("KBX_DUCKDB_THREADS", value)
    host = db._Host()
    cur = host.open(tmp_path / "index.duckdb", read_only=False)
    try:
        threads = cur.execute("SELECT current_setting('threads')").fetchone()[0]
    finally:
        host.close(tmp_path / "index.duckdb", cur)
        host.con.close()
    default = duckdb.connect(":memory:").execute("SELECT current_setting('threads')").fetchone()
    assert threads == (int(value) if value.strip("0") else default[0])


def test_kbx_duckdb_threads_not_a_number_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KBX_DUCKDB_THREADS", "two")
    with pytest.raises(BadArgument, match="KBX_DUCKDB_THREADS must be a whole number"):
        db._Host().open(tmp_path / "index.duckdb", read_only=False)
