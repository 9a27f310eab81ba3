"""The warm index: readers share one connection, go on during a write of this process on
cursors of the write's own connection (seeing each document whole), and the file is let
go after ``HOLD`` seconds, and during a write whenever another process asks for it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
from helpers import run_kbx

from kbx import api
from kbx.serve import live
from kbx.serve.live import LiveIndex

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
VERSIONS = ("kestrelver", "ospreyver")
DOCS, SECTIONS = 40, 10


def test_a_write_starts_once_the_reads_in_flight_are_done(docs):
    idx = LiveIndex.of(api.Index.for_root(docs))
    order: list[str] = []
    reading, writing = threading.Event(), threading.Event()

    def reader() -> None:
        with idx.reader() as con:
            reading.set()
            time.sleep(0.3)
            order.append(f"read {con.execute('SELECT count(*) FROM units').fetchone()[0]}")

    def write() -> str:
        writing.set()
        order.append("write")
        return "done"

    first = threading.Thread(target=reader)
    first.start()
    reading.wait()
    assert idx.write(write) == "done"  # it let the read-only connection go: after the read
    first.join()
    assert order == ["read 3", "write"]
    assert api.status(idx).units == 3  # and reading resumes after it
    idx.close()


def test_a_write_waits_for_the_last_read_not_for_the_connection_to_expire(docs, monkeypatch):
    """The last read in flight wakes a waiting write as it ends: before, the write slept until
    the connection's ``HOLD`` ran out (up to a second of every save under a polling client)."""
    monkeypatch.setattr(live, "HOLD", 600.0)  # the timer never lets the write in here
    idx = LiveIndex.of(api.Index.for_root(docs))
    reading, release = threading.Event(), threading.Event()

    def reader() -> None:
        with idx.reader() as con:
            reading.set()
            release.wait()
            con.execute("SELECT 1").fetchone()

    first = threading.Thread(target=reader)
    first.start()
    reading.wait()
    done = threading.Event()
    writer = threading.Thread(target=lambda: idx.write(done.set))
    writer.start()
    time.sleep(0.2)
    assert not done.is_set()  # the read is still in flight
    release.set()
    writer.join(timeout=30)
    assert done.is_set()
    first.join()
    idx.close()


def test_the_file_is_let_go_after_hold_seconds_even_inside_a_read(docs):
    idx = LiveIndex.of(api.Index.for_root(docs))
    with idx.reader() as con:
        time.sleep(live.HOLD + 0.3)  # it expires while held: kept until this read ends
        with idx.reader() as inner:  # and a read inside it does not wait for itself
            assert inner.execute("SELECT 1").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM units").fetchone()[0] == 3
    writer = duckdb.connect(str(idx.db))  # read-write: only possible once it is let go
    writer.close()
    with idx.reader() as con:  # and reading resumes on a fresh connection
        assert con.execute("SELECT count(*) FROM units").fetchone()[0] == 3
    idx.close()


def ledger(word: str, n: int) -> str:
    return "".join(f"# Part {i}\n\n{word} section {i} of ledger {n}.\n\n" for i in range(SECTIONS))


def folder(root: Path) -> Path:
    """DOCS documents of SECTIONS passages each, every passage naming the first version."""
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    for i in range(DOCS):
        (root / f"ledger{i:02}.md").write_text(ledger(VERSIONS[0], i))
    api.index(root)
    for i in range(DOCS):
        (root / f"ledger{i:02}.md").write_text(ledger(VERSIONS[1], i))
    return root


def versions(idx: api.Index) -> dict[str, tuple[set[str], int, set[str]]]:
    """Per document: the version words its passages name, how many, and the hashes cited."""
    seen: dict[str, tuple[set[str], int, set[str]]] = {}
    for m in api.grep(idx, "|".join(VERSIONS), max_matches=10 * DOCS * SECTIONS).matches:
        words, n, hashes = seen.setdefault(m.path, (set(), 0, set()))
        words.add(m.match)
        hashes.add(m.hash)
        seen[m.path] = (words, n + 1, hashes)
    return seen


def test_searches_go_on_during_a_re_index_and_see_each_document_whole(tmp_path):
    """A reader in a loop while ``api.index`` rewrites every document (slowed down, so the
    write lasts seconds): it keeps answering during the write, and every answer holds each
    document in one version, with all its passages."""
    root = folder(tmp_path / "docs")
    idx = LiveIndex.of(api.Index.for_root(root))
    answers: list[tuple[float, float, dict]] = []
    done = threading.Event()

    def keep_reading() -> None:
        while not done.is_set():
            started = time.monotonic()
            seen = versions(idx)
            answers.append((started, time.monotonic(), seen))

    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        while not answers:
            time.sleep(0.01)
        began = time.monotonic()
        report = idx.write(lambda: api.index(root, progress=lambda *_: time.sleep(0.06)))
        ended = time.monotonic()
    finally:
        done.set()
        reader.join()
    assert report.updated == DOCS
    during = [a for a in answers if began < a[0] and a[1] < ended]
    assert len(during) >= 3, (ended - began, [round(b - a, 2) for a, b, _ in answers])
    finished = [began] + [b for _, b, _ in during] + [ended]
    gaps = [b - a for a, b in zip(finished, finished[1:], strict=False)]
    assert max(gaps) < (ended - began) / 2, gaps  # no wait for the whole write
    for _, _, seen in answers:
        assert len(seen) == DOCS
        for words, n, hashes in seen.values():
            assert len(words) == 1 and n == SECTIONS and len(hashes) == 1, (words, n)
    assert all(w == {VERSIONS[1]} for w, _, _ in versions(idx).values())
    idx.close()


def test_the_writing_thread_reads_before_during_and_after_its_write(tmp_path):
    """A write that reads through the live index (a gazetteer edit checks first) reads on
    a connection of its own before it opens the file, then on the lent connection."""
    root = folder(tmp_path / "docs")
    idx = LiveIndex.of(api.Index.for_root(root))
    mid: list[int] = []

    def write() -> tuple[int, int]:
        before = len(versions(idx))
        api.index(root, progress=lambda *_: mid.append(api.status(idx).units))
        return before, sum(n for _, n, _ in versions(idx).values())

    assert idx.write(write) == (DOCS, DOCS * SECTIONS)
    assert mid and all(n >= DOCS * SECTIONS for n in mid)  # old, new, or both units
    idx.close()


def test_another_process_reads_during_a_long_write_of_the_server(tmp_path):
    """The write's connections are let go when a reader of another process asks, so a
    ``kbx search`` from a shell answers during a write that lasts longer than it waits."""
    root = folder(tmp_path / "docs")
    idx = LiveIndex.of(api.Index.for_root(root))
    started, answered = threading.Event(), threading.Event()

    def slowly(*_: object) -> None:
        started.set()
        if not answered.is_set():  # 8 s in all, until the other process has answered
            time.sleep(0.2)

    writer = threading.Thread(target=lambda: idx.write(lambda: api.index(root, progress=slowly)))
    writer.start()
    try:
        started.wait(30)
        r = run_kbx("search", VERSIONS[0], "--json", cwd=root)
        alive = writer.is_alive()
        answered.set()
        assert r.returncode == 0, r.stderr
        assert alive  # it answered during the write
        assert api.status(idx).units == DOCS * SECTIONS  # and so does this process
    finally:
        writer.join()
    idx.close()


def test_two_runs_in_one_write_each_rebuild_the_entities(tmp_path):
    """The functions a writer connection registers in SQL (the entity rebuild's slug) live
    in the database and die with their connection: readers must not keep the database
    open between two writer connections, or the second run's rebuild fails (or crashes)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "a.md").write_text("---\nauthor: Ann Lee\n---\n# A\n\nSee doi:10.1000/aaa1.\n")
    api.index(root)
    idx = LiveIndex.of(api.Index.for_root(root))
    done = threading.Event()
    answered: list[int] = []

    def keep_reading() -> None:
        while not done.is_set():
            answered.append(len(api.entities(idx)))

    def write() -> None:
        for n in (2, 3):
            text = f"---\nauthor: Bo Chen {n}\n---\n# N\n\nSee doi:10.1000/n{n}.\n"
            (root / f"n{n}.md").write_text(text)
            api.index(root)

    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        idx.write(write)
    finally:
        done.set()
        reader.join()
    names = {e.entity_id for e in api.entities(idx, limit=500)}
    assert {"doi:10.1000/n2", "doi:10.1000/n3"} <= names, names
    assert answered
    idx.close()
