"""The gazetteer log is read again only when it changed since the store last matched it:
a writing command after a million imported entries would otherwise spend a minute
parsing it. Any change of the file (an edit that never committed, a hand edit, a copy)
still brings the store level with it."""

from __future__ import annotations

import json
import os

import pytest
from helpers import write_corpus

from kbx.entities import gazetteer
from kbx.indexing.ingest import index
from kbx.store import journal
from kbx.store.db import Index


@pytest.fixture
def idx(tmp_path) -> Index:
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    i = Index.for_root(root)
    gazetteer.add(i, "Cedar Holdings", "ORG", ["Cedar"], actor="test")
    return i


def test_a_log_the_store_matches_is_not_read(idx, monkeypatch):
    def unread(path):
        raise AssertionError("the log was read")

    monkeypatch.setattr(journal, "read", unread)
    with idx.writer() as con:
        assert journal.sync(con, idx.journal_path) == 0


def test_a_line_appended_by_hand_is_replayed(idx):
    with idx.writer() as con:
        (last,) = journal.rows_since(con, journal.last_seq(con) - 1)
    event = dict(last, seq=last["seq"] + 1, entry_id="gz:birch", action="add")
    event["data"] = {"name": "Birch", "type": "ORG", "aliases": []}
    with open(idx.journal_path, "a", encoding="utf-8") as f:
        f.write(json.dumps(event) + "\n")
    with idx.writer() as con:
        assert journal.sync(con, idx.journal_path) == 1
        assert con.execute("SELECT name FROM gazetteer WHERE entry_id = 'gz:birch'").fetchone()
        assert journal.sync(con, idx.journal_path) == 0  # level again: nothing more


def test_a_touched_log_is_read_and_found_level(idx, monkeypatch):
    st = os.stat(idx.journal_path)
    os.utime(idx.journal_path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    reads = []
    real = journal.read
    monkeypatch.setattr(journal, "read", lambda path: reads.append(path) or real(path))
    with idx.writer() as con:
        assert journal.sync(con, idx.journal_path) == 0
        assert journal.sync(con, idx.journal_path) == 0
    assert len(reads) == 1  # read once, then stamped
