"""The real server (``kbx serve``'s app under uvicorn) in a thread of the test process, on a
free loopback port: what the serve tests call over HTTP."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from kbx import api
from kbx.serve.http import bound_socket, server
from kbx.serve.live import LiveIndex
from kbx.serve.page import page_routes
from kbx.serve.security import Policy


@contextlib.contextmanager
def serving(root: Path, token: str | None = None, page: bool = False):
    """The server on ``root``'s index (with ``page``, its web page too) at a free loopback
    port: yields its base URL."""
    sock = bound_socket("127.0.0.1", 0)
    policy = Policy("127.0.0.1", sock.getsockname()[1], token)
    live = LiveIndex.of(api.Index.for_root(root))
    s = server(live, policy, routes=page_routes(live) if page else ())
    thread = threading.Thread(target=s.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not s.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{policy.port}"
    finally:
        s.should_exit = True
        thread.join(30)
        sock.close()
