"""A command that waits for another process's lock or file says so once, on stderr, after
half a second, naming the process; a shorter wait says nothing. The store logs the wait
(``kbx.store``), the command line prints it."""

from __future__ import annotations

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
from helpers import run_kbx

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
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print("open", flush=True)
time.sleep(float(sys.argv[2]))
"""
HOLD_THE_LOCK = """
import sys, time
from kbx import api
with api.Index.for_root(sys.argv[1]).writing("index"):
    print("open", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def holding(script: str, target: Path, *argv: str) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(target), "5", *argv], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline() == "open\n"
    return holder


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
    holder = holding(HOLD_THE_FILE, Index.for_root(indexed).db, "kbx", "serve")
    try:
        (indexed / "b.md").write_text("# B\n\nAnother note.\n")
        r = run_kbx("index", str(indexed))
    finally:
        holder.wait(30)
        holder.stdout.close()
    assert r.returncode == 0, r.stderr
    waits = [line for line in r.stderr.splitlines() if "waiting" in line]
    assert waits == [
        f"kbx: waiting for process {holder.pid} (kbx serve), which has the index open (up to 60 s)"
    ], r.stderr
    assert api.status(Index.for_root(indexed)).documents["ok"] == 2


def test_kbx_index_says_it_waits_for_the_command_holding_the_write_lock(indexed):
    holder = holding(HOLD_THE_LOCK, indexed)
    try:
        r = run_kbx("index", str(indexed))
    finally:
        holder.wait(30)
        holder.stdout.close()
    assert r.returncode == 0, r.stderr
    waits = [line for line in r.stderr.splitlines() if "waiting" in line]
    assert len(waits) == 1, r.stderr
    assert re.fullmatch(
        rf"kbx: waiting for kbx index \(pid {holder.pid}, since \d\d:\d\d:\d\d\), which is "
        r"writing this index \(up to 60 s\)",  # background work waits a minute
        waits[0],
    ), waits
