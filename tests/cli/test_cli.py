"""The command line: exit codes, state read back, and the exact error lines."""

from __future__ import annotations

import json
import sys

import duckdb
import pytest
from helpers import run_kbx

from kbx.search.status import status
from kbx.store.db import Index


def test_index_status_read_round_trip(corpus):
    r = run_kbx("index", str(corpus), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["new"] == 5 and report["failed"] == 0
    assert status(Index.for_root(corpus)).documents == {"ok": 5}

    r = run_kbx("status", cwd=corpus / "notes")  # found from a subfolder, like git
    assert r.returncode == 0 and "documents  5 (5 ok)" in r.stdout

    r = run_kbx("read", "notes/cedar.md:7-7", "-n", cwd=corpus)
    assert r.returncode == 0 and r.stdout == "7  # Project Cedar\n"

    r = run_kbx("read", "web.html:1-2", "--hash", "0123456789ab", cwd=corpus)
    assert r.returncode == 0
    assert "web.html has changed since it was indexed" in r.stderr


def test_errors_are_one_line_and_non_zero(tmp_path, corpus):
    r = run_kbx("status", cwd=tmp_path)
    assert r.returncode == 3  # no index found
    assert r.stderr.strip() == (
        "error: no kbx index here or in any parent folder; run `kbx index PATH` first "
        "or pass --db FILE"
    )
    run_kbx("index", str(corpus))
    r = run_kbx("read", "../x.md:1", cwd=corpus)
    assert r.returncode == 2 and r.stderr.startswith("error: no such file")
    r = run_kbx("index", str(corpus), "--max-size", "lots")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: --max-size: expected a size like 50MB or 200K, got 'lots'"
    assert "Traceback" not in r.stderr


def test_every_command_teaches_by_example():
    for command in ("index", "status", "read", "search", "grep", "reprocess", "entities",
                    "entity", "gazetteer add", "gazetteer retract"):  # fmt: skip
        r = run_kbx(*command.split(), "--help")
        assert r.returncode == 0 and "Example" in r.stdout, command


def test_search_and_grep_from_the_command_line(corpus):
    run_kbx("index", str(corpus))
    r = run_kbx("search", "supplier approval", "-k", "2", cwd=corpus)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("notes/cedar.md  ")
    assert "exact matches of 'supplier approval'" in r.stdout
    r = run_kbx("search", "supplier approval", "--json", cwd=corpus)
    data = json.loads(r.stdout)
    hit = data["hits"][0]
    assert {"path", "start_line", "end_line", "hash", "score", "text"} <= set(hit)
    r = run_kbx("grep", "ERR_\\d+", "--json", cwd=corpus)
    assert json.loads(r.stdout)["matches"][0]["path"] == "web.html"
    r = run_kbx("grep", "(", cwd=corpus)
    assert r.returncode == 2 and r.stderr.startswith("error: bad regular expression")


def test_gazetteer_entities_and_facets_from_the_command_line(corpus):
    run_kbx("index", str(corpus))
    r = run_kbx(
        "gazetteer", "add", "Project Cedar", "-t", "PROJECT", "-a", "Cedar",
        "--by", "agent:planner", "--source", "notes/cedar.md", "--json", cwd=corpus,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["entry_ids"] == ["gz:project-cedar"]
    r = run_kbx("gazetteer", "add", "Cedar Inc", "-t", "ORG", "-a", "cedar", cwd=corpus)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "error: 'cedar' is already an alias of gz:project-cedar (Project Cedar)"
    )
    r = run_kbx("entities", "--type", "PROJECT", "--json", cwd=corpus)
    (cedar,) = json.loads(r.stdout)["entities"]
    assert cedar["entity_id"] == "gz:project-cedar" and cedar["documents"] >= 1
    r = run_kbx("entity", "Cedar", cwd=corpus)
    assert r.returncode == 0 and "add by agent:planner" in r.stdout
    assert "notes/cedar.md:" in r.stdout
    r = run_kbx("search", "supplier", "--entity", "Cedar", "--after", "2021", "--json", cwd=corpus)
    body = json.loads(r.stdout)
    assert {h["path"] for h in body["hits"]} == {"notes/cedar.md"}
    assert body["facets"]["passages"] >= 1  # always in --json
    r = run_kbx("search", "supplier", "--entity", "Cedr", cwd=corpus)
    assert r.returncode == 2 and "did you mean 'Project Cedar'" in r.stderr
    r = run_kbx("gazetteer", "export", "-f", "csv", cwd=corpus)
    assert r.stdout.splitlines()[1].startswith("gz:project-cedar,Project Cedar,PROJECT")


@pytest.mark.parametrize("as_json", [False, True])
def test_a_bug_is_said_as_such_and_its_traceback_kept(monkeypatch, capsys, tmp_path, as_json):
    import tempfile

    from kbx.cli import app as cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli.api.Index, "find", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["kbx", "status", *(["--json"] if as_json else [])])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 70
    out, err = capsys.readouterr()
    text = json.loads(out)["message"] if as_json else err
    assert "kbx hit a bug (ZeroDivisionError: division by zero)" in text
    assert "Traceback" not in out + err and ".kbx" not in text
    (saved,) = tmp_path.glob("kbx-bug-*.txt")
    assert "Traceback" in saved.read_text() and "ZeroDivisionError" in saved.read_text()
    if as_json:
        assert json.loads(out)["code"] == 70 and json.loads(out)["error"] == "InternalError"


def test_exit_codes_name_what_went_wrong(tmp_path):
    r = run_kbx("search", "x", "--json", cwd=tmp_path)
    assert r.returncode == 3 and json.loads(r.stdout)["error"] == "IndexNotFound"
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nwords\n")
    run_kbx("index", str(root))
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"))
    con.execute("UPDATE kbx_meta SET value = 'x2' WHERE key = 'schema_version'")
    con.close()
    r = run_kbx("status", cwd=root)
    assert r.returncode == 5 and "records schema version 'x2'" in r.stderr
    assert "Traceback" not in r.stderr and "delete" not in r.stderr


def test_validation_agrees_across_commands(corpus):
    run_kbx("index", str(corpus))
    for args in (
        ("mentions", "notes/cedar.md", "--type", "bogus"),
        ("entities", "--type", "NOPE"),
        ("search", "cedar", "--type", "bogus"),
    ):
        r = run_kbx(*args, cwd=corpus)
        assert r.returncode == 2 and "unknown mention type" in r.stderr, args
    r = run_kbx("index", str(corpus), "--workers", "-5")
    assert r.returncode == 2 and "greater than or equal to 0" in r.stderr
