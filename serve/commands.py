"""What the server does per request, shared by the MCP tools, the HTTP API and the page:
read the request's values against the command's definition (``kbx.options``: its names,
kinds and the server's bounds), make one library call, and answer the command's
``--json``.

Bounds are the server's own (a CLI user is alone with their machine; a server is not):
``k``, match counts, context lines, list limits and text lengths are capped, and a value
out of range is a ``BadArgument`` naming the range, as the CLI names its errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kbx import api
from kbx.errors import BadArgument
from kbx.serve.live import LiveIndex
from kbx.serve.security import confined

K_DEFAULT = 8  # passages a search shows unless asked (the --json default)
K_MAX = next(p for p in api.options_on(api.SearchOptions, api.HTTP) if p.attr == "k").opt.served[1]


def run(
    index: LiveIndex, name: str, raw: dict[str, Any], face: str, where: str, repeated: bool = False
) -> dict:
    """``kbx NAME --json`` for a request's values by face name (``repeated``: each value
    a list of its occurrences, as a query string gives them; else JSON values)."""
    o = api.given_options(api.COMMANDS[name].options, raw, face, where, repeated)
    return _DO[name](index, o, face)


def _plain(name: str) -> Callable[[LiveIndex, Any, str], dict]:
    return lambda index, o, face: api.to_json(name, api.perform(index, o))


def _read(index: LiveIndex, o: api.ReadOptions, face: str) -> dict:
    o.spec = confined(o.spec)  # a path inside the root only
    return api.to_json("read", api.perform(index, o))


def _by(by: str | None) -> str:
    if not by or not by.strip():
        raise BadArgument("by is required: who makes the change, e.g. agent:NAME or a person")
    return by


def _add(index: LiveIndex, o: api.GazetteerAddOptions, face: str) -> dict:
    """``by`` is required and recorded as given; ``pin`` settles an alias two entries
    share (two imported QIDs called "Apple") on this one."""
    o.by = _by(o.by)
    o.source = confined(o.source) if o.source else None
    r = index.write(lambda: api.perform(index, o), "serve (gazetteer add)")
    return api.to_json("gazetteer add", r)


def _retract(index: LiveIndex, o: api.GazetteerRetractOptions, face: str) -> dict:
    o.by = _by(o.by)
    r = index.write(lambda: api.perform(index, o), "serve (gazetteer retract)")
    return api.to_json("gazetteer retract", r)


_DO: dict[str, Callable[[LiveIndex, Any, str], dict]] = {
    "search": _plain("search"),
    "grep": _plain("grep"),
    "read": _read,
    "entities": _plain("entities"),
    "entity": _plain("entity"),
    "status": _plain("status"),
    "gazetteer add": _add,
    "gazetteer retract": _retract,
}


def status(index: LiveIndex) -> dict:
    """``kbx status --json``."""
    return run(index, "status", {}, api.HTTP, "status")


def entities(index: LiveIndex, limit: int = 50) -> dict:
    """``kbx entities --json``, the most mentioned first."""
    return run(index, "entities", {"limit": limit}, api.HTTP, "entities")
