"""What the server does per request, shared by the MCP tools and the HTTP API: bound the
arguments, make one API call, and answer the command's ``--json`` object.

Bounds are the server's own (a CLI user is alone with their machine; a server is not):
``k``, match counts, context lines, list limits and text lengths are capped, and a value
out of range is a ``BadArgument`` naming the range, as the CLI names its errors.
"""

from __future__ import annotations

from kbx import api
from kbx.errors import BadArgument
from kbx.serve.live import LiveIndex
from kbx.serve.security import confined

K_MAX = 100  # passages per search
MATCHES_MAX = 500  # grep matches shown
CONTEXT_MAX = 20  # grep context lines
TIMEOUT_MAX = 60  # seconds a grep pattern may match for (30 unless asked)
LIMIT_MAX = 500  # entities listed, mentions of an entity
TEXT_MAX = 2000  # characters of a query, pattern or gazetteer field


def _bounded(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise BadArgument(f"{name} must be from {low} to {high}, got {value}")
    return value


def _short(name: str, value: str | None) -> str | None:
    if value is not None and len(value) > TEXT_MAX:
        raise BadArgument(f"{name} is {len(value)} characters; at most {TEXT_MAX} are read")
    return value


def _filters(
    entity, type, after, before, date_from, meta, path, quantity=None, author=None
) -> api.Filters:
    for name, values in (
        ("entity", entity),
        ("author", author),
        ("type", type),
        ("meta", meta),
        ("quantity", quantity),
    ):
        for v in values or ():
            _short(name, v)
    return api.Filters(
        list(entity or ()),
        list(type or ()),
        after,
        before,
        date_from,
        list(meta or ()),
        path,
        list(quantity or ()),
        list(author or ()),
    )


def search(
    index: LiveIndex,
    q: str,
    k: int = 8,
    entity: list[str] | None = None,
    type: list[str] | None = None,
    after: str | None = None,
    before: str | None = None,
    date_from: str = "any",
    meta: list[str] | None = None,
    path: str | None = None,
    facets: bool = True,
    mode: str | None = None,
    quantity: list[str] | None = None,
    author: list[str] | None = None,
) -> dict:
    """``kbx search --json`` (``facets`` False leaves them out, as ``kbx search`` does)."""
    _bounded("k", k, 1, K_MAX)
    chosen = _filters(entity, type, after, before, date_from, meta, path, quantity, author)
    r = api.search(index, _short("q", q), k=k, filters=chosen, facets=facets, mode=mode)
    return api.to_json("search", r)


def grep(
    index: LiveIndex,
    pattern: str,
    rank: str | None = None,
    context: int = 0,
    max: int = 20,
    ignore_case: bool = False,
    entity: list[str] | None = None,
    type: list[str] | None = None,
    after: str | None = None,
    before: str | None = None,
    date_from: str = "any",
    meta: list[str] | None = None,
    path: str | None = None,
    quantity: list[str] | None = None,
    timeout: int = 30,
    author: list[str] | None = None,
) -> dict:
    """``kbx grep --json``."""
    g = api.grep(
        index,
        _short("pattern", pattern),
        rank_query=_short("rank", rank),
        context=_bounded("context", context, 0, CONTEXT_MAX),
        max_matches=_bounded("max", max, 1, MATCHES_MAX),
        ignore_case=ignore_case,
        filters=_filters(entity, type, after, before, date_from, meta, path, quantity, author),
        timeout=_bounded("timeout", timeout, 1, TIMEOUT_MAX),
    )
    return api.to_json("grep", g)


def read(index: LiveIndex, spec: str, hash: str | None = None) -> dict:
    """``kbx read --json``, for a path inside the root only."""
    return api.to_json("read", api.read(index, confined(_short("spec", spec)), hash))


def entities(
    index: LiveIndex, type: str | None = None, q: str | None = None, limit: int = 50
) -> dict:
    """``kbx entities --json``."""
    rows = api.entities(index, type, _short("q", q), _bounded("limit", limit, 1, LIMIT_MAX))
    return api.to_json("entities", rows)


def entity(index: LiveIndex, id: str, limit: int = 50) -> dict:
    """``kbx entity ID --json``."""
    e = api.entity(index, _short("id", id), _bounded("limit", limit, 1, LIMIT_MAX))
    return api.to_json("entity", e)


def status(index: LiveIndex) -> dict:
    """``kbx status --json``."""
    return api.to_json("status", api.status(index, api.registry_for(index)))


def _by(by: str | None) -> str:
    if not by or not by.strip():
        raise BadArgument("by is required: who makes the change, e.g. agent:NAME or a person")
    return _short("by", by)


def gazetteer_add(
    index: LiveIndex,
    name: str,
    type: str,
    by: str,
    alias: list[str] | None = None,
    id: str | None = None,
    source: str | None = None,
    note: str | None = None,
    ignore_case: bool = False,
    pin: bool = False,
) -> dict:
    """``kbx gazetteer add --json``; ``by`` is required and recorded as given; ``pin``
    settles an alias two entries share (two imported QIDs called "Apple") on this one."""
    by, aliases = _by(by), [_short("alias", a) for a in alias or ()]
    name, note = _short("name", name), _short("note", note)
    source = confined(_short("source", source)) if source else None
    r = index.write(
        lambda: api.gazetteer_add(
            index, name, type, aliases, id, by, source, note, ignore_case, pin
        ),
        "serve (gazetteer add)",
    )
    return api.to_json("gazetteer add", r)


def gazetteer_retract(index: LiveIndex, id: str, by: str, why: str) -> dict:
    """``kbx gazetteer retract --json``."""
    by, why = _by(by), _short("why", why)
    r = index.write(lambda: api.gazetteer_retract(index, id, by, why), "serve (gazetteer retract)")
    return api.to_json("gazetteer retract", r)
