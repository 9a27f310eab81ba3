"""``kbx mcp`` and ``kbx serve``: one long-lived process over a warm index, for agents
(MCP) and programs (the HTTP JSON API). The server's packages come with ``kbx[serve]``
and are imported only when one of these commands runs."""

from __future__ import annotations

from kbx import api
from kbx.cli.common import err
from kbx.cli.define import command
from kbx.errors import KbxError


def _needs_extra(e: ImportError) -> KbxError:
    return KbxError(
        f"kbx serve and kbx mcp need the serve extra ({e.name} is missing): "
        "pip install 'kbx[serve]'"
    )


@command(api.COMMANDS["mcp"])
def mcp(o: api.McpOptions, *, db=None) -> None:
    """Serve the index to an agent over MCP on standard input and output.

    This is what an MCP client launches: add kbx to its configuration as the command
    `kbx mcp` run in the indexed folder (or with --db). Tools: search, grep, read,
    entities, entity, gazetteer_add, gazetteer_retract, status. Each answers text for
    the model and, as structured content, the command's --json.

    Example (a client's mcpServers entry):

      {"kbx": {"command": "kbx", "args": ["mcp", "--db", "/home/ann/notes/.kbx/index.duckdb"]}}
    """
    index = api.Index.find(db)
    try:
        from kbx.serve.live import LiveIndex
        from kbx.serve.mcp import run_stdio
        from kbx.serve.watch import Watcher
    except ImportError as e:
        raise _needs_extra(e) from None
    live = LiveIndex.of(index)
    watcher = Watcher(live, name="kbx mcp").start() if o.watch else None
    if watcher:  # standard error: standard output is the protocol's
        err.print(f"kbx mcp: watching {index.root}", markup=False, highlight=False)
    try:
        run_stdio(live)
    finally:
        if watcher:
            watcher.stop()


@command(api.COMMANDS["serve"])
def serve(o: api.ServeOptions, *, db=None) -> None:
    """Serve the web page at /, the HTTP JSON API at /api and MCP at /mcp, until Ctrl-C.

    The page (open http://127.0.0.1:8765/ in a browser) searches with the filters as
    controls and the facets beside the results, opens a cited passage at its lines, shows
    an entity's aliases, history and mentions, and adds or retracts gazetteer entries.
    A link to a search (/?q=…&entity=…) renders without JavaScript.

    GET /api/search?q=…, /api/grep?pattern=…, /api/read?spec=PATH:START-END&hash=…,
    /api/entities, /api/entity/ID, /api/status; POST /api/gazetteer with a JSON body
    ({"action": "add", "name": …, "type": …, "by": …} or {"action": "retract", "id": …,
    "by": …, "why": …}). Parameters are named as this CLI's options; every answer is the
    command's --json, and an error is its one JSON error object with a 4xx status.

    Only this machine can call it unless --host says otherwise (then with a token;
    a browser signs in once at /?token=TOKEN).
    Requests from other sites' pages are refused (Host and Origin are checked).

    While it serves, the indexed folder is watched: a file added, changed or deleted is
    re-indexed within seconds, as `kbx index` would (--no-watch to leave it).
    A `kbx index` from a shell meanwhile waits its turn and succeeds.

    Examples:

      kbx serve

      curl 'http://127.0.0.1:8765/api/search?q=supplier+approval&k=3&after=2021'

      KBX_TOKEN=s3cret kbx serve --host 0.0.0.0 --port 9000
    """
    index = api.Index.find(db)
    try:
        from kbx.serve.http import bound_socket, server
        from kbx.serve.live import LiveIndex
        from kbx.serve.page import page_routes
        from kbx.serve.security import Policy
        from kbx.serve.watch import Watcher
    except ImportError as e:
        raise _needs_extra(e) from None
    host, port, token = o.host, o.port, o.token
    try:
        sock = bound_socket(host, port)
    except OSError as e:
        raise KbxError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    policy = Policy(host, sock.getsockname()[1], token)
    name = f"[{host}]" if ":" in host else host
    err.print(
        f"kbx serve: http://{name}:{policy.port}/api (MCP at /mcp) for {index.root}; Ctrl-C stops",
        markup=False,
        highlight=False,
    )
    try:  # a Ctrl-C from here on stops cleanly, even one that lands inside a print
        live = LiveIndex.of(index)
        watcher = Watcher(live) if o.watch else None
        if watcher:
            err.print(f"kbx serve: watching {index.root}", markup=False, highlight=False)
        pages = page_routes(live)
        err.print(  # third: scripts read the address and the watch from the first two lines
            f"kbx serve: the page at http://{name}:{policy.port}/"
            + (" (sign in once: open /?token=TOKEN)" if token else ""),
            markup=False,
            highlight=False,
        )
        server(live, policy, routes=pages, watcher=watcher).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stopped gracefully, then passes Ctrl-C on
        err.print("kbx serve: stopped", markup=False, highlight=False)
