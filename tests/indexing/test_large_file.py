"""One large file of names (issue 43): a changelog of thousands of signers is indexed beside a
small file and alone, within a memory budget, its names stored in rows of bounded size, while
searches from another process keep answering, during the names pass too."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from large_files import changelog, people

from kbx.errors import IndexBusy
from kbx.search.search import search
from kbx.store.db import Index

SIZE = 800_000  # characters: about 3,000 entries (a kernel's changelog is 3.4 MB)
SIGNERS = 2_500
MEMORY_MB = 4_096  # the writer's peak resident memory, at most: about 0.2 GB alone, 1.2 GB seen
# in the full suite's parallel run; before the fix DuckDB ran out at 20 GB

# The writer: ``kbx index`` with a cheap model of names and the byline recognizer, in a
# process of its own. Its names pass waits, once the documents are read, until a search
# from the test's process has answered (or 30 s): a pass that held the file meanwhile
# would make that search give up as busy (after ``BUSY_WAIT``).
WRITER = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])  # tests/, for large_files
from large_files import Names
from kbx.annotate import context
from kbx.indexing.ingest import index
from kbx.recognizers.bylines import BylineRecognizer
from kbx.recognizers.registry import Registry

root, marks = Path(sys.argv[1]), Path(sys.argv[2])
carried = context._carried_names


def waiting(read, finders):
    (marks / "carrying").touch()
    deadline = time.monotonic() + 30
    while not (marks / "searched").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return carried(read, finders)


context._carried_names = waiting
index(root, registry=Registry([Names(), BylineRecognizer()]))
print(json.dumps({"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _searching_while_indexed(root: Path, marks: Path) -> tuple[dict, list[tuple]]:
    """Index ``root`` in another process, searching it from this one from its names pass
    (the documents are in) until the writer ends; returns what the writer said, and each
    search as (answered, during the names pass)."""
    marks.mkdir()
    tests = str(Path(__file__).parents[1])
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(marks), tests],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    idx, searches = Index.for_root(root), []
    try:
        while writer.poll() is None:
            if not (marks / "carrying").exists():
                time.sleep(0.02)
                continue
            during = not (marks / "searched").exists()
            try:
                answered = bool(search(idx, "crash in the parser", k=3).hits)
            except IndexBusy:
                answered = False
            if during:
                (marks / "searched").touch()  # the names pass goes on
            searches.append((answered, during))
            time.sleep(0.05)
        out, err = writer.communicate(timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), searches


@pytest.mark.parametrize("beside", [True, False], ids=["beside-a-small-file", "alone"])
def test_a_large_file_of_names_is_indexed_while_searches_answer(tmp_path, beside):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "changelog.txt").write_text(changelog(SIZE, SIGNERS))
    if beside:
        (root / "notes.md").write_text("# Notes\n\nAda Bababa fixed the parser crash.\n")
    said, searches = _searching_while_indexed(root, tmp_path / "marks")
    assert said["maxrss_mb"] < MEMORY_MB
    assert searches and searches[0] == (True, True)  # while the names were carried
    assert all(answered for answered, _ in searches), searches
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    try:
        (longest,) = con.execute("SELECT max(length(data)) FROM doc_context").fetchone()
        assert (longest or 0) < 1_000  # the names are rows of their own, not one list
        names, signers, authored, units = con.execute(
            """SELECT (SELECT count(*) FROM doc_names),
                      (SELECT count(*) FROM entities
                       WHERE source = 'byline' AND starts_with(entity_id, 'person:')),
                      (SELECT count(DISTINCT unit_id) FROM authored),
                      (SELECT count(*) FROM placements pl JOIN documents d USING (doc_id)
                       WHERE d.path = 'changelog.txt')"""
        ).fetchone()
    finally:
        con.close()
    assert names > SIGNERS  # each signer, the names they thank, and their short forms
    assert signers == SIGNERS == len(people(SIGNERS))
    assert authored == units  # every entry is signed
