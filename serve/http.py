"""The HTTP face: a Starlette app with the JSON API under ``/api``, MCP's streamable HTTP
transport at ``/mcp``, and room for more routes (``app(..., routes=[...])``), behind the
guard of ``security.py``, served by uvicorn.

Starlette, not FastAPI: the MCP SDK's transport is a Starlette app already, so the two
share one app and one middleware stack with no further dependency; and parameters are
read against each command's definition (``kbx.options``), with errors in kbx's one-line
shape rather than a framework's validation lists.

Parameters are named as the CLI's options (``date-from``, ``ignore-case``; search's words
are ``q``, grep's ``pattern``), and every answer is exactly the command's ``--json``.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Sequence

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from kbx import api
from kbx.errors import BadArgument
from kbx.serve import commands
from kbx.serve.answers import answer, failure, refusal
from kbx.serve.live import LiveIndex
from kbx.serve.mcp import server as mcp_server
from kbx.serve.security import Guard, Policy
from kbx.serve.watch import Watcher


def _get(index: LiveIndex, name: str, where: str, path_param: str | None = None):
    async def endpoint(request: Request) -> Response:
        try:
            given: dict[str, list] = {}
            for key, value in request.query_params.multi_items():
                given.setdefault(key, []).append(value)
            if path_param:
                given[path_param] = [request.path_params[path_param]]
            return answer(
                await run_in_threadpool(
                    commands.run, index, name, given, api.HTTP, where, repeated=True
                )
            )
        except Exception as e:
            return failure(e)

    return endpoint


async def gazetteer_edit(index: LiveIndex, request: Request, where: str) -> dict:
    """A gazetteer edit's JSON body (``{"action": "add" | "retract", ...}``, the fields the
    CLI's options name) run as its command: the API and the page's form alike. ``where``
    names the caller in an error."""
    try:
        body = await request.json()
    except (ValueError, RecursionError):
        raise BadArgument("the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadArgument("the body must be a JSON object")
    action = body.pop("action", None)
    if action not in ("add", "retract"):
        raise BadArgument("action must be add or retract")
    return await run_in_threadpool(
        commands.run, index, f"gazetteer {action}", body, api.HTTP, f"{where} ({action})"
    )


def _gazetteer(index: LiveIndex):
    async def endpoint(request: Request) -> Response:
        try:
            return answer(await gazetteer_edit(index, request, "POST /api/gazetteer"))
        except Exception as e:
            return failure(e)

    return endpoint


def api_routes(index: LiveIndex) -> list[BaseRoute]:
    """GET /api/NAME for each command on the HTTP face that reads (entity's ID in the
    path), POST /api/gazetteer for the edits."""
    gets = [c.name for c in api.COMMANDS.values() if api.HTTP in c.faces and " " not in c.name]
    return [
        *(
            Route(f"/api/{n}", _get(index, n, f"/api/{n}"), methods=["GET"])
            for n in gets
            if n != "entity"
        ),
        Route("/api/entity/{id:path}", _get(index, "entity", "/api/entity", "id"), methods=["GET"]),
        Route("/api/gazetteer", _gazetteer(index), methods=["POST"]),
    ]


async def _http_error(request: Request, e: Exception) -> Response:
    if isinstance(e, HTTPException):
        names = {404: "NotFound", 405: "MethodNotAllowed"}
        return refusal(
            e.status_code,
            names.get(e.status_code, "Refused"),
            f"{request.method} {request.url.path}: {e.detail}",
            "the API is under /api (search, grep, read, entities, entity/ID, "
            "status; POST gazetteer) and MCP at /mcp",
        )
    return failure(e)


def app(
    index: LiveIndex,
    policy: Policy,
    routes: Sequence[BaseRoute] = (),
    watcher: Watcher | None = None,
) -> Starlette:
    """The whole service: the API, MCP at ``/mcp``, and ``routes`` (pages), all guarded.
    A ``watcher`` (of ``index``) runs while the app does: started once it starts, stopped
    before the index is let go, so no re-index outlives the server."""
    agent = mcp_server(index)
    transport = agent.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=policy.body_max,
    )  # the guard checks Host, Origin and the token for every route, /mcp included

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette):
        async with agent.session_manager.run():
            if watcher is not None:
                watcher.start()
            try:
                yield
            finally:
                if watcher is not None:  # waits for a re-index in flight
                    await run_in_threadpool(watcher.stop)
        index.close()

    return Starlette(
        routes=[*api_routes(index), *transport.routes, *routes],
        middleware=[Middleware(Guard, policy=policy)],
        exception_handlers={HTTPException: _http_error, Exception: _http_error},
        lifespan=lifespan,
    )


def server(
    index: LiveIndex,
    policy: Policy,
    routes: Sequence[BaseRoute] = (),
    watcher: Watcher | None = None,
) -> uvicorn.Server:
    """A uvicorn server for the app; ``run()`` it, or ``run(sockets=[...])`` on a bound one."""
    config = uvicorn.Config(
        app(index, policy, routes, watcher),
        host=policy.host,
        port=policy.port,
        log_level="warning",
        access_log=False,  # a line per request costs more than a warm search's overhead
        lifespan="on",
    )
    return uvicorn.Server(config)


def bound_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), for ``server().run``: the
    address can be announced before uvicorn starts, and a client calling at once waits."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle's algorithm off only on sockets that name it,
    # and with it on, each response's body waited for the client's delayed ACK (40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts: none refused
    return sock
