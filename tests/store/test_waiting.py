"""A command that waits for another process's lock or file says so once, on stderr, after
half a second, naming the process; a shorter wait says nothing. The store logs the wait
(``kbx.store``), the command line prints it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from inprocess import run_cli

from kbx import api
from kbx.store.db import Index


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def said() -> Iterator[list[str]]:
    """What the store says on its logger during the test."""
    log = logging.getLogger("kbx.store")
    handler, level = Lines(), log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def hold_lock(idx: Index, seconds: float) -> threading.Thread:
    """The write lock taken as another process would (its own open file), for ``seconds``."""
    idx.db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(idx.lock_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    holder = {"pid": 4321, "command": "index", "since": datetime(2024, 5, 6, 7, 8, 9)}
    os.write(fd, json.dumps(holder, default=str).encode())
    timer = threading.Timer(seconds, os.close, [fd])  # closing it releases the lock
    timer.start()
    return timer


def test_a_short_wait_says_nothing(tmp_path, said):
    idx = Index.for_root(tmp_path)
    held = hold_lock(idx, 0.2)
    with idx.writing("gazetteer edit", wait=5):
        pass
    held.join()
    assert said == []


def test_a_longer_wait_says_once_whom_it_waits_for(tmp_path, said):
    idx = Index.for_root(tmp_path)
    held = hold_lock(idx, 1.5)
    with idx.writing("gazetteer edit", wait=5):
        pass
    held.join()
    assert said == [
        "waiting for kbx index (pid 4321, since 07:08:09), which is writing this index (up to 5 s)"
    ]


HOLD_THE_FILE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print("open", flush=True)
sys.stdin.readline()
"""
HOLD_THE_LOCK = """
import sys
from kbx import api
with api.Index.for_root(sys.argv[1]).writing("index"):
    print("open", flush=True)
    sys.stdin.readline()
"""


class LetGo(logging.Handler):
    """Tells a holder to let go once the store has said it waits for it: the wait is as
    long as saying it takes, whatever the load, where a holder sleeping a fixed time made
    every such test last that time."""

    def __init__(self, holder: subprocess.Popen) -> None:
        super().__init__()
        self.holder = holder

    def emit(self, record: logging.LogRecord) -> None:
        if "waiting" in record.getMessage() and not self.holder.stdin.closed:
            self.holder.stdin.close()  # the holder's readline ends: it exits


@contextlib.contextmanager
def holding(script: str, target: Path, *argv: str) -> Iterator[subprocess.Popen]:
    """Another process holding ``target`` (``script``) until this one says it waits for it
    (or for 30 s at most)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(target), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    log = logging.getLogger("kbx.store")
    let_go = LetGo(holder)
    log.addHandler(let_go)
    timer = threading.Timer(30, lambda: holder.stdin.closed or holder.stdin.close())
    try:
        assert holder.stdout.readline() == "open\n"
        timer.start()
        yield holder
    finally:
        timer.cancel()
        log.removeHandler(let_go)
        if not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(30)
        holder.stdout.close()


@pytest.fixture
def indexed(tmp_path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    (root / "a.md").write_text("# A\n\nA note.\n")
    api.index(root)
    return root


def test_kbx_index_says_it_waits_for_the_process_that_has_the_index_open(indexed):
    """The holder's command line names it as ``kbx serve`` would be named (Linux's
    /proc/PID/cmdline): that is how the message says which process it is."""
    with holding(HOLD_THE_FILE, Index.for_root(indexed).db, "kbx", "serve") as holder:
        (indexed / "b.md").write_text("# B\n\nAnother note.\n")
        r = run_cli("index", str(indexed))
    assert r.returncode == 0, r.stderr
    waits = [line for line in r.stderr.splitlines() if "waiting" in line]
    assert waits == [
        f"kbx: waiting for process {holder.pid} (kbx serve), which has the index open (up to 60 s)"
    ], r.stderr
    assert api.status(Index.for_root(indexed)).documents["ok"] == 2


def test_kbx_index_says_it_waits_for_the_command_holding_the_write_lock(indexed):
    with holding(HOLD_THE_LOCK, indexed) as holder:
        r = run_cli("index", str(indexed))
    assert r.returncode == 0, r.stderr
    waits = [line for line in r.stderr.splitlines() if "waiting" in line]
    assert len(waits) == 1, r.stderr
    assert re.fullmatch(
        rf"kbx: waiting for kbx index \(pid {holder.pid}, since \d\d:\d\d:\d\d\), which is "
        r"writing this index \(up to 60 s\)",  # background work waits a minute
        waits[0],
    ), waits
