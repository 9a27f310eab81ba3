"""The MCP face: kbx's commands as tools for agents, over stdio (``kbx mcp``) or mounted at
``/mcp`` by ``kbx serve``. Each tool is generated from its command's definition
(``kbx.options``): its name, description and input schema, with the CLI's option names
(``date-from``, ``ignore-case``); a list filter takes one value or several. Each tool
answers a text block written for a model to read and, as structured content, the
command's ``--json`` object. Descriptions are short: a client sends them to the model on
every turn."""

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from kbx import __version__, api
from kbx.errors import KbxError
from kbx.serve import commands, text
from kbx.serve.answers import bug, of_error
from kbx.serve.live import LiveIndex

log = logging.getLogger("kbx.serve")

INSTRUCTIONS = (
    "Search an indexed folder of documents. Every result cites its file and the file's hash, "
    "then each passage's lines: call read with path:start-end and that hash on exactly those "
    "lines instead of opening whole files. search ranks "
    "passages and lists exact phrase matches beside them; grep finds every match of a regex."
)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
EDITS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
RENDER: dict[str, Callable[[dict], str]] = {
    "search": text.search,
    "grep": text.grep,
    "read": text.read,
    "entities": text.entities,
    "entity": text.entity,
    "status": text.status,
    "gazetteer add": lambda r: text.edit(r, "added"),
    "gazetteer retract": lambda r: text.edit(r, "retracted"),
}
WRITES = {"gazetteer add", "gazetteer retract"}


def _result(call: Callable[[], dict], render: Callable[[dict], str]) -> CallToolResult:
    """The text and the JSON of one call; a named error as an error result the model can
    act on, a bug as one that says so (its traceback goes to the log)."""
    try:
        obj = json.loads(api.json_text(call()))
        return CallToolResult(
            content=[TextContent(type="text", text=render(obj))], structured_content=obj
        )
    except KbxError as e:
        obj = of_error(e)
    except Exception as e:
        log.exception("kbx hit a bug in a tool call")
        obj = bug(e)
    said = f"error: {obj['message']}" + (f"\nhint: {obj['hint']}" if obj["hint"] else "")
    return CallToolResult(
        content=[TextContent(type="text", text=said)], structured_content=obj, is_error=True
    )


class _Tool(Tool):
    """A tool whose arguments kbx reads itself, against the command's definition: its
    errors name the option in kbx's words (never a validation list), and a list filter
    takes one value as well."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False):
        result = await anyio.to_thread.run_sync(self.fn, arguments)
        return self.fn_metadata.convert_result(result) if convert_result else result


def tool(index: LiveIndex, command: api.Command) -> Tool:
    """The MCP tool of ``command``, calling the library on ``index``."""

    def call(arguments: dict) -> CallToolResult:
        return _result(
            lambda: commands.run(index, command.name, arguments, api.MCP, command.tool),
            RENDER[command.name],
        )

    t = _Tool.from_function(
        call,
        name=command.tool,
        description=command.brief,
        annotations=EDITS if command.name in WRITES else READS,
    )
    t.parameters = api.options_schema(command.options, api.MCP)
    return t


def server(index: LiveIndex) -> MCPServer:
    """An MCP server whose tools call the API on ``index``."""
    tools = [tool(index, c) for c in api.COMMANDS.values() if api.MCP in c.faces]
    return MCPServer(
        "kbx", instructions=INSTRUCTIONS, version=__version__, tools=tools, log_level="WARNING"
    )  # the log then holds what needs reading: warnings, and a bug's traceback


def run_stdio(index: LiveIndex) -> None:
    """Serve MCP on standard input and output until the client closes them."""
    try:
        server(index).run("stdio")
    finally:
        index.close()
