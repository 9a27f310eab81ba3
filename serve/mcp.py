"""The MCP face: kbx's commands as tools for agents, over stdio (``kbx mcp``) or mounted at
``/mcp`` by ``kbx serve``. Each tool answers a text block written for a model to read and,
as structured content, the command's ``--json`` object. Descriptions are short: a client
sends them to the model on every turn."""

import json
import logging
from collections.abc import Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from kbx import __version__, api
from kbx.errors import KbxError
from kbx.serve import commands, text
from kbx.serve.answers import bug, of_error
from kbx.serve.live import LiveIndex

log = logging.getLogger("kbx.serve")

INSTRUCTIONS = (
    "Search an indexed folder of documents. Every result cites path:start-end and the file's "
    "hash: call read on exactly those lines instead of opening whole files. search ranks "
    "passages and lists exact phrase matches beside them; grep finds every match of a regex."
)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
EDITS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

Entity = Annotated[
    list[str] | None, Field(description="entity IDs or names (see entities); all must match")
]
Author = Annotated[
    list[str] | None,
    Field(description="people (IDs or names) who wrote the passage: signed it, or authors of "
          "its document; entity finds passages that merely name them; all must match"),
]  # fmt: skip
Types = Annotated[list[str] | None, Field(description="mention types, e.g. DOI, DATE, PERSON")]
After = Annotated[
    str | None, Field(description="YYYY, YYYY-MM or YYYY-MM-DD: dates from its first day on")
]
Before = Annotated[
    str | None,
    Field(description="YYYY, YYYY-MM or YYYY-MM-DD: dates up to its last day (inclusive)"),
]
DateFrom = Annotated[str, Field(description="which dates count: any, mentioned or document")]
Meta = Annotated[list[str] | None, Field(description="front-matter KEY=VALUE or KEY!=VALUE")]
Glob = Annotated[str | None, Field(description="file glob relative to the root; * crosses /")]
Quantity = Annotated[
    list[str] | None,
    Field(description="[DIMENSION] OP VALUE in SI, e.g. mass>1kg, size<=4GB; all must match"),
]
By = Annotated[str, Field(description="who makes the change, e.g. agent:<your client's name>")]
Mode = Annotated[
    Literal["bm25", "dense", "hybrid"] | None,
    Field(description="words, meaning or both; default hybrid once the folder is embedded"),
]


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


def server(index: LiveIndex) -> MCPServer:
    """An MCP server whose tools call the API on ``index``."""
    tools: list[Tool] = []

    def tool(annotations: ToolAnnotations):
        """A tool described by its docstring on one line, with a lean schema."""

        def register(fn: Callable) -> Callable:
            t = Tool.from_function(
                fn, description=" ".join(fn.__doc__.split()), annotations=annotations
            )
            t.parameters = lean(t.parameters)
            tools.append(t)
            return fn

        return register

    @tool(READS)
    def search(
        query: str,
        k: int = 8,
        entity: Entity = None,
        type: Types = None,
        after: After = None,
        before: Before = None,
        date_from: DateFrom = "any",
        meta: Meta = None,
        path: Glob = None,
        quantity: Quantity = None,
        facets: bool = False,
        mode: Mode = None,
        author: Author = None,
    ) -> CallToolResult:
        """Ranked passages for the query's words (and its meaning, once the folder is
        embedded), each cited as path:start-end #hash with a snippet: read only those
        lines. Below them, exact matches of the query as a phrase (grep finds every one,
        or a regex). Filters narrow to passages naming an entity, with a mention type,
        written by an author, dated after/before, with a quantity (mass>1kg), by
        front-matter field or path; facets counts entities, types, years and quantities
        among all matches."""
        return _result(
            lambda: commands.search(
                index,
                query,
                k,
                entity,
                type,
                after,
                before,
                date_from,
                meta,
                path,
                facets,
                mode,
                quantity,
                author,
            ),
            text.search,
        )

    @tool(READS)
    def grep(
        pattern: str,
        rank: str | None = None,
        context: int = 0,
        max: int = 20,
        ignore_case: bool = False,
        entity: Entity = None,
        type: Types = None,
        after: After = None,
        before: Before = None,
        date_from: DateFrom = "any",
        meta: Meta = None,
        path: Glob = None,
        quantity: Quantity = None,
        timeout: int = 30,
        author: Author = None,
    ) -> CallToolResult:
        """Every match of a Python regex in the documents' clean text (markup stripped, so
        a phrase split by bold or a line break still matches), cited at original lines,
        best files first (BM25 of rank, default the pattern's words). Prefer it to search
        for exact strings, identifiers, error codes, or when you need every occurrence.
        A pattern stops with an error after timeout seconds of matching (1 to 60)."""
        return _result(
            lambda: commands.grep(
                index,
                pattern,
                rank,
                context,
                max,
                ignore_case,
                entity,
                type,
                after,
                before,
                date_from,
                meta,
                path,
                quantity,
                timeout,
                author,
            ),
            text.grep,
        )

    @tool(READS)
    def read(
        spec: Annotated[str, Field(description="PATH:START-END as a result cites it")],
        hash: Annotated[str | None, Field(description="the hash the result gave")] = None,
    ) -> CallToolResult:
        """The original lines a result cites, numbered. With the result's hash, it says
        whether the file changed since it was indexed (its lines may have moved)."""
        return _result(lambda: commands.read(index, spec, hash), text.read)

    @tool(READS)
    def entities(type: str | None = None, q: str | None = None, limit: int = 50) -> CallToolResult:
        """Entities the documents name (people, projects, DOIs, …), most mentioned first,
        with passage counts; q matches label, alias or ID. Use an ID as search's entity."""
        return _result(lambda: commands.entities(index, type, q, limit), text.entities)

    @tool(READS)
    def entity(id: str, limit: int = 50) -> CallToolResult:
        """One entity by ID, label or alias: aliases, provenance, and its mentions at
        path:line, newest documents first."""
        return _result(lambda: commands.entity(index, id, limit), text.entity)

    @tool(EDITS)
    def gazetteer_add(
        name: str,
        type: str,
        by: By,
        alias: list[str] | None = None,
        id: str | None = None,
        source: Annotated[str | None, Field(description="the indexed file you saw it in")] = None,
        note: str | None = None,
        ignore_case: bool = False,
        pin: bool = False,
    ) -> CallToolResult:
        """Teach the index a name it misses (a project, product, person…) so search can
        filter on it; recorded with who added it and from which document. type: PERSON,
        ORG, PROJECT, PRODUCT, … (an unknown one is refused with the list). pin: make an
        alias two entries share (see `entity`'s candidates) link to this one."""
        return _result(
            lambda: commands.gazetteer_add(
                index, name, type, by, alias, id, source, note, ignore_case, pin
            ),
            lambda r: text.edit(r, "added"),
        )

    @tool(EDITS)
    def gazetteer_retract(id: str, by: By, why: str) -> CallToolResult:
        """Retract a gazetteer entry: its mentions leave search; it stays in the history."""
        return _result(
            lambda: commands.gazetteer_retract(index, id, by, why),
            lambda r: text.edit(r, "retracted"),
        )

    @tool(READS)
    def status() -> CallToolResult:
        """What the index holds: documents, units, recognizers, failures."""
        return _result(lambda: commands.status(index), text.status)

    return MCPServer(
        "kbx", instructions=INSTRUCTIONS, version=__version__, tools=tools, log_level="WARNING"
    )  # the log then holds what needs reading: warnings, and a bug's traceback


def lean(schema: object) -> object:
    """A parameter schema without what costs tokens and tells a model nothing: pydantic's
    titles, and the ``null`` alternative of an optional parameter (one left out is None)."""
    if isinstance(schema, list):
        return [lean(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: lean(v) for k, v in schema.items() if k not in ("title", "properties")}
    if "properties" in schema:  # parameter names are kept, whatever they are
        out["properties"] = {name: lean(p) for name, p in schema["properties"].items()}
    options = out.get("anyOf")
    if options and {"type": "null"} in options and len(options) == 2:
        del out["anyOf"]
        out |= next(o for o in options if o != {"type": "null"})
    if "default" in out and out["default"] is None:
        del out["default"]
    return out


def run_stdio(index: LiveIndex) -> None:
    """Serve MCP on standard input and output until the client closes them."""
    try:
        server(index).run("stdio")
    finally:
        index.close()
