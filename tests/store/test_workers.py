"""Readers under budgets: a file that hangs, eats memory or kills its reader is a failed
file, the run goes on; workers die with their parent; what is opened is checked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import own_group

from kbx.indexing import read
from kbx.indexing.ingest import index
from kbx.search.search import search
from kbx.source.walk import Found
from kbx.store import workers
from kbx.store.db import Index


def _slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


def _die(code: int) -> str:
    os._exit(code)


def _failed(job: tuple, why: str) -> str:
    return f"failed: {why}"


def _within_budget(seconds: float) -> str:
    try:
        return workers.timed(_slow, seconds)
    except workers.OverBudget as e:
        return f"failed: {e}"


def _die_on_one(x: float) -> str:
    return _die(1) if x == 1 else _slow(x)


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    return root


def test_a_job_past_its_time_budget_fails_and_the_rest_go_on(monkeypatch):
    monkeypatch.setattr(workers, "FILE_SECONDS", 1)
    got = list(workers.each_in_order(_within_budget, [(0,), (5,), (0,)], 2, _failed))
    assert got[0] == got[2] == "done"
    assert "time budget (1 s)" in str(got[1])


def test_a_job_that_kills_its_worker_is_retried_alone_then_recorded(monkeypatch):
    jobs = [(0.0,), (1,), (0.0,), (0.0,)]
    got = list(workers.each_in_order(_die_on_one, jobs, 2, _failed))
    assert got[0] == got[2] == got[3] == "done"
    assert got[1].startswith("failed: its reader process died")


@pytest.mark.parametrize("plain_hangs", [False, True])
def test_a_hanging_file_is_read_as_text_or_recorded_and_the_others_are_indexed(
    tmp_path, monkeypatch, plain_hangs
):
    """A file its parser takes past the time budget is read again as plain text within a
    budget of its own; one that hangs even so is recorded as failed."""
    root = _folder(tmp_path)
    (root / "good.md").write_text("# Good\n\nPlain words here.\n")
    (root / "slow.md").write_text("# Slow\n\nThis one hangs the parser.\n")
    monkeypatch.setattr(workers, "FILE_SECONDS", 1)
    real = read.extract

    def stuck(rel, data, plain=False, limit=None):
        if rel == "slow.md" and (plain_hangs or not plain):
            time.sleep(30)
        return real(rel, data, plain, limit)

    monkeypatch.setattr(read, "extract", stuck)
    report = index(root, workers=1)
    over = "took longer than the time budget (1 s)"
    if plain_hangs:
        assert (report.new, report.failed) == (1, 1)
        assert report.failures == [{"path": "slow.md", "status": "failed", "error": over}]
        return
    assert (report.new, report.failed) == (2, 0)
    note = f"read as plain text, markup and all ({over})"
    assert report.failures == [{"path": "slow.md", "status": "ok", "error": note}]
    [hit] = search(Index.for_root(root), "hangs").hits
    lines = (root / "slow.md").read_text().split("\n")[hit.start_line - 1 : hit.end_line]
    assert hit.path == "slow.md" and any("hangs" in line for line in lines)


def test_a_file_whose_parser_hangs_in_native_code_is_read_as_text_in_a_fresh_worker(
    tmp_path, monkeypatch
):
    """A parser stuck in C or Rust code never returns to Python, so its alarm never fires:
    its worker is killed (twice: once beside the others, once alone), and a fresh worker
    reads the file as plain text."""
    root = _folder(tmp_path)
    (root / "good.md").write_text("# Good\n\nPlain words here.\n")
    (root / "native.md").write_text("# Native\n\nThis one hangs where no alarm reaches.\n")
    monkeypatch.setattr(workers, "FILE_SECONDS", 1)
    monkeypatch.setattr(workers, "GRACE_SECONDS", 0)
    real = read.extract

    def stuck(rel, data, plain=False, limit=None):
        if rel == "native.md" and not plain:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)  # as native code: the alarm is lost
            time.sleep(30)
        return real(rel, data, plain, limit)

    monkeypatch.setattr(read, "extract", stuck)
    report = index(root, workers=1)
    note = "read as plain text, markup and all (took longer than the time budget (1 s))"
    assert (report.new, report.failed) == (2, 0)
    assert report.failures == [{"path": "native.md", "status": "ok", "error": note}]
    assert [h.path for h in search(Index.for_root(root), "alarm reaches").hits] == ["native.md"]


def test_a_fifo_is_not_read_and_never_blocks(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    os.mkfifo(root / "pipe.md")
    out = read.read_one(str(root), Found("pipe.md", 0, 0), None, 10**6, None)
    assert out.status == "skipped" and out.error == "not a regular file"


def test_a_symlink_swapped_in_after_the_walk_is_not_followed_out(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nOutside the root.\n")
    (root / "note.md").write_text("# Note\n\nInside.\n")
    walked = Found("note.md", 20, 0)
    (root / "note.md").unlink()
    (root / "note.md").symlink_to(secret)  # swapped after the walk, before the open
    out = read.read_one(str(root), walked, None, 10**6, None)
    assert out.document is None and "leads outside the indexed folder" in out.error


def test_workers_die_with_their_parent(tmp_path):
    pids = tmp_path / "pids"
    script = textwrap.dedent(
        f"""
        import os, time
        from kbx.store.workers import pool
        with pool(2) as p:
            got = list(p.map(os.getpid, [], ))
            futures = [p.submit(time.sleep, 60) for _ in range(2)]
            time.sleep(1)
            open({str(pids)!r}, "w").write(" ".join(map(str, p._processes)))
            time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(100):
            if pids.exists() and pids.read_text():
                break
            time.sleep(0.1)
        children = [int(p) for p in pids.read_text().split()]
        assert len(children) == 2
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(50):
            alive = [c for c in children if _alive(c)]
            if not alive:
                break
            time.sleep(0.1)
        assert alive == []
    finally:
        parent.kill()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for init to reap it is dead too
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("budget", [256 * 1024**2])
def test_a_file_over_the_memory_budget_fails_alone(tmp_path, monkeypatch, budget):
    monkeypatch.setattr(workers, "FILE_MEMORY", budget)
    real = read.extract

    def greedy(rel, data, plain=False, limit=None):
        if rel == "big.md":
            _ = bytearray(2 * budget)
        return real(rel, data, plain, limit)

    monkeypatch.setattr(read, "extract", greedy)
    root = _folder(tmp_path)
    (root / "big.md").write_text("# Big\n\nAsks for too much.\n")
    (root / "small.md").write_text("# Small\n\nFine.\n")
    report = index(root, workers=1)
    assert report.new == 1
    assert report.failures == [
        {"path": "big.md", "status": "failed", "error": "over the memory budget for one file"}
    ]


def test_a_pool_kills_its_own_stuck_workers_and_no_others():
    """``kill`` finds its workers by the processes its own context made, not the executor's
    private table: a worker stuck where no alarm reaches is gone, another pool's is not."""
    import multiprocessing

    stuck, other = workers.pool(1), workers.pool(1)
    try:
        assert other.submit(_slow, 0).result() == "done"
        theirs = {c.pid for c in multiprocessing.active_children()}
        stuck.submit(_slow, 30)
        time.sleep(0.5)
        mine = {c.pid for c in multiprocessing.active_children()} - theirs
        assert len(mine) == 1
        stuck.kill()
        time.sleep(0.5)
        alive = {c.pid for c in multiprocessing.active_children()}
        assert not mine & alive and theirs <= alive
        assert other.submit(_slow, 0).result() == "done"
    finally:
        other.shutdown()
        stuck.shutdown()


_INTERRUPTED_POOL = """
import sys
from kbx.store.workers import pool
def big(i):
    return b"x" * (4 << 20)  # past a pipe's buffer: the worker is often mid-write
try:
    with pool(1, budgets=True) as p:
        for i in range(100000):
            p.submit(big, i).result()
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.3, 0.6, 0.9, 1.2])
def test_ctrl_c_to_the_process_group_never_leaves_a_pool_hanging(delay):
    """A terminal's Ctrl-C reaches the workers too. One interrupted while it wrote a large
    result left a message cut short, that the executor's thread read forever, and this
    process waited on that thread at exit (a hang in about half of the tries): workers
    ignore Ctrl-C, and an interrupted pool is killed rather than waited on. At 0 s the
    interrupt lands while the pool starts (forks)."""
    with own_group([sys.executable, "-c", _INTERRUPTED_POOL]) as child:
        time.sleep(0.5 + delay)  # the interpreter's start, then the pool's
        os.killpg(child.pid, signal.SIGINT)
        _, err = child.communicate(timeout=15)
    assert child.returncode == 130, err
    assert "Traceback" not in err


def _small(n: int) -> bytes:
    return b"x" * n


def test_a_pool_killed_while_its_thread_takes_results_raises_nothing_in_that_thread(
    monkeypatch,
):
    """``kill`` closed the results queue under the executor's thread: one that had just
    taken a result went round to wait on it again and raised "handle is closed" (a
    traceback under a Ctrl-C'd `kbx index`, about one kill in eight here). It now closes
    only this process's end for writing and lets the thread end first."""
    raised: list[str] = []
    monkeypatch.setattr("threading.excepthook", lambda a: raised.append(repr(a.exc_value)))
    for i in range(60):
        p = workers.pool(2)
        for _ in range(400):
            p.submit(_small, 100_000)
        time.sleep(0.0005 * (i % 40))
        p.kill()
    assert raised == []
