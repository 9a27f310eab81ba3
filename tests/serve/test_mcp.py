"""MCP through the SDK's own client: a session over stdio against ``kbx mcp`` as an agent
client launches it, and one over streamable HTTP at ``/mcp`` of the running server."""

from __future__ import annotations

import json
import sys
import tempfile

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from kbx import api
from kbx.present import cited

TOOLS = {
    *("search", "grep", "read", "entities", "entity"),
    *("gazetteer_add", "gazetteer_retract", "status"),
}


def test_an_agent_session_over_stdio(docs):
    async def session() -> None:
        launch = StdioServerParameters(command=sys.executable, args=["-m", "kbx", "mcp"], cwd=docs)
        with tempfile.TemporaryFile("w+") as errlog:
            async with Client(stdio_client(launch, errlog=errlog)) as agent:
                await _converse(agent, docs)

    anyio.run(session)


async def _converse(agent: Client, docs) -> None:
    tools = {t.name: t for t in (await agent.list_tools()).tools}
    assert set(tools) == TOOLS
    assert "grep" in tools["search"].description and "path:start-end" in tools["search"].description
    assert tools["read"].annotations.read_only_hint is True
    schema = tools["search"].input_schema  # lean: no titles, no null alternatives
    assert schema["properties"]["entity"]["type"] == "array" and schema["required"] == ["query"]
    assert "title" not in json.dumps(schema) and "null" not in json.dumps(schema)
    assert tools["gazetteer_add"].annotations.read_only_hint is False

    found = await agent.call_tool("search", {"query": "supplier approval", "path": "notes/*"})
    assert not found.is_error
    hits = found.structured_content["hits"]
    assert {h["path"] for h in hits} == {"notes/cedar.md"}
    searched = api.search(
        api.Index.for_root(docs), "supplier approval", filters=api.Filters(path="notes/*")
    )
    expect = json.loads(api.json_text(api.to_json("search", searched)))
    assert found.structured_content == expect  # the --json, as `kbx search --json` prints it
    said = found.content[0].text
    first = hits[0]
    said_lines = said.splitlines()  # as `kbx search` prints it (kbx.present.search)
    assert f"{first['path']} {first['hash'][:12]}" in said_lines
    lines_at = f"  {cited(first)} "  # its focus, then its whole lines where they are more
    assert any(line.startswith(lines_at) for line in said_lines)
    assert "exact matches of 'supplier approval'" in said

    spec = f"{first['path']}:{first['start_line']}-{first['end_line']}"
    lines = await agent.call_tool("read", {"spec": spec, "hash": first["hash"]})
    assert lines.structured_content["changed"] is False
    assert "Supplier approval is required" in lines.content[0].text

    out = await agent.call_tool("read", {"spec": "../secret.md"})
    assert out.is_error and out.structured_content["error"] == "OutsideRoot"
    assert out.content[0].text.startswith("error: '../secret.md': paths are relative")

    added = await agent.call_tool(
        "gazetteer_add",
        {"name": "Bluefin Labs", "type": "ORG", "by": "agent:pytest", "source": "notes/cedar.md"},
    )
    assert not added.is_error, added.content[0].text
    assert added.structured_content["entry_ids"] == ["gz:bluefin-labs"]
    (entry,) = api.gazetteer_list(api.Index.for_root(docs))  # the store, through the library
    assert (entry["added_by"], entry["source"]) == ("agent:pytest", "notes/cedar.md")
    on_day = await agent.call_tool(  # --after D --before D: on that day, as the CLI
        "search", {"query": "supplier approval", "after": "2021-03-04", "before": "2021-03-04"}
    )
    assert {h["path"] for h in on_day.structured_content["hits"]} == {"notes/cedar.md"}
    named = await agent.call_tool("search", {"query": "certificate", "entity": ["Bluefin Labs"]})
    assert [h["path"] for h in named.structured_content["hits"]] == ["notes/cedar.md"]
    words = await agent.call_tool("search", {"query": "certificate", "mode": "bm25"})
    assert words.structured_content["mode"] == "bm25"  # and the folder has no vectors:
    off = await agent.call_tool("search", {"query": "certificate", "mode": "dense"})
    assert off.is_error and "the index has none: run `kbx embed`" in off.content[0].text

    gone = await agent.call_tool(
        "gazetteer_retract", {"id": "gz:bluefin-labs", "by": "agent:pytest", "why": "a test"}
    )
    assert "retracted gz:bluefin-labs" in gone.content[0].text
    (entry,) = api.gazetteer_list(api.Index.for_root(docs), retracted=True)
    assert (entry["retracted_by"], entry["why"]) == ("agent:pytest", "a test")


def test_mcp_over_http_answers_as_the_api_does(url):
    async def session() -> dict:
        async with Client(f"{url}/mcp") as agent:
            assert {t.name for t in (await agent.list_tools()).tools} == TOOLS
            r = await agent.call_tool("grep", {"pattern": "Supplier", "context": 1})
            assert not r.is_error, r.content[0].text
            late = await agent.call_tool("grep", {"pattern": "Supplier", "timeout": 0})
            assert late.is_error and "timeout must be from 1 to 60" in late.content[0].text
            return r.structured_content

    over_mcp = anyio.run(session)
    over_http = httpx.get(f"{url}/api/grep", params={"pattern": "Supplier", "context": 1}).json()
    assert over_mcp == over_http and over_mcp["total"] == 2
