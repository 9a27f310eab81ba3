"""kbx export on the command line: exit codes, the files read back, the error lines."""

from __future__ import annotations

import json

import pytest
from helpers import unchanged
from inprocess import run_cli

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("export-cli") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "a.md").write_text("# A\n\nShipped on 5 May 2022, cited as doi:10.1000/xyz123.\n")
    assert run_cli("index", str(root)).returncode == 0
    from kbx.store.db import Index

    with unchanged(Index.for_root(root)):
        yield root


def test_jsonl_goes_to_standard_output_and_the_summary_to_stderr(root):
    r = run_cli("export", "jsonl", "--type", "DATE", cwd=root)
    assert r.returncode == 0, r.stderr
    (row,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert (row["path"], row["text"], row["start_line"]) == ("a.md", "5 May 2022", 3)
    assert "1 mentions of 1 passages in 1 documents written as jsonl to standard output" in (
        r.stderr
    )


def test_json_is_the_report(root, tmp_path):
    r = run_cli("export", "parquet", "--out", str(tmp_path / "t"), "--json", cwd=root)
    assert r.returncode == 0, r.stdout
    report = json.loads(r.stdout)
    assert report["format"] == "parquet" and report["out"] == str(tmp_path / "t")
    assert (report["documents"], report["mentions"], report["files"]) == (1, 2, 7)
    assert {"units", "renamed", "unaligned", "expanded", "stale", "seconds", "notes"} <= set(report)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["conll", "--out", "{tmp}/x"], "unknown export format 'conll'; choose from brat, "),
        (["brat"], "brat needs --out DIR: where to write the export"),
        (["jsonl", "--json"], "--json prints the report on standard output: give --out FILE"),
        (["brat", "--out", "{tmp}/full"], "is a folder that is not empty; choose a new one"),
        (["jsonl", "--out", "{tmp}/full/f.txt/x.jsonl"], "cannot write --out"),
        (["jsonl", "--recognizer", "nope", "--out", "{tmp}/x"], "no such recognizer ran"),
        (["jsonl", "--entity", "Nobody", "--out", "{tmp}/x"], "Nobody"),
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2(root, tmp_path, args, message):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f.txt").write_text("kept\n")
    r = run_cli("export", *(a.format(tmp=tmp_path) for a in args), cwd=root)
    assert r.returncode == 2, (r.stdout, r.stderr)
    said = json.loads(r.stdout)["message"] if "--json" in args else r.stderr  # one object
    assert message in " ".join(said.split()) and (said is not r.stderr or said.startswith("error:"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # nothing else written
    assert (tmp_path / "full" / "f.txt").read_text() == "kept\n"
