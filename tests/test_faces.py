"""Each command is defined once (``kbx.options``) and every face takes exactly what the
definition has: the typer CLI's options, the MCP tools' input schemas and the HTTP API's
parameters are generated from it, so a filter added to ``Filters`` reaches them all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import typer

from kbx import api
from kbx.cli.app import app
from kbx.errors import BadArgument
from kbx.faces import given, params, reference, schema
from kbx.options import COMMANDS, Filters

COMMON_CLI = {"--db", "--json"}


def _cli_command(name: str):
    """The click command ``kbx NAME`` (``gazetteer add`` inside its group)."""
    group = typer.main.get_command(app)
    found = group
    for part in name.split():
        found = found.commands[part]
    return found


def _cli_names(command) -> set[str]:
    """Each parameter of a click command by its long flag (or its only flag, or its
    name for an argument)."""
    names = set()
    for p in command.params:
        if p.param_type_name == "argument":
            names.add(p.name)
            continue
        flags = [f for f in p.opts if f.startswith("--")] or p.opts
        names.add(flags[0])
    return names


def _expected_cli(definition) -> set[str]:
    out = set()
    for p in params(definition.options):
        if api.CLI not in p.opt.faces:
            continue
        if p.opt.argument:
            out.add(p.attr)
        elif p.opt.flags:
            out.add(p.opt.flags[0])
        else:
            out.add(f"--{p.name}")
    return out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_cli_takes_exactly_what_the_definition_has(name):
    definition = COMMANDS[name]
    common = COMMON_CLI if definition.json else COMMON_CLI - {"--json"}
    assert _cli_names(_cli_command(name)) == _expected_cli(definition) | common


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if api.MCP in c.faces))
def test_the_mcp_tool_takes_exactly_what_the_definition_has(name):
    from kbx.serve.mcp import tool  # the serve extra

    definition = COMMANDS[name]
    t = tool(None, definition)
    expected = {p.name for p in params(definition.options) if api.MCP in p.opt.faces}
    assert t.name == definition.tool
    assert set(t.parameters["properties"]) == expected
    assert t.parameters == schema(definition.options, api.MCP)


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if api.HTTP in c.faces))
def test_the_http_api_takes_exactly_what_the_definition_has(name):
    definition = COMMANDS[name]
    expected = {p.name_on(api.HTTP) for p in params(definition.options) if api.HTTP in p.opt.faces}
    with pytest.raises(BadArgument) as refused:
        given(definition.options, {"no-such": ["1"]}, api.HTTP, name, repeated=True)
    taken = str(refused.value).split("; it takes ")[1]
    assert set(taken.split(", ")) - {"no parameters"} == expected


def test_search_grep_and_export_take_every_filter_on_every_face_they_are_on():
    filters = {p.name for p in params(Filters)}
    assert {"entity", "author", "type", "after", "before", "date-from", "meta", "path",
            "quantity", "lang"} <= filters  # fmt: skip
    for name in ("search", "grep", "export"):
        definition = COMMANDS[name]
        names = {p.name for p in params(definition.options)}
        assert filters <= names, name
        for face in definition.faces:
            on_face = {p.name for p in params(definition.options) if face in p.opt.faces}
            assert filters <= on_face, (name, face)


def test_a_new_filter_is_one_field(monkeypatch):
    """A field added to ``Filters`` is an option of every command that filters, on every
    face, with no other edit."""
    import kbx.faces as faces
    import kbx.options as options
    from kbx.cli.define import parameter

    @dataclasses.dataclass(kw_only=True)
    class Wider(options.Filters):
        colour: str | None = options.opt(None, help="Only passages of this colour.")

    monkeypatch.setattr(options, "Filters", Wider)
    monkeypatch.setattr(faces, "_PARAMS", {})
    for name in ("search", "grep", "export"):
        definition = COMMANDS[name]
        for face in definition.faces:
            assert "colour" in {p.name for p in faces.on(definition.options, face)}
    assert "colour" in schema(api.SearchOptions, api.MCP)["properties"]
    (colour,) = [p for p in params(api.GrepOptions) if p.name == "colour"]
    info = parameter(colour).annotation.__metadata__[0]
    assert "--colour" in (info.default, *(info.param_decls or ()))
    o = given(api.SearchOptions, {"query": "x", "colour": "red"}, api.MCP, "search")
    assert o.filters.colour == "red"


def test_every_cli_command_with_options_is_generated_from_its_definition():
    from kbx.cli import gazetteer

    made = {}
    for group, prefix in ((app, ""), (gazetteer.app, "gazetteer ")):
        for c in group.registered_commands:
            name = prefix + typer.main.get_command_name(c.name or c.callback.__name__)
            made[name] = getattr(c.callback, "definition", None)
    assert set(COMMANDS) <= set(made)
    hand_written = sorted(n for n, d in made.items() if d is None)
    assert hand_written == ["version"]  # no options
    assert all(made[n] is COMMANDS[n] for n in COMMANDS)


def test_values_from_a_server_are_checked_in_kbx_words():
    o = given(api.SearchOptions, {"query": "x", "entity": "Git"}, api.MCP, "search")
    assert o.filters.entities == ["Git"]  # one value where a list is meant
    o = given(api.SearchOptions, {"q": ["x"], "date-from": ["document"]}, api.HTTP, "s", True)
    assert o.filters.date_from == "document" and o.facets is True  # HTTP: as --json
    assert given(api.SearchOptions, {"query": "x"}, api.MCP, "search").facets is False
    for raw, words in [
        ({"query": "x", "k": 0}, "k must be from 1 to 100, got 0"),
        ({"query": "x", "k": "two"}, "k must be a whole number"),
        ({"query": "x", "date_from": "any"}, "search takes no date_from; it takes query, k"),
        ({"query": "x", "mode": "fast"}, "mode 'fast': choose from bm25, dense, hybrid"),
        ({"query": "x", "entity": [1]}, "entity takes text values"),
        ({"k": 3}, "search needs query"),
    ]:
        with pytest.raises(BadArgument, match=words):
            given(api.SearchOptions, raw, api.MCP, "search")


def test_the_cli_refuses_k_0_and_reads_a_filter_for_export(tmp_path):
    from typer.testing import CliRunner

    r = CliRunner().invoke(app, ["search", "x", "-k", "0"])
    assert r.exit_code == 2
    o = api.build_options(api.ExportOptions, {"format": "jsonl", "quantities": ["mass>1kg"]})
    assert o.filters.quantities == ["mass>1kg"]  # `kbx export --quantity` reaches the filters


def test_the_cli_reference_is_made_from_the_definitions():
    written = (Path(__file__).parents[1] / "docs" / "CLI.md").read_text("utf-8")
    assert written == reference(), "docs/CLI.md is stale: run `make docs`"
    for command in COMMANDS.values():  # every command and every one of its CLI options
        assert f"## kbx {command.name}\n" in written
        for p in params(command.options):
            if "cli" in p.opt.faces and not p.opt.argument:
                assert f"`{(p.opt.flags or (f'--{p.name}',))[0].split('/')[0]}`" in written
