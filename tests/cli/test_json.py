"""Every command's --json, run in process through ``main()``: one object with the documented
keys, and an error as one object with its code. Every command of the CLI, gazetteer
subcommands included, is run here at least once (the list is read from the app)."""

from __future__ import annotations

import json
import shlex
import socket

import pytest
import typer.main
from inprocess import run_cli

from kbx import __version__
from kbx.cli.app import app

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("json") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY + "\n[dense]\nenable = false\n")  # embed: off
    (root / "a.md").write_text(
        "---\nauthor: Ann Lee\ndate: 2021-03-04\n---\n# Cedar\n\nProject Cedar cites "
        "doi:10.1000/xyz123 and costs $1,200.\n"
    )
    (root / "b.txt").write_text("Notes\n\nThe supplier approval took 5 days in 2022.\n")
    (root.parent / "entries.jsonl").write_text('{"name": "Bo Chen", "type": "PERSON"}\n')
    return root


def run(*args: str) -> tuple[int, object]:
    r = run_cli(*args, "--json")
    return r.returncode, json.loads(r.stdout) if r.stdout.strip() else None


COMMANDS = [  # (arguments as a shell splits them, keys the object must have), in this order
    ("index {root}", {"root", "new", "failures", "units_added", "seconds"}),
    ("status --db {db}", {"documents", "units", "failures", "problems", "recognizers"}),
    ("search cedar --db {db}", {"query", "hits", "total", "facets", "notes"}),
    ("grep Cedar --db {db}", {"pattern", "matches", "total", "files"}),
    ("read a.md:5-7 --db {db}", {"path", "start_line", "lines", "hash", "changed"}),
    ("mentions a.md --db {db}", {"spec", "mentions"}),
    ("recognizers --db {db}", {"recognizers", "unavailable"}),
    ("reprocess --dry-run --db {db}", {"plan", "done", "dry_run"}),
    ("embed --db {db}", {"units", "model", "off"}),
    ("entities --db {db}", {"entities"}),
    ("entity doi:10.1000/xyz123 --db {db}", {"entity_id", "aliases", "mentions"}),
    ("resolve --db {db}", {"todo", "found", "not_found", "failures", "offline"}),
    ("export parquet --out {root}/../parquet --db {db}", {"format", "out", "mentions", "files"}),
    (
        "gazetteer add 'Project Cedar' --type PROJECT --by agent:t --db {db}",
        {"entry_ids", "version", "units_rerun"},
    ),
    ("gazetteer list --db {db}", {"entries"}),
    ("gazetteer show gz:project-cedar --db {db}", {"entry_id", "log"}),
    ("gazetteer check --db {db}", {"found"}),
    ("gazetteer import {entries} --db {db}", {"entry_ids", "version"}),
    (
        "gazetteer retract gz:project-cedar --by agent:t --why 'a test' --db {db}",
        {"entry_ids", "version", "units_rerun"},
    ),
]


def _name(line: str) -> str:
    """The command a line runs: its first word, or two for a gazetteer subcommand."""
    words = line.split()
    return " ".join(words[:2] if words[0] == "gazetteer" else words[:1])


# the commands without --json, run below (mcp and serve, long-lived: in tests/serve)
PLAIN = {"version", "gazetteer export", "mcp", "serve"}


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_every_command_prints_one_object_with_its_keys(root, monkeypatch):
    monkeypatch.chdir(root)
    monkeypatch.setenv("KBX_CROSSREF_URL", _closed_port())  # resolve: offline, said in one
    monkeypatch.setenv("KBX_OPENALEX_URL", _closed_port())  # object; nothing fetched
    db = str(root / ".kbx" / "index.duckdb")
    entries = str(root.parent / "entries.jsonl")
    outputs = {}
    for line, keys in COMMANDS:
        code, out = run(*(a.format(root=root, db=db, entries=entries) for a in shlex.split(line)))
        assert code == 0, (line, out)
        assert isinstance(out, dict), line
        assert keys <= set(out), (line, keys - set(out))
        outputs[_name(line)] = out
    assert outputs["index"]["new"] == 2 and outputs["resolve"]["offline"]
    assert "dense retrieval is off" in outputs["embed"]["off"]
    assert outputs["gazetteer import"]["entry_ids"] == ["gz:bo-chen"]
    assert outputs["gazetteer retract"]["entry_ids"] == ["gz:project-cedar"]


def test_the_commands_without_json_print_text(tmp_path):
    r = run_cli("version")
    assert r.returncode == 0 and r.stdout == f"{__version__}\n"
    (tmp_path / "kbx.toml").write_text(RULES_ONLY)
    (tmp_path / "c.md").write_text("# Cedar\n\nCedar grows.\n")
    run_cli("index", str(tmp_path))
    r = run_cli("gazetteer", "add", "Cedar", "--type", "PROJECT", "--by", "agent:t", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("gazetteer", "export", cwd=tmp_path)
    assert r.returncode == 0
    (entry,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert (entry["entry_id"], entry["added_by"]) == ("gz:cedar", "agent:t")


def test_an_error_is_one_object_with_its_code(tmp_path):
    r = run_cli("status", "--json", cwd=tmp_path)
    out = json.loads(r.stdout)
    assert r.returncode == 3 and out["error"] == "IndexNotFound" and out["code"] == 3
    assert set(out) == {"error", "code", "message", "hint"} and r.stderr == ""


def _leaves(command, path=()):
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield " ".join(path), any("--json" in p.opts for p in command.params)
        return
    for name, sub in subcommands.items():
        yield from _leaves(sub, (*path, name))


def test_every_command_is_covered():
    commands = dict(_leaves(typer.main.get_command(app)))
    run_with_json = {_name(line) for line, _ in COMMANDS}
    assert run_with_json == {name for name, has_json in commands.items() if has_json}
    assert {name for name, has_json in commands.items() if not has_json} == PLAIN
