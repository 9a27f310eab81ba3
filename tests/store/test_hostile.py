"""Hostile input (issue 12, "nothing lost"): each case is one clear error line or a recorded
per-file failure, never a traceback or a hang. Everything here runs the real code on real
files: named pipes, sockets, names that are not UTF-8, YAML bombs, malformed imports."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import unchanged
from inprocess import run_cli
from typer.testing import CliRunner

from kbx.cli.app import app
from kbx.entities import gazetteer as gz
from kbx.errors import BadArgument
from kbx.extract.formats.markdown import split_front_matter
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.read import read
from kbx.search.search import search
from kbx.search.status import status
from kbx.source.walk import walk
from kbx.store.db import Index

NOT_UTF8 = "name is not valid UTF-8"


def _soon(fn, *args, pipe: Path | None = None, seconds: float = 20.0):
    """``fn(*args)`` in a thread; if it is still waiting after ``seconds`` (on a named pipe),
    open the pipe for writing so that it ends, and fail: a hang is a failure, not a stall."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the test below
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        if pipe is not None:
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"{getattr(fn, '__name__', fn)} still waiting after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _failures(root: Path) -> dict[str, str]:
    return {f["path"]: f["error"] for f in status(Index.for_root(root)).failures}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A folder with a named pipe, a socket, a link to the pipe, a file and a folder whose
    names are not UTF-8, a folder named ``a[``, and good files beside them."""
    root = tmp_path / "hostile"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nquinceword lives here.\n")
    os.mkfifo(root / "pipe.md")
    os.symlink("pipe.md", root / "to-pipe.md")
    fd = os.open(os.fsencode(root) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY)
    os.write(fd, b"# Bad name\n")
    os.close(fd)
    os.mkdir(os.fsencode(root) + b"/dir\xfe")
    (root / os.fsdecode(b"dir\xfe") / "inner.md").write_text("# Inner\n")
    (root / "a[").mkdir()
    (root / "a[" / "bracket.md").write_text("# Bracket\n\nplumword in a bracket folder.\n")
    return root


def test_walk_records_special_files_and_bad_names_instead_of_reading_them(hostile):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(hostile / "sock.md"))
        found = {f.rel: f for f in walk(hostile)}
    finally:
        sock.close()
    assert found["good.md"].error is None and found["a[/bracket.md"].error is None
    assert found["pipe.md"].error == "not a regular file (named pipe); skipped"
    assert found["to-pipe.md"].error == "not a regular file (named pipe); skipped"
    assert found["sock.md"].error == "not a regular file (socket); skipped"
    assert NOT_UTF8 in found["bad\\xff.md"].error
    assert NOT_UTF8 in found["dir\\xfe/"].error
    assert all(f.rel.encode("utf-8") for f in found.values())  # every path is storable


def test_index_and_status_go_on_past_pipes_and_bad_names(hostile):
    r = run_cli("index", str(hostile), "--json")  # a hang here would time out, not pass
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["new"] == 2
    failures = _failures(hostile)
    assert set(failures) == {"pipe.md", "to-pipe.md", "bad\\xff.md", "dir\\xfe/"}
    assert "named pipe" in failures["pipe.md"] and NOT_UTF8 in failures["bad\\xff.md"]
    idx = Index.for_root(hostile)
    assert [h.path for h in search(idx, "plumword").hits] == ["a[/bracket.md"]
    r = run_cli("status", cwd=hostile)
    assert r.returncode == 0, r.stderr
    assert "bad\\xff.md (failed): name is not valid UTF-8" in r.stdout
    again = run_cli("index", str(hostile), "--json")  # the rerun is not stuck either
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == 2


def test_a_bad_ignore_pattern_is_reported_and_the_others_apply(tmp_path):
    root = tmp_path / "ign"
    (root / "drafts").mkdir(parents=True)
    (root / "drafts" / "d.md").write_text("# Draft\n")
    (root / "keep.md").write_text("# Keep\n")
    (root / ".kbxignore").write_text("[z-a]\ndrafts/\n")
    r = index(root, registry=Registry([]))
    assert r.new == 1
    why = _failures(root)[".kbxignore"]
    assert "line 1: bad pattern '[z-a]'" in why and "drafts" not in why


def _laughs(levels: int) -> str:
    """Nested anchors, nine aliases a level: 9**levels strings from a few hundred bytes."""
    out = '---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(levels - 1):
        out += f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n"
    return out + "---\n# Laughs\n\nquinceword after a bomb.\n"


def test_the_full_billion_laughs_is_refused_at_once():
    bomb = _laughs(9)  # 9**9 strings; serializing them took 3.2 GB and a minute
    assert len(bomb.split("---")[1]) < 400
    started = time.monotonic()
    front, body, warnings = split_front_matter(bomb)
    assert time.monotonic() - started < 1
    assert warnings == ["front matter ignored: aliases expand to over 1000 nodes"]
    assert len(front) == 0 and "quinceword" in body  # no repr of a bomb if this fails


BILLION_LAUGHS = _laughs(4)  # small enough that a regression fails here, not by memory


@pytest.mark.parametrize(
    ("front", "why"),
    [
        (BILLION_LAUGHS, "aliases expand to over 1000 nodes"),
        ("---\na: &a [*a]\n---\n# Loop\n\nquinceword after a loop.\n", "refers to a node"),
        ("---\na: &a\n  b: *a\n---\n# Loop\n\nquinceword after a loop.\n", "refers to a node"),
        ("---\nn: " + "[" * 3000 + "\n---\n# Deep\n\nquinceword.\n", "nested too deep"),
        ("---\nn: " + "9" * 5000 + "\n---\n# Big\n\nquinceword.\n", "integer"),
    ],
)
def test_hostile_front_matter_is_ignored_and_the_document_kept(tmp_path, front, why):
    root = tmp_path / "yaml"
    root.mkdir()
    (root / "bomb.md").write_text(front)
    started = time.monotonic()
    r = index(root, registry=Registry([]), workers=1)
    assert time.monotonic() - started < 20
    assert (r.new, r.failed) == (1, 0)
    idx = Index.for_root(root)
    with idx.reader() as con:
        (warnings,) = con.execute("SELECT warnings FROM documents").fetchone()
    assert len(warnings) == 1 and warnings[0].startswith("front matter ignored")
    assert why in warnings[0]
    assert [h.path for h in search(idx, "quinceword").hits] == ["bomb.md"]


def test_a_small_alias_in_front_matter_still_works(tmp_path):
    root = tmp_path / "ok"
    root.mkdir()
    (root / "a.md").write_text("---\nwho: &w Ann Lee\nauthor: *w\n---\n# A\n\nText.\n")
    index(root, registry=Registry([]))
    with Index.for_root(root).reader() as con:
        assert con.execute("SELECT authors, warnings FROM documents").fetchone() == (
            ["Ann Lee"],
            [],
        )


@pytest.fixture(scope="module")
def readable(tmp_path_factory) -> Iterator[Index]:
    """A folder indexed once for the tests that only read it (checked: ``unchanged``)."""
    root = tmp_path_factory.mktemp("hostile") / "read"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nline three\n")
    (root / "dir.md").mkdir()
    os.symlink("loop.md", root / "loop.md")
    index(root, registry=Registry([]))
    os.mkfifo(root / "fifo.md")  # after indexing: this is about `read`, not the walk
    with unchanged(Index.for_root(root)) as idx:
        yield idx


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("a.md:" + "9" * 5000, "line number 999999999999… is too large"),
        ("a.md:2-" + "9" * 5000, "is too large"),
        ("dir.md", "cannot read dir.md: it is a folder, not a regular file"),
        ("fifo.md:1", "cannot read fifo.md: it is a named pipe, not a regular file"),
        ("loop.md", "cannot read loop.md: symbolic link loop"),
        ("a.md:abc", "malformed line range 'abc' in 'a.md:abc'"),
        ("a.md:1-x", "malformed line range '1-x'"),
        ("a\x00.md", "embedded null byte"),
    ],
)
def test_bad_reads_are_one_clear_error(readable, spec, message):
    with pytest.raises(BadArgument) as e:
        _soon(read, readable, spec, pipe=readable.root / "fifo.md")
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_good_read_still_works_beside_them(readable):
    assert read(readable, "a.md:3").lines == ["line three"]


def test_kbx_read_of_a_pipe_answers_at_once_on_the_command_line(readable):
    for spec in ("fifo.md", "dir.md", "a.md:abc"):
        r = run_cli("read", spec, cwd=readable.root)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1


def _import_file(tmp_path: Path, name: str, data: bytes) -> Path:
    f = tmp_path / name
    f.write_bytes(data)
    return f


GOOD_LINE = json.dumps({"name": "Acme", "type": "ORG"}).encode() + b"\n"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("deep.jsonl", GOOD_LINE + b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 2: JSON nested"),
        (
            "num.jsonl",
            GOOD_LINE + json.dumps({"name": "Zed", "type": "ORG", "aliases": [5]}).encode(),
            "entry 2: aliases must be a list of text",
        ),
        (
            "list.jsonl",
            GOOD_LINE + json.dumps({"name": ["Zed"], "type": "ORG"}).encode(),
            "entry 2: name is list, not text",
        ),
        (
            "typed.jsonl",
            GOOD_LINE + json.dumps({"name": "Zed", "type": {"t": 1}}).encode(),
            "entry 2: type is dict, not text",
        ),
        (
            "big.csv",
            b"name,type\nAcme,ORG\n" + b"A" * 200_000 + b",ORG\n",
            "big.csv, line 3: not CSV (field larger than field limit",
        ),
        (
            "latin1.jsonl",
            GOOD_LINE + '{"name": "Café", "type": "ORG"}\n'.encode("latin-1"),
            "latin1.jsonl, line 2: not UTF-8 (byte 0xe9)",
        ),
        ("huge.jsonl", GOOD_LINE + b'{"name": ' + b"9" * 5000 + b"}\n", "line 2: not usable"),
    ],
)
def test_a_malformed_import_is_one_error_naming_the_line_and_adds_nothing(
    posts, tmp_path, name, data, message
):
    f = _import_file(tmp_path, name, data)
    with pytest.raises(BadArgument) as e:
        gz.import_entries(posts, f)
    assert message in str(e.value) and name in str(e.value)
    assert gz.listing(posts) == []


def test_an_import_that_is_a_pipe_is_refused_at_once(posts, tmp_path):
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(BadArgument, match="named pipe"):
        _soon(gz.import_entries, posts, tmp_path / "pipe.jsonl", pipe=tmp_path / "pipe.jsonl")


def test_a_csv_entry_error_names_its_line(posts, tmp_path):
    f = _import_file(tmp_path, "people.csv", b"name,type\nAcme,ORG\nZed,PLANET\n")
    with pytest.raises(BadArgument, match=r"people.csv, entry 2 \(line 3\): unknown type"):
        gz.import_entries(posts, f)


EVIL = "\x1b[31mEvil\x07"  # names keep ESC and BEL (\r and \n are folded to spaces)


def test_gazetteer_and_entity_output_escapes_control_characters(posts):
    gz.add(posts, f"{EVIL} Corp", "ORG", [f"Alias{EVIL}"], actor="ann", note="why\r\x1b[2K")
    (entry_id,) = gz.add(posts, "Plain", "ORG", actor=f"agent:{EVIL}").entry_ids
    runner, db = CliRunner(), str(posts.db)
    outputs = {
        "list": runner.invoke(app, ["gazetteer", "list", "--db", db]),
        "show": runner.invoke(app, ["gazetteer", "show", "gz:31mevil-corp", "--db", db]),
        "show plain": runner.invoke(app, ["gazetteer", "show", entry_id, "--db", db]),
        "entities": runner.invoke(app, ["entities", "--db", db, "--type", "ORG"]),
        "entity": runner.invoke(app, ["entity", "Plain", "--db", db]),
    }
    for what, result in outputs.items():
        assert result.exit_code == 0, (what, result.output)
        assert not {"\x1b", "\x07", "\r"} & set(result.output), what
        assert "\\x1b[31mEvil\\x07" in result.output, what
    assert "why\\r\\x1b[2K" in outputs["show"].output
    listed = json.loads(runner.invoke(app, ["gazetteer", "list", "--db", db, "--json"]).output)
    assert f"{EVIL} Corp" in [e["name"] for e in listed["entries"]]  # JSON keeps the name as it is


def test_document_authors_are_escaped_in_entities(tmp_path):
    root = tmp_path / "authors"
    root.mkdir()
    (root / "a.md").write_text('---\nauthor: "\\e[31mMallory"\n---\n# A\n\nText.\n')
    index(root, registry=Registry([]))
    result = CliRunner().invoke(app, ["entities", "--db", str(Index.for_root(root).db)])
    assert result.exit_code == 0, result.output
    assert "\\x1b[31mMallory" in result.output and "\x1b" not in result.output


def test_a_file_its_parser_fails_on_is_read_as_plain_text_and_said(tmp_path):
    """LaTeX nested 20,000 braces deep exhausts the parser's recursion: the file's words
    are indexed as plain text (markup and all) rather than lost, cited at their lines,
    and the index and status say so; a later stat-only change keeps the note."""
    root = tmp_path / "docs"
    root.mkdir()
    deep = "{" * 20_000 + "x" + "}" * 20_000
    tex = f"\\documentclass{{article}}\n\\begin{{document}}\n{deep}\n\nquinceword here\n"
    (root / "deep.tex").write_text(tex + "\\end{document}\n")
    (root / "ok.md").write_text("# Ok\n\nplumword\n")
    r = index(root, registry=Registry([]), workers=1)
    assert (r.new, r.failed) == (2, 0)
    [note] = r.failures
    assert note["path"] == "deep.tex" and note["status"] == "ok"
    assert note["error"].startswith("read as plain text") and "RecursionError" in note["error"]
    idx = Index.for_root(root)
    [hit] = search(idx, "quinceword").hits
    lines = (root / "deep.tex").read_text().split("\n")[hit.start_line - 1 : hit.end_line]
    assert hit.path == "deep.tex" and any("quinceword" in line for line in lines)
    assert [h.path for h in search(idx, "plumword").hits] == ["ok.md"]
    listed = {f["path"]: f for f in status(idx).failures}
    assert listed["deep.tex"]["status"] == "ok" and "plain text" in listed["deep.tex"]["error"]
    st = os.stat(root / "deep.tex")
    os.utime(root / "deep.tex", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert index(root, registry=Registry([]), workers=1).unchanged == 2
    assert "plain text" in {f["path"]: f for f in status(idx).failures}["deep.tex"]["error"]


def test_a_folder_with_no_index_is_index_not_found_and_a_home_path_is_expanded(
    tmp_path, monkeypatch
):
    """Through kbx.api a folder never indexed was a SchemaError ("database does not
    exist", exit 5) where the CLI says IndexNotFound (exit 3); and ``~/notes``, as
    README writes it, was looked for under the working directory."""
    from kbx.errors import IndexNotFound

    monkeypatch.setenv("HOME", str(tmp_path))
    notes = tmp_path / "notes"
    notes.mkdir()
    idx = Index.for_root("~/notes")
    assert idx.root == notes.resolve()
    with pytest.raises(IndexNotFound, match="no index at"):
        status(idx)
    (notes / "a.md").write_text("# A\n\nThe plum widget spins.\n")
    index(notes)
    assert status(Index.for_root("~/notes")).documents == {"ok": 1}
