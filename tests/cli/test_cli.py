"""The command line, run in process through ``main()``: exit codes, state read back through
the library, and the exact error lines. test_process.py runs a few of these as a real
``kbx`` process, to show that the two agree."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys

import duckdb
import pytest
from helpers import copy_index, unchanged
from inprocess import run_cli

from kbx import __version__
from kbx.search.status import status
from kbx.store.db import Index

RULES_AND_ACRONYMS = '[recognizers]\ndisable = ["spacy", "gliner"]\n'
RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'


@pytest.fixture(scope="module")
def shared(tmp_path_factory, indexed_corpus_template):
    """The corpus as ``kbx index`` leaves it (a copy of the run's build; the command itself is
    tested by the round trip below), for the tests that only read it (checked)."""
    root = copy_index(indexed_corpus_template, tmp_path_factory.mktemp("cli") / "docs").root
    with unchanged(Index.for_root(root)):
        yield root


def test_index_status_read_round_trip(corpus):
    r = run_cli("index", str(corpus), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["new"] == 5 and report["failed"] == 0
    assert status(Index.for_root(corpus)).documents == {"ok": 5}

    r = run_cli("status", cwd=corpus / "notes")  # found from a subfolder, like git
    assert r.returncode == 0 and "documents  5 (5 ok)" in r.stdout
    r = run_cli("status", str(corpus / "notes"), "--json", cwd=corpus.parent)  # as index takes it
    assert r.returncode == 0 and json.loads(r.stdout)["root"] == str(corpus.resolve())

    r = run_cli("read", "notes/cedar.md:7-7", "-n", cwd=corpus)
    assert r.returncode == 0 and r.stdout == "7  # Project Cedar\n"

    r = run_cli("read", "web.html:1-2", "--hash", "0123456789ab", cwd=corpus)
    assert r.returncode == 2  # a wrong hash is said to be wrong, not blamed on the index
    assert "--hash 0123456789ab: not a hash of web.html, as indexed (" in r.stderr
    sha = hashlib.sha256((corpus / "web.html").read_bytes()).hexdigest()
    (corpus / "web.html").write_text((corpus / "web.html").read_text() + "\nmore\n")
    r = run_cli("read", "web.html:1-2", "--hash", sha[:12], cwd=corpus)
    assert r.returncode == 0 and "web.html has changed since it was indexed" in r.stderr


def test_errors_are_one_line_and_non_zero(tmp_path, shared):
    r = run_cli("status", cwd=tmp_path)
    assert r.returncode == 3  # no index found
    assert r.stderr.strip() == (
        "error: no kbx index here or in any parent folder; run `kbx index PATH` first "
        "or pass --db FILE"
    )
    r = run_cli("read", "../x.md:1", cwd=shared)
    assert r.returncode == 2 and r.stderr.startswith("error: no such file")
    r = run_cli("index", str(tmp_path), "--max-size", "lots")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: --max-size: expected a size like 50MB or 200K, got 'lots'"
    assert "Traceback" not in r.stderr
    assert not (tmp_path / ".kbx").exists()  # refused before anything was written


def test_every_command_teaches_by_example():
    for command in ("index", "status", "read", "search", "grep", "reprocess", "entities",
                    "entity", "gazetteer add", "gazetteer retract"):  # fmt: skip
        r = run_cli(*command.split(), "--help")
        assert r.returncode == 0 and "Example" in r.stdout, command


def test_version_prints_the_package_version():
    r = run_cli("version")
    assert r.returncode == 0 and r.stdout == f"{__version__}\n"


def test_search_and_grep_from_the_command_line(shared):
    r = run_cli("search", "supplier approval", "-k", "2", cwd=shared)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].startswith("notes/cedar.md ")  # after the legend
    assert "exact matches of 'supplier approval'" in r.stdout
    r = run_cli("search", "supplier approval", "--json", cwd=shared)
    data = json.loads(r.stdout)
    hit = data["hits"][0]
    assert {"path", "start_line", "end_line", "hash", "score", "text"} <= set(hit)
    r = run_cli("grep", "ERR_\\d+", "--json", cwd=shared)
    assert json.loads(r.stdout)["matches"][0]["path"] == "web.html"
    r = run_cli("grep", "ERR_\\d+", "-C", "1", cwd=shared)
    match, *context = r.stdout.splitlines()
    assert r.returncode == 0 and match.startswith("web.html:7 #") and "**ERR_4021**" in match
    assert context == [f"    {n}: {line}" for n, line in _lines(shared / "web.html", 6, 8)]
    r = run_cli("grep", "(", cwd=shared)
    assert r.returncode == 2 and r.stderr.startswith("error: bad regular expression")


def _lines(path, start: int, end: int) -> list[tuple[int, str]]:
    text = path.read_text().splitlines()
    return [(n, text[n - 1]) for n in range(start, end + 1)]


def test_mentions_are_listed_at_their_lines(shared):
    r = run_cli("mentions", "web.html", cwd=shared)
    assert r.returncode == 0, r.stderr
    line = r"web.html:13  QUANTITY 250 ms  → 0.25 s  \(1.00, quantities \S+\)\n"  # any version
    assert re.fullmatch(line, r.stdout)
    assert "250 ms" in _lines(shared / "web.html", 13, 13)[0][1]
    r = run_cli("mentions", "notes/cedar.md", "--type", "ACRONYM", cwd=shared)
    assert r.stdout == "notes/cedar.md:14  ACRONYM ISO  → ISO  (0.50, acronyms 1)\n"
    r = run_cli("mentions", "notes/cedar.md:1-8", "--type", "ACRONYM", cwd=shared)
    assert r.returncode == 0 and r.stdout == "no mentions\n"


def test_gazetteer_entities_and_facets_from_the_command_line(indexed_corpus):
    corpus = indexed_corpus  # as `kbx index` leaves it (that run is tested above)
    r = run_cli(
        "gazetteer", "add", "Project Cedar", "-t", "PROJECT", "-a", "Cedar",
        "--by", "agent:planner", "--source", "notes/cedar.md", "--json", cwd=corpus,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["entry_ids"] == ["gz:project-cedar"]
    r = run_cli("gazetteer", "add", "Cedar Inc", "-t", "ORG", "-a", "cedar", cwd=corpus)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "error: 'cedar' is already an alias of gz:project-cedar (Project Cedar)"
    )
    r = run_cli("entities", "--type", "PROJECT", "--json", cwd=corpus)
    (cedar,) = json.loads(r.stdout)["entities"]
    assert cedar["entity_id"] == "gz:project-cedar" and cedar["documents"] >= 1
    r = run_cli("entity", "Cedar", cwd=corpus)
    assert r.returncode == 0 and "add by agent:planner" in r.stdout
    assert "notes/cedar.md:" in r.stdout
    r = run_cli("search", "supplier", "--entity", "Cedar", "--after", "2021", "--json", cwd=corpus)
    body = json.loads(r.stdout)
    assert {h["path"] for h in body["hits"]} == {"notes/cedar.md"}
    assert body["facets"]["passages"] >= 1  # always in --json
    r = run_cli("search", "supplier", "--entity", "Cedr", cwd=corpus)
    assert r.returncode == 2 and "did you mean 'Project Cedar'" in r.stderr
    r = run_cli("gazetteer", "export", "-f", "csv", cwd=corpus)
    assert r.stdout.splitlines()[1].startswith("gz:project-cedar,Project Cedar,PROJECT")


def _rules_only(tmp_path, toml: str = RULES_ONLY):
    root = tmp_path / "small"
    root.mkdir()
    (root / "kbx.toml").write_text(toml)
    (root / "cedar.md").write_text(
        "# Project Cedar\n\nCedar needs NASA approval.\n\n## Later\n\nCedar shipped in 2022.\n"
    )
    r = run_cli("index", str(root))
    assert r.returncode == 0, r.stderr
    return root


def test_gazetteer_retract_import_and_history_from_the_command_line(tmp_path):
    root = _rules_only(tmp_path)
    idx = Index.for_root(root)
    r = run_cli("gazetteer", "add", "Project Cedar", "-t", "PROJECT", "-a", "Cedar",
                "--by", "ann", cwd=root)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("added gz:project-cedar; gazetteer ")
    assert _mentions(idx, "gazetteer") == 3  # "Project Cedar", then "Cedar" twice
    r = run_cli("gazetteer", "export", cwd=root)
    (entry,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert (entry["entry_id"], entry["name"], entry["type"], entry["added_by"]) == (
        "gz:project-cedar", "Project Cedar", "PROJECT", "ann",
    )  # fmt: skip
    dump = tmp_path / "entries.jsonl"  # without its author, the entry is carol's (--by)
    dump.write_text(json.dumps({k: v for k, v in entry.items() if k != "added_by"}) + "\n")

    r = run_cli("gazetteer", "retract", "gz:project-cedar", "--by", "bo", "--why", "merged",
                cwd=root)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("retracted gz:project-cedar; gazetteer ")
    assert _mentions(idx, "gazetteer") == 0  # its mentions left search
    r = run_cli("gazetteer", "list", cwd=root)
    assert r.stdout.startswith("the gazetteer is empty")
    r = run_cli("gazetteer", "list", "--retracted", cwd=root)
    assert "RETRACTED by bo: merged" in r.stdout
    r = run_cli("gazetteer", "retract", "gz:project-cedar", "--by", "bo", "--why", "again",
                cwd=root)  # fmt: skip
    assert r.returncode == 2 and "already retracted" in r.stderr

    r = run_cli("gazetteer", "import", str(dump), "--by", "carol", cwd=root)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("imported 1 entries: gz:project-cedar; gazetteer ")
    assert _mentions(idx, "gazetteer") == 3  # back in search
    r = run_cli("gazetteer", "show", "gz:project-cedar", cwd=root)
    head, aliases, *log = r.stdout.splitlines()
    assert head == "gz:project-cedar  PROJECT  Project Cedar"
    assert aliases == "  aliases: Project Cedar | Cedar"
    assert [line.split("  ")[2] for line in log] == [
        "add by ann", "retract by bo: merged", "restore by carol",
    ]  # fmt: skip

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "Acme", "type": "ORG"}\n{"name": "", "type": "ORG"}\n')
    r = run_cli("gazetteer", "import", str(bad), cwd=root)
    assert r.returncode == 2 and r.stderr.startswith("error: bad.jsonl, entry 2")
    r = run_cli("entities", "--q", "Acme", cwd=root)
    assert r.stdout == "no entity matches\n"  # one bad entry and nothing is added


def _mentions(idx: Index, recognizer: str) -> int:
    with idx.reader() as con:
        sql = "SELECT count(*) FROM mentions WHERE recognizer = ?"
        return con.execute(sql, [recognizer]).fetchone()[0]


def test_recognizers_are_listed_and_an_uninstalled_ones_mentions_purged(tmp_path):
    root = _rules_only(tmp_path, RULES_AND_ACRONYMS)
    idx = Index.for_root(root)
    r = run_cli("recognizers", cwd=root)
    assert r.returncode == 0, r.stderr
    assert "acronyms 1  [ACRONYM]  boost  2/2 units, 1 mentions" in r.stdout.splitlines()
    assert not any(line.startswith(("spacy", "gliner")) for line in r.stdout.splitlines())
    assert any(line.startswith("dates ") and "filter" in line for line in r.stdout.splitlines())

    (root / "kbx.toml").write_text(RULES_ONLY)
    r = run_cli("recognizers", cwd=root)
    assert (
        "acronyms 1  not installed: 1 mentions on 2 units remain "
        "(`kbx recognizers --purge acronyms` drops them)"
    ) in r.stdout.splitlines()
    r = run_cli("recognizers", "--purge", "dates", cwd=root)
    assert r.returncode == 2 and "dates is installed and on" in r.stderr
    assert _mentions(idx, "acronyms") == 1  # refused: nothing dropped
    r = run_cli("recognizers", "--purge", "acronyms", cwd=root)
    assert r.returncode == 0 and r.stdout == "purged acronyms: 1 mentions removed\n"
    assert _mentions(idx, "acronyms") == 0
    with idx.reader() as con:
        runs = con.execute("SELECT count(*) FROM runs WHERE recognizer = 'acronyms'").fetchone()
    assert runs == (0,)
    r = run_cli("recognizers", "--purge", "acronyms", "--json", cwd=root)
    assert r.returncode == 2 and json.loads(r.stdout)["code"] == 2  # nothing of it is left


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
    r = run_cli("search", "x", "--json", cwd=tmp_path)
    assert r.returncode == 3 and json.loads(r.stdout)["error"] == "IndexNotFound"
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "a.md").write_text("# A\n\nwords\n")
    run_cli("index", str(root))
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"))
    con.execute("UPDATE kbx_meta SET value = 'x2' WHERE key = 'schema_version'")
    con.close()
    r = run_cli("status", cwd=root)
    assert r.returncode == 5 and "records schema version 'x2'" in r.stderr
    assert "Traceback" not in r.stderr and "delete" not in r.stderr


def test_validation_agrees_across_commands(shared):
    for args in (
        ("mentions", "notes/cedar.md", "--type", "bogus"),
        ("entities", "--type", "NOPE"),
        ("search", "cedar", "--type", "bogus"),
    ):
        r = run_cli(*args, cwd=shared)
        assert r.returncode == 2 and "unknown mention type" in r.stderr, args
    r = run_cli("index", str(shared), "--workers", "-5")
    assert (
        r.returncode == 2
        and "Invalid value for '--workers': -5 is not in the range x>=0" in r.stderr
    )


def test_help_prose_wraps_to_the_terminal_without_orphaned_words():
    """The docstrings' own line ends were kept, so at 80 columns the help left single
    words on lines of their own ("under", "its line")."""
    r = subprocess.run(
        [sys.executable, "-m", "kbx", "search", "--help"],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"}, timeout=60,
    )  # fmt: skip
    lines = [ln.strip() for ln in r.stdout.split("Examples:")[0].splitlines()]
    assert r.returncode == 0 and "best file first," in r.stdout
    assert not [ln for ln in lines if ln and len(ln.split()) == 1 and not ln.endswith(":")]
