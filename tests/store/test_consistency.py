"""Nothing lost: a command killed between any two of its commits leaves a store that the
next command repairs to exactly what a fresh build of the same files holds; the curated
gazetteer survives the loss of the index; one writer at a time, politely."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import time
from pathlib import Path

import duckdb
import pytest
from helpers import Loopback, attached, copy_index, crossref_work, die_at

from kbx.annotate.setup import entries as gazetteer_entries
from kbx.annotate.setup import registry_for
from kbx.entities import gazetteer as gz
from kbx.entities.resolve import resolve
from kbx.errors import BadArgument, IndexBusy, IndexUnwritable
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.search.search import search
from kbx.search.status import status
from kbx.store import journal, passages_file
from kbx.store.consistency import contents as store_contents
from kbx.store.db import Index

FORK = multiprocessing.get_context("fork")
RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'

FILES = {
    "a.md": "---\ndate: 2021-03-04\n---\n# Alpha\n\nProject Cedar cites doi:10.1000/xyz123 "
    "and weighs 5 kg.\n\nShared closing words.\n",
    "b.md": "# Beta\n\nMet Maya Okafor yesterday about Cedar.\n\nShared closing words.\n",
    "c.txt": "Gamma notes\n\nA plain paragraph on 4 March 2022 about nothing much.\n",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kbx.toml").write_text(RULES_ONLY)
    for rel, text in files.items():
        (root / rel).write_text(text)
    return root


def _change(root: Path) -> None:
    """An update that orphans units and changes an entity, a removal and an addition."""
    (root / "a.md").write_text(FILES["a.md"].replace("xyz123", "abc999").replace("5 kg", "7 m"))
    (root / "b.md").unlink()
    (root / "d.md").write_text("# Delta\n\nNew words on zeppelins, 2023-01-02.\n")


def contents(db: Path) -> dict[str, list]:
    with attached(db) as con:
        return store_contents(con)


_BUILT: dict[tuple, dict[str, list]] = {}  # the inputs of a fresh build: what it held


def fresh_build(root: Path, tmp: Path) -> dict[str, list]:
    """A new index of the same files, given the same curated gazetteer log. A build is
    deterministic (these tests compare builds), so one of the same files and log is made
    once per module: several kill points end with the same files."""
    log = Index.for_root(root).journal_path
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".kbx" not in p.parts)
    key = (
        tuple((p.relative_to(root).as_posix(), p.read_bytes()) for p in files),
        log.read_bytes() if log.exists() else None,
    )
    if key not in _BUILT:
        copy = tmp / "fresh" / root.name
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".kbx"))
        if log.exists():
            (copy / ".kbx").mkdir()
            shutil.copy(log, copy / ".kbx" / log.name)
        index(copy, workers=1)
        _BUILT[key] = contents(Index.for_root(copy).db)
    return _BUILT[key]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """FILES indexed once per module (``index(root, workers=1)``)."""
    root = _write(tmp_path_factory.mktemp("template") / "docs", FILES)
    index(root, workers=1)
    return root


@pytest.fixture
def indexed(template: Path, tmp_path: Path) -> Path:
    """A copy of the template at ``tmp_path / "docs"``: the state every test starts from."""
    return copy_index(template, tmp_path / "docs").root


def _add_cedar(root: Path) -> None:
    gz.add(Index.for_root(root), "Project Cedar", "PROJECT", ["Cedar"], actor="agent:test")


@pytest.mark.parametrize(
    "point", ["index.batch", "recognize.batch", "index.context", "index.removed"]
)
def test_index_killed_between_commits_is_repaired_by_the_next_run(indexed, tmp_path, point):
    root = indexed
    _change(root)
    assert die_at(point, index, root) == 137  # the point is on this path
    index(root, workers=1)
    assert contents(Index.for_root(root).db) == fresh_build(root, tmp_path)


@pytest.mark.parametrize(
    "point", ["journal.appended", "gazetteer.logged", "gazetteer.carried", "gazetteer.rerun"]
)
def test_gazetteer_edit_killed_between_commits_is_repaired(indexed, tmp_path, point):
    root = indexed
    assert die_at(point, _add_cedar, root) == 137
    index(root, workers=1)  # nothing changed on disk: the repair alone must do it
    got = contents(Index.for_root(root).db)
    assert any("Project Cedar" in row for row in got["gazetteer"])  # the log kept the edit
    assert got == fresh_build(root, tmp_path)


@pytest.mark.parametrize("point", ["recognize.batch", "reprocess.recognized", "reprocess.context"])
def test_reprocess_killed_between_commits_is_repaired(indexed, tmp_path, point):
    root = indexed
    idx = Index.for_root(root)

    def forced():
        reprocess(idx, registry_for(idx), ["dates", "identifiers"], redo_all=True)

    assert die_at(point, forced) == 137
    forced()
    assert contents(idx.db) == fresh_build(root, tmp_path)


def test_an_orphan_from_an_older_kbx_is_never_cited_and_is_swept(indexed):
    root = indexed
    idx = Index.for_root(root)
    con = duckdb.connect(str(idx.db))
    con.execute(  # what a kill between a batch and the old separate sweep left behind
        "DELETE FROM placements WHERE unit_id IN (SELECT unit_id FROM units "
        "WHERE text LIKE '%Maya Okafor%')"
    )
    con.close()
    passages_file.mapped_path(idx.db).unlink(missing_ok=True)  # that kbx (schema 7) wrote none
    assert any("no document places" in p for p in status(idx).problems)
    for query in ("Okafor", "Okafor yesterday"):  # one word, and two (once a KeyError)
        assert search(idx, query).hits == []
    report = index(root, workers=1)
    assert report.units_swept == 1
    assert status(idx).problems == []


def test_the_gazetteer_survives_deleting_the_index(indexed):
    root = indexed
    idx = Index.for_root(root)
    _add_cedar(root)
    gz.retract(idx, "gz:project-cedar", "agent:test", "wrong project")
    gz.add(idx, "Maya Okafor", "PERSON", actor="user:ann", source="b.md", note="lead")
    before = gz.show(idx, "gz:maya-okafor")
    idx.db.unlink()
    index(root, workers=1)
    after = gz.show(idx, "gz:maya-okafor")
    assert after == before  # entry, provenance and log, times included
    assert gz.show(idx, "gz:project-cedar")["why"] == "wrong project"
    assert [e.entry_id for e in gazetteer_entries(duckdb.connect(str(idx.db)))] == [
        "gz:maya-okafor"
    ]


def test_a_torn_last_line_is_an_edit_that_never_happened(indexed):
    root = indexed
    idx = Index.for_root(root)
    _add_cedar(root)
    with open(idx.journal_path, "a") as f:
        f.write('{"seq": 2, "entry_id": "gz:x", "act')  # the crash came mid-write
    assert len(journal.read(idx.journal_path)) == 1
    gz.add(idx, "Maya Okafor", "PERSON", actor="agent:test")
    events = journal.read(idx.journal_path)
    assert [e["entry_id"] for e in events] == ["gz:project-cedar", "gz:maya-okafor"]


def test_a_log_is_written_for_an_index_that_had_none(indexed):
    root = indexed
    idx = Index.for_root(root)
    _add_cedar(root)
    idx.journal_path.unlink()  # as an index from a kbx before the log existed
    index(root, workers=1)
    assert [e["action"] for e in journal.read(idx.journal_path)] == ["add"]


def test_a_second_writer_says_who_holds_the_index(indexed):
    root = indexed
    idx = Index.for_root(root)
    held, end = FORK.Event(), FORK.Event()

    def hold():  # a forked child holding the writer's lock
        with Index.for_root(root).writing("index"):
            held.set()
            end.wait(30)

    holder = FORK.Process(target=hold)
    holder.start()
    try:
        assert held.wait(60)
        busy = rf"another kbx index \(pid {holder.pid}"
        with pytest.raises(IndexBusy, match=busy), idx.writing("gazetteer edit", wait=0.3):
            pass
        assert search(idx, "Cedar").hits  # readers are not held up by the lock
    finally:
        holder.kill()
        holder.join()
    with idx.writing("gazetteer edit", wait=5):  # a killed holder leaves no stale lock
        pass


def test_an_index_folder_that_cannot_be_made_is_one_clear_error(tmp_path):
    root = _write(tmp_path / "docs", FILES)
    with pytest.raises(IndexUnwritable, match="pass --db FILE"):
        index(root, "/proc/kbx-cannot-be-here/index.duckdb")


def test_the_log_lines_are_plain_json_a_person_can_read(indexed):
    root = indexed
    _add_cedar(root)
    (line,) = Index.for_root(root).journal_path.read_text().splitlines()
    event = json.loads(line)
    assert (event["action"], event["actor"], event["data"]["name"]) == (
        "add",
        "agent:test",
        "Project Cedar",
    )


def test_a_writer_gets_in_between_back_to_back_readers(indexed):
    root = indexed
    idx = Index.for_root(root)

    def hammer(go):  # a forked child reading back to back for 15 s
        end = time.monotonic() + 15
        go.set()
        while time.monotonic() < end:
            with Index.for_root(root).reader() as con:
                con.execute("SELECT count(*) FROM postings").fetchone()

    going = [FORK.Event() for _ in range(3)]
    readers = [FORK.Process(target=hammer, args=(go,)) for go in going]
    for r in readers:
        r.start()
    try:
        assert all(go.wait(60) for go in going)
        with idx.writer() as con:  # waits for a gap the readers leave it, within its limit
            con.execute("INSERT OR REPLACE INTO kbx_meta VALUES ('probe', '1')")
    finally:
        for r in readers:
            r.kill()
            r.join()


def test_resolve_killed_after_an_answer_is_settled_by_the_next_command(indexed, monkeypatch):
    root = indexed
    doi = "10.1000/xyz123"
    work = crossref_work(doi, "Cedar in Practice", 2020, [("Ann", "Lee", None)], "J. Cedar")
    server = Loopback(
        {f"/works/{doi}": [(200, work, {})], "/works/https://doi.org/": [(404, {}, {})]}
    )
    monkeypatch.setenv("KBX_CROSSREF_URL", server.url)
    monkeypatch.setenv("KBX_OPENALEX_URL", server.url)
    idx = Index.for_root(root)
    try:
        assert die_at("resolve.answer", resolve, idx) == 137
    finally:
        server.close()
    assert any("entity layer" in p for p in status(idx).problems)
    index(root, workers=1)  # no file changed: the repair alone rebuilds the layer
    assert status(idx).problems == []
    con = duckdb.connect(str(idx.db), read_only=True)
    (label,) = con.execute(
        "SELECT label FROM entities WHERE entity_id = ?", [f"doi:{doi}"]
    ).fetchone()
    con.close()
    assert label == "Cedar in Practice"


def test_an_index_file_elsewhere_is_used_only_inside_its_root(indexed, tmp_path):
    root = indexed
    elsewhere = tmp_path / "elsewhere.duckdb"
    shutil.copy(Index.for_root(root).db, elsewhere)
    assert Index.find(elsewhere, start=root).root == root  # run from inside the root
    with pytest.raises(BadArgument, match="run the command from inside that folder"):
        Index.find(elsewhere, start=tmp_path)
    con = duckdb.connect(str(elsewhere))
    con.execute("UPDATE kbx_meta SET value = '/' WHERE key = 'root'")  # a file claiming all
    con.close()
    with pytest.raises(BadArgument):
        Index.find(elsewhere, start=root)


def test_a_retracted_id_is_restored_by_adding_it_again_and_the_log_replays_it(indexed):
    root = indexed
    idx = Index.for_root(root)
    gz.add(idx, "Maya Okafor", "PERSON", entry_id="Q42", actor="agent:test")
    gz.retract(idx, "Q42", "agent:test", "not sure yet")
    gz.add(idx, "Maya Okafor", "PERSON", ["M. Okafor"], entry_id="Q42", actor="user:ann")
    shown = gz.show(idx, "Q42")
    assert shown["retracted_at"] is None and shown["aliases"] == ["Maya Okafor", "M. Okafor"]
    assert [e["action"] for e in shown["log"]] == ["add", "retract", "restore"]
    idx.db.unlink()
    index(root, workers=1)
    assert gz.show(idx, "Q42") == shown  # the log replays the restore too


@pytest.mark.parametrize("point", ["gazetteer.logged", "gazetteer.carried"])
def test_the_same_edit_run_again_after_a_kill_repairs_even_when_refused(indexed, tmp_path, point):
    root = indexed
    assert die_at(point, _add_cedar, root) == 137
    with pytest.raises(BadArgument, match="already an alias"):
        _add_cedar(root)  # the edit did commit; running it again is refused, and repairs
    assert contents(Index.for_root(root).db) == fresh_build(root, tmp_path)


def test_words_of_an_edited_or_removed_passage_leave_the_term_list(indexed, tmp_path):
    _change(indexed)  # "Maya" and "Okafor" were only in b.md, "xyz123" only in a.md
    index(indexed, workers=1)
    rows = contents(Index.for_root(indexed).db)["terms"]  # each row as its text: "('maya',)"
    assert rows and not [r for r in rows if any(w in r for w in ("maya", "okafor", "xyz123"))]
    assert rows == fresh_build(indexed, tmp_path)["terms"]
