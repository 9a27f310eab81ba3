"""The live index against the real server: a file added, edited or deleted in the folder is
searchable (or gone) within a bounded wait, a burst is one re-index, a file or a setup
that fails leaves the server answering, searches never see half a document, and a
``kbx index`` from a shell goes through while the watcher writes too."""

from __future__ import annotations

import contextlib
import hashlib
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from helpers import ctrl_c_reaches, run_kbx
from inprocess import run_cli

from kbx import api
from kbx.serve.http import bound_socket, server
from kbx.serve.live import LiveIndex
from kbx.serve.security import Policy
from kbx.serve.watch import Watcher

T = TypeVar("T")
RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
WAIT = 15.0  # seconds at most for a change to show (a re-index takes a fraction of one)


@dataclass
class Served:
    url: str
    watcher: Watcher
    log: list[str]
    http: httpx.Client


@contextlib.contextmanager
def watched(root: Path) -> Iterator[Served]:
    """The real server on ``root`` with its watcher, at a free loopback port; yields once
    the folder is watched."""
    log: list[str] = []
    live = LiveIndex.of(api.Index.for_root(root))
    watcher = Watcher(live, log=log.append)
    sock = bound_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    s = server(live, Policy("127.0.0.1", port, None), watcher=watcher)
    thread = threading.Thread(target=s.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (s.started and watcher.ready.is_set()):
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield Served(url, watcher, log, client)
    finally:
        s.should_exit = True
        thread.join(30)
        sock.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("watch") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "runbook.txt").write_text("Runbook\n\nBack up the database nightly.\n")
    api.index(root)
    return root


@pytest.fixture(scope="module")
def live(folder) -> Iterator[Served]:
    with watched(folder) as served:
        yield served


def until(check: Callable[[], T], what: str, wait: float = WAIT) -> T:
    """Poll ``check`` until it returns something true; fail after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"not within {wait:.0f} s: {what}"
        time.sleep(0.05)


def hits(live: Served, q: str) -> list[dict]:
    r = live.http.get("/api/search", params={"q": q, "k": 50, "facets": "false"})
    assert r.status_code == 200, r.text
    return r.json()["hits"]


def paths(live: Served, q: str) -> list[str]:
    return sorted({h["path"] for h in hits(live, q)})


def test_an_added_file_is_searchable_within_a_bounded_wait(live, folder):
    runs = live.watcher.runs
    (folder / "added.md").write_text("# Added\n\nA quokkafrost sighting by the shore.\n")
    until(lambda: paths(live, "quokkafrost") == ["added.md"], "added.md searchable")
    # searchable once its batch commits, before the run ends (and is counted and logged)
    until(lambda: live.watcher.runs > runs, "the run over")
    assert any("re-indexed in" in line and "1 new" in line for line in live.log), live.log


def test_an_edited_file_loses_its_old_text_and_its_citations_get_the_new_hash(live, folder):
    doc = folder / "notes" / "edited.md"
    doc.parent.mkdir(exist_ok=True)
    doc.write_text("# Edited\n\nThe marmotwind survey starts in May.\n")
    (before,) = until(lambda: hits(live, "marmotwind"), "the first version searchable")
    new = "# Edited\n\nThe ibexglow survey starts in June.\n"
    doc.write_text(new)
    (after,) = until(lambda: hits(live, "ibexglow"), "the second version searchable")
    assert hits(live, "marmotwind") == []
    assert after["path"] == before["path"] == "notes/edited.md"
    assert before["hash"] != after["hash"] == hashlib.sha256(new.encode()).hexdigest()
    r = live.http.get("/api/read", params={"spec": "notes/edited.md:1-3", "hash": after["hash"]})
    assert r.status_code == 200 and "ibexglow" in r.text


def test_a_deleted_file_leaves_the_index(live, folder):
    doc = folder / "doomed.txt"
    doc.write_text("A wombatreef note, soon deleted.\n")
    until(lambda: paths(live, "wombatreef") == ["doomed.txt"], "doomed.txt searchable")
    doc.unlink()
    until(lambda: hits(live, "wombatreef") == [], "doomed.txt gone")
    until(lambda: any("1 removed" in line for line in live.log), "the removal logged")


def test_a_re_index_walks_the_folder_once_and_indexes_as_its_own_walk_would(
    live, folder, monkeypatch
):
    """The watcher hands its walk to the run (each walk stats every file: about half a
    second at 42,500 files), and what the run stores is what ``kbx index`` stores."""
    import kbx.indexing.ingest as ingest

    walks: list[str] = []
    watcher_walk, run_walk = api._walk, ingest.walk
    monkeypatch.setattr(
        api, "_walk", lambda *a, **k: walks.append("watcher") or watcher_walk(*a, **k)
    )
    monkeypatch.setattr(ingest, "walk", lambda *a, **k: walks.append("run") or run_walk(*a, **k))
    runs = quiet(live)
    (folder / "once.md").write_text("# Once\n\nA gannetlume note, walked once.\n")
    until(lambda: paths(live, "gannetlume") == ["once.md"], "once.md searchable")
    until(lambda: live.watcher.runs > runs, "the run over")
    assert "watcher" in walks and "run" not in walks, walks
    monkeypatch.undo()
    with api.Index.for_root(folder).reader() as con:
        before = con.execute("SELECT path, sha256, size, mtime_ns FROM documents ORDER BY path")
        before = before.fetchall()
    report = live.watcher.index.write(lambda: api.index(folder))  # a walk of its own
    assert report.new == report.updated == report.removed == 0
    # a walk made with hidden files where the index keeps none is not this run's walk
    report = live.watcher.index.write(lambda: api.index(folder, walked=(True, [])))
    assert report.removed == 0 and report.unchanged == len(before)
    with api.Index.for_root(folder).reader() as con:
        after = con.execute("SELECT path, sha256, size, mtime_ns FROM documents ORDER BY path")
        assert after.fetchall() == before


def placed(live: Served, q: str) -> list[str]:
    """The files holding the hits' passages (a passage in two files is one hit)."""
    return sorted({p for h in hits(live, q) for p in (h["path"], *h["also_in"])})


def test_a_file_saved_in_place_is_stat_ed_alone_and_a_link_to_it_follows(tmp_path, monkeypatch):
    """A save of a file the walk listed costs a stat of it (and of what may link to it),
    not a walk of the folder; what the run stores is what a walk would have given."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    target = root / "target.md"
    target.write_text("# Target\n\nA first plovermoss note.\n")
    (root / "link.md").symlink_to("target.md")
    (root / "other.md").write_text("# Other\n\nUnrelated.\n")
    api.index(root)
    with watched(root) as served:
        walks: list[int] = []
        real = api._walk
        monkeypatch.setattr(api, "_walk", lambda *a, **k: walks.append(1) or real(*a, **k))
        runs = served.watcher.runs
        with open(target, "a") as f:  # in place, as an editor that does not rename
            f.write("\nA second egretfern note.\n")
        until(lambda: placed(served, "egretfern") == ["link.md", "target.md"], "both re-read")
        until(lambda: served.watcher.runs > runs, "the run over")
        assert walks == []
        (root / "new.md").write_text("# New\n\nA fresh ternbrook note.\n")  # added: a walk
        until(lambda: paths(served, "ternbrook") == ["new.md"], "the new file searchable")
        assert walks
    with api.Index.for_root(root).reader() as con:
        stored = con.execute("SELECT path, size, mtime_ns FROM documents ORDER BY path")
        stored = stored.fetchall()
    assert stored == [
        (f.rel, f.size, f.mtime_ns) for f in sorted(api._walk(root), key=lambda f: f.rel)
    ]


def test_a_folder_indexed_with_hidden_files_keeps_them_under_the_watcher(tmp_path):
    root = tmp_path / "docs"
    (root / ".notes").mkdir(parents=True)
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / ".notes" / "kept.md").write_text("# Kept\n\nA lynxdawn entry.\n")
    api.index(root, hidden=True)
    with watched(root) as served:
        assert paths(served, "lynxdawn") == [".notes/kept.md"]  # the first run kept it
        (root / ".notes" / "new.md").write_text("# New\n\nA lynxdawn reply.\n")
        until(lambda: len(paths(served, "lynxdawn")) == 2, "the new hidden file searchable")


def test_a_burst_of_twenty_writes_is_one_or_a_few_re_indexes(live, folder):
    (folder / "burst").mkdir()
    runs = live.watcher.runs
    for i in range(20):
        (folder / "burst" / f"b{i:02}.md").write_text(f"# B{i}\n\nA narwhalbloom entry, {i}.\n")
    until(lambda: len(paths(live, "narwhalbloom")) == 20, "the burst searchable")
    until(lambda: live.watcher.runs > runs, "the run over")  # searchable before it ends
    assert quiet(live) - runs <= 3, live.log  # a run still to come starts within 0.3 s


def quiet(live: Served, wait: float = 0.3) -> int:
    """The watcher's run count once it has not changed for ``wait`` seconds."""
    runs = -1
    while runs != live.watcher.runs:
        runs = live.watcher.runs
        time.sleep(wait)
    return runs


def test_a_change_the_walk_does_not_see_costs_a_walk_and_no_write(live, folder):
    runs, skipped = quiet(live), live.watcher.skipped
    (folder / ".kbxignore").write_text("scratch/\n")  # ignores nothing there yet
    until(lambda: live.watcher.skipped > skipped, "the ignore file seen")
    skipped = live.watcher.skipped
    (folder / "scratch").mkdir()
    (folder / "scratch" / "tmp.md").write_text("ignored\n")
    (folder / "notes.swp").write_bytes(b"\0")  # not a format kbx reads
    until(lambda: live.watcher.skipped > skipped, "the burst seen and skipped")
    assert live.watcher.runs == runs
    assert hits(live, "ignored") == []


def test_a_file_that_fails_to_parse_is_reported_and_the_server_answers(live, folder):
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nnot a pdf at all\n")
    until(lambda: any("broken.pdf" in line for line in live.log), "the failure logged")
    line = next(line for line in live.log if "broken.pdf" in line)
    assert "1 failed" in line, line
    status = live.http.get("/api/status")
    assert status.status_code == 200
    assert "broken.pdf" in status.text
    assert paths(live, "database nightly") == ["runbook.txt"]


def test_a_re_index_that_fails_is_logged_and_the_watcher_goes_on(live, folder):
    config = folder / "kbx.toml"
    failures = live.watcher.failures
    try:
        config.write_text("[recognizers\n")  # not TOML: the run cannot set up
        until(lambda: live.watcher.failures > failures, "the failed run")
        assert any("re-index failed" in line and "kbx.toml" in line for line in live.log)
        assert paths(live, "database nightly") == ["runbook.txt"]  # still serving
    finally:
        config.write_text(RULES_ONLY)
    (folder / "after.md").write_text("An okapimist note after the repair.\n")
    until(lambda: paths(live, "okapimist") == ["after.md"], "indexing resumed")


VERSIONS = ("kestrelver", "ospreyver")


def version(word: str) -> str:
    """A document whose every section names its version: 30 sections, 30 units."""
    return "".join(f"# Part {i}\n\n{word} section {i} of the ledger.\n\n" for i in range(30))


def test_searches_during_re_indexes_see_a_whole_document_never_half(live, folder):
    """A grep of the version words counts the document's passages: a reader between two
    of a re-index's commits would see some of each version, or fewer than all 30."""
    doc = folder / "ledger.md"
    doc.write_text(version(VERSIONS[0]))
    seen: list[tuple[dict[str, int], set[str]]] = []
    done = threading.Event()

    def answer() -> tuple[dict[str, int], set[str]]:
        r = live.http.get(
            "/api/grep",
            params={"pattern": "|".join(VERSIONS), "path": "ledger.md", "max": 500},
        )
        if r.status_code == 400 and "matches no indexed file" in r.text:  # not in yet
            return dict.fromkeys(VERSIONS, 0), set()
        if r.status_code != 200:
            return {"status": r.status_code}, {r.text}
        matches = r.json()["matches"]
        counts = {v: sum(m["match"] == v for m in matches) for v in VERSIONS}
        return counts, {m["hash"] for m in matches}

    def keep_reading() -> None:
        while not done.is_set():
            seen.append(answer())

    until(lambda: answer()[0][VERSIONS[0]] == 30, "the first version in")
    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        for flip in range(2):
            word = VERSIONS[(flip + 1) % 2]
            doc.write_text(version(word))
            until(lambda w=word: answer()[0][w] == 30, f"version {word} in")
    finally:
        done.set()
        reader.join()
    assert len(seen) >= 4  # reads go on during a re-index, and see a document whole
    for counts, hashes in seen:
        assert sorted(counts.values()) == [0, 30], counts
        assert len(hashes) == 1, hashes  # every passage cites one file's hash
    assert {v for counts, _ in seen for v, n in counts.items() if n} == set(VERSIONS)


def test_kbx_index_from_a_shell_goes_through_while_the_watcher_indexes(live, folder):
    """The edit wakes the watcher and the shell's ``kbx index`` at once: one waits for the
    other's lock and neither fails; searches keep answering throughout."""
    statuses: list[int] = []
    done = threading.Event()
    start = len(live.log)

    def keep_searching() -> None:
        while not done.is_set():
            statuses.append(live.http.get("/api/search", params={"q": "nightly"}).status_code)

    worker = threading.Thread(target=keep_searching)
    worker.start()
    try:
        (folder / "shell.md").write_text("# Shell\n\nA tapirdawn note.\n")
        r = run_kbx("index", str(folder))
        assert r.returncode == 0, r.stderr
        assert "busy" not in r.stderr
    finally:
        done.set()
        worker.join()
    assert statuses and set(statuses) == {200}
    assert paths(live, "tapirdawn") == ["shell.md"]
    time.sleep(0.3)  # the watcher's run for the same edit, if it came second
    since = live.log[start:]
    assert not any("re-index failed" in line or "busy" in line for line in since), since


def test_kbx_serve_says_it_watches_and_help_names_the_switch(folder):
    help_text = run_cli("serve", "--help").stdout
    assert "--watch" in help_text and "--no-watch" in help_text
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbx", "serve", "--port", "0"],
        cwd=folder,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_reaches,
    )
    try:
        said = [proc.stderr.readline() for _ in range(2)]  # where it listens, what else
        assert re.match(r"kbx serve: http://127\.0\.0\.1:\d+/api", said[0]), said
        while said[-1] and "watching" not in said[-1] and len(said) < 6:
            said.append(proc.stderr.readline())
        assert f"kbx serve: watching {folder}\n" in said, said
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.stderr.close()
