"""What the server refuses, against the real server: another site's page, a rebound host
name, a path out of the root, a request without the token, an oversized or non-JSON body.
Each is refused with its status and one JSON error, and nothing is changed."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from kbx import api
from kbx.errors import BadArgument, OutsideRoot
from kbx.serve.security import Guard, Policy, confined

EDIT = {"action": "add", "name": "Bluefin Labs", "type": "ORG", "by": "agent:pytest"}


def refused(r: httpx.Response, status: int, error: str) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "code", "message", "hint"} and body["error"] == error
    return body["message"]


def test_a_post_from_another_sites_page_is_refused(http, docs):
    r = http.post("/api/gazetteer", json=EDIT, headers={"Origin": "https://evil.example"})
    assert "https://evil.example" in refused(r, 403, "ForeignOrigin")
    assert api.gazetteer_list(api.Index.for_root(docs)) == []  # nothing added


def test_a_post_from_the_servers_own_page_is_served(http, url, docs):
    r = http.post("/api/gazetteer", json=EDIT, headers={"Origin": url})
    assert r.status_code == 200, r.text
    gone = {"action": "retract", "id": "gz:bluefin-labs", "by": "agent:pytest", "why": "test"}
    assert http.post("/api/gazetteer", json=gone, headers={"Origin": url}).status_code == 200


def test_a_form_post_is_refused(http, docs):
    r = http.post("/api/gazetteer", data={"action": "add", "name": "X"})
    assert "application/json" in refused(r, 415, "NotJson")


@pytest.mark.parametrize("path", ["/api/status", "/mcp"])
def test_a_foreign_host_is_refused(http, path):
    """A page on evil.example whose name was rebound to 127.0.0.1 sends its own Host."""
    r = http.get(path, headers={"Host": "evil.example:8765"})
    assert "evil.example" in refused(r, 421, "ForeignHost")


def test_mcp_refuses_another_sites_page_too(http):
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    r = http.post("/mcp", json=hello, headers={"Origin": "http://evil.example"})
    refused(r, 403, "ForeignOrigin")


@pytest.mark.parametrize(
    "spec",
    ["../secret.md", "notes/../../secret.md:1-2", "/etc/passwd", "~/secret.md", "notes/link.md"],
)
def test_read_stays_inside_the_root(http, spec):
    """``..`` and absolute paths are refused before any file is touched; a symlink out of
    the root (notes/link.md) is refused by the library once resolved."""
    r = http.get("/api/read", params={"spec": spec})
    refused(r, 403, "OutsideRoot")


def test_a_gazetteer_source_stays_inside_the_root(http, docs):
    r = http.post("/api/gazetteer", json={**EDIT, "source": "../secret.md"})
    refused(r, 403, "OutsideRoot")
    assert api.gazetteer_list(api.Index.for_root(docs)) == []


def test_an_oversized_body_is_refused(http):
    r = http.post("/api/gazetteer", json={**EDIT, "note": "x" * (2 * 1024 * 1024)})
    assert "bytes" in refused(r, 413, "TooLarge")


def test_a_long_query_is_refused(http):
    r = http.get("/api/search", params={"q": "word " * 1000})
    assert "at most 2000" in refused(r, 400, "BadArgument")


def test_a_token_is_required_on_every_request_when_set(start, docs):
    with start(docs, token="s3cret") as base, httpx.Client(base_url=base) as c:
        r = c.get("/api/status")
        assert "token" in refused(r, 401, "Unauthorized")
        assert r.headers["www-authenticate"] == "Bearer"
        wrong = c.get("/api/status", headers={"Authorization": "Bearer guess"})
        refused(wrong, 401, "Unauthorized")
        refused(c.post("/mcp", json={}), 401, "Unauthorized")
        right = c.get("/api/status", headers={"Authorization": "Bearer s3cret"})
        assert right.status_code == 200 and right.json()["root"] == str(docs)


def test_a_browser_signs_in_once_with_the_token_in_the_address(start, docs):
    with start(docs, token="s3cret") as base, httpx.Client(base_url=base) as c:
        refused(c.get("/?q=x&token=guess"), 401, "Unauthorized")
        assert "kbx_token" not in c.cookies
        r = c.get("/api/status?token=s3cret&k=1")
        assert r.status_code == 303 and r.headers["location"] == "/api/status?k=1"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert c.get("/api/status").json()["root"] == str(docs)  # the cookie, from now on
        c.cookies.set("kbx_token", "guess")
        refused(c.get("/api/status"), 401, "Unauthorized")
        refused(c.post("/api/gazetteer?token=s3cret", json=EDIT), 401, "Unauthorized")
        c.cookies.set("kbx_token", "s3cret")
        evil = {"Origin": "https://evil.example"}  # signed in, but another site's page
        refused(c.post("/api/gazetteer", json=EDIT, headers=evil), 403, "ForeignOrigin")
    assert api.gazetteer_list(api.Index.for_root(docs)) == []


def test_another_host_needs_a_token():
    with pytest.raises(BadArgument, match="give a token with --token or KBX_TOKEN"):
        Policy("0.0.0.0", 8765)
    assert Policy("0.0.0.0", 8765, "t").hosts() is None  # any name; the token guards
    assert "192.168.1.5:80" in Policy("192.168.1.5", 80, "t").hosts()
    assert Policy().hosts() == {"127.0.0.1:8765", "localhost:8765", "[::1]:8765"}


@pytest.mark.parametrize("spec", ["a/../../b.md", "..", "C:\\x.md", "\\\\host\\share"])
def test_confined_refuses_climbing_and_absolute_paths(spec):
    with pytest.raises(OutsideRoot):
        confined(spec)


def test_confined_keeps_relative_paths_and_ranges():
    assert confined("notes/a..b.md:3-9") == "notes/a..b.md:3-9"


def test_on_a_wildcard_address_a_page_must_come_from_the_name_it_calls():
    """Bound to 0.0.0.0 the server's names are not known: a browser's Origin must then be
    the Host the request was sent to, and the token is required as everywhere off loopback."""
    inner = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
    client = TestClient(Guard(inner, Policy("0.0.0.0", 9000, "t")), base_url="http://kb.lan:9000")
    token = {"Authorization": "Bearer t"}
    assert client.get("/", headers=token).text == "ok"
    assert client.get("/", headers={**token, "Origin": "http://kb.lan:9000"}).text == "ok"
    refused(
        client.get("/", headers={**token, "Origin": "http://evil.example"}), 403, "ForeignOrigin"
    )
    refused(client.get("/"), 401, "Unauthorized")


def test_a_websocket_from_another_sites_page_is_closed():
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text("ok")
        await ws.close()

    inner = Starlette(routes=[WebSocketRoute("/live", echo)])
    client = TestClient(Guard(inner, Policy("127.0.0.1", 8765)), base_url="http://127.0.0.1:8765")
    with client.websocket_connect(
        "ws://127.0.0.1:8765/live", headers={"Origin": "http://127.0.0.1:8765"}
    ) as ws:
        assert ws.receive_text() == "ok"
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        client.websocket_connect(
            "ws://127.0.0.1:8765/live", headers={"Origin": "http://evil.example"}
        ),
    ):
        pass
    assert closed.value.code == 1008
