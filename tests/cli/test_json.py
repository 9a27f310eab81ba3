"""Every command's --json, run in process: one object with the documented keys, and an
error as one object with its code. Each command of the CLI is run here at least once."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kbx.cli.app import app

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("json") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "a.md").write_text(
        "---\nauthor: Ann Lee\ndate: 2021-03-04\n---\n# Cedar\n\nProject Cedar cites "
        "doi:10.1000/xyz123 and costs $1,200.\n"
    )
    (root / "b.txt").write_text("Notes\n\nThe supplier approval took 5 days in 2022.\n")
    return root


def run(root, *args: str) -> tuple[int, object]:
    r = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False, env={"COLUMNS": "200"})
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip() else None


COMMANDS = [  # (arguments, keys the object must have)
    (("index", "{root}"), {"root", "new", "failures", "units_added", "seconds"}),
    (("status", "--db", "{db}"), {"documents", "units", "failures", "problems", "recognizers"}),
    (("search", "cedar", "--db", "{db}"), {"query", "hits", "total", "facets", "notes"}),
    (("grep", "Cedar", "--db", "{db}"), {"pattern", "matches", "total", "files"}),
    (("read", "a.md:5-7", "--db", "{db}"), {"path", "start_line", "lines", "hash", "changed"}),
    (("mentions", "a.md", "--db", "{db}"), {"spec", "mentions"}),
    (("recognizers", "--db", "{db}"), {"recognizers", "unavailable"}),
    (("reprocess", "--dry-run", "--db", "{db}"), {"plan", "done", "dry_run"}),
    (("entities", "--db", "{db}"), {"entities"}),
    (("entity", "doi:10.1000/xyz123", "--db", "{db}"), {"entity_id", "aliases", "mentions"}),
    (
        (
            "gazetteer",
            "add",
            "Project Cedar",
            "--type",
            "PROJECT",
            "--by",
            "agent:t",
            "--db",
            "{db}",
        ),
        {"entry_ids", "version", "units_rerun"},
    ),
    (("gazetteer", "list", "--db", "{db}"), {"entries"}),
    (("gazetteer", "show", "gz:project-cedar", "--db", "{db}"), {"entry_id", "log"}),
    (("gazetteer", "check", "--db", "{db}"), {"found"}),
]


def test_every_command_prints_one_object_with_its_keys(root, monkeypatch):
    monkeypatch.chdir(root)
    db = str(root / ".kbx" / "index.duckdb")
    for args, keys in COMMANDS:
        code, out = run(root, *(a.format(root=root, db=db) for a in args))
        assert code == 0, args
        assert isinstance(out, dict), args
        assert keys <= set(out), (args, keys - set(out))


def test_every_command_is_covered():
    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    covered = {args[0] for args, _ in COMMANDS} | {"version", "resolve"}  # see test_resolve
    assert names - covered == set()
