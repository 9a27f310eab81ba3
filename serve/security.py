"""What keeps a local server from serving the wrong caller: it binds 127.0.0.1 unless told
otherwise, and then requires a token; every request's ``Host`` must name this server (a
page whose name was rebound to 127.0.0.1 sends its own name: DNS rebinding) and a
browser's ``Origin`` must be this server's (another site's page cannot drive it; a POST
must also be JSON, which a cross-site form cannot send). Bodies are bounded, and paths a
client names stay inside the indexed root.

A browser cannot send a bearer header, so with a token the page is opened once as
``/?token=TOKEN``: the guard answers with a cookie holding it (HttpOnly, SameSite=Strict,
so another site's page never sends it) and the same address without the token, which
then stays out of the history and of shared links.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kbx.errors import BadArgument, OutsideRoot
from kbx.serve.answers import refusal

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
BODY_MAX = 1024 * 1024  # bytes of a request body (a gazetteer edit, an MCP message)
BODIES = ("POST", "PUT", "PATCH")  # methods whose body must be JSON, and is bounded
COOKIE = "kbx_token"  # the page's copy of the token (see the module's docstring)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "[::]")


@dataclass(frozen=True)
class Policy:
    """Who may call: the address served and, off loopback, the token every request carries."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    body_max: int = BODY_MAX

    def __post_init__(self) -> None:
        if not is_loopback(self.host) and not self.token:
            raise BadArgument(
                f"serving on {self.host} opens the index to other machines: give a token "
                "with --token or KBX_TOKEN, which every request must then carry"
            )

    def hosts(self) -> set[str] | None:
        """The ``Host`` values that name this server; None (any) on a wildcard address,
        where the token guards every request."""
        if is_wildcard(self.host):
            return None
        named = {*LOOPBACK_NAMES, self.host if ":" not in self.host else f"[{self.host}]"}
        return {f"{n}:{self.port}" for n in named}


class Guard:
    """ASGI middleware in front of every route (the API, MCP, and pages added later)."""

    def __init__(self, app: ASGIApp, policy: Policy):
        self.app, self.policy = app, policy
        self.hosts = policy.hosts()
        self.token = policy.token.encode() if policy.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # the lifespan
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope["headers"]}
        refused = self._check(scope, headers)
        if scope["type"] == "websocket":  # a page's live channel: the same checks
            if refused is not None:
                await send({"type": "websocket.close", "code": 1008})  # policy violation
            else:
                await self.app(scope, receive, send)
            return
        if refused is None and scope["method"] in BODIES:
            refused, receive = await self._body(headers, receive)
        if refused is None and self.token and scope["method"] == "GET":
            refused = self._sign_in(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check(self, scope: Scope, headers: dict[str, bytes]):
        host = headers.get("host", b"").decode("latin-1")
        if self.hosts is not None and host not in self.hosts:
            return refusal(
                421,
                "ForeignHost",
                f"this server does not answer to Host {host or '(none)'!r}",
                f"call it as http://127.0.0.1:{self.policy.port}/",
            )
        origin = headers.get("origin")
        if origin is not None and not self._own(origin.decode("latin-1"), host):
            return refusal(
                403,
                "ForeignOrigin",
                f"requests from pages of {origin.decode('latin-1')!r} are refused",
                "only this server's own pages, and clients that are not browsers, may call it",
            )
        if self.token and not self._carries_token(scope, headers):
            return refusal(
                401,
                "Unauthorized",
                "this server requires its token on every request",
                "send the header Authorization: Bearer TOKEN (the --token or KBX_TOKEN given); "
                "in a browser, open /?token=TOKEN once",
                **{"WWW-Authenticate": "Bearer"},
            )
        if scope.get("method") in BODIES:
            kind = headers.get("content-type", b"").decode("latin-1").lower()
            if not kind.startswith("application/json"):
                return refusal(
                    415,
                    "NotJson",
                    f"a {scope['method']} body must be application/json, got {kind or 'none'!r}",
                )
        return None

    def _carries_token(self, scope: Scope, headers: dict[str, bytes]) -> bool:
        """The token as a bearer header, the page's cookie, or (to set that cookie) the
        query of a GET; compared in constant time."""
        given = [headers.get("authorization", b"").removeprefix(b"Bearer ")]
        try:
            cookie = SimpleCookie(headers.get("cookie", b"").decode("latin-1")).get(COOKIE)
        except CookieError:
            cookie = None
        if cookie is not None:
            given.append(cookie.value.encode("latin-1", "replace"))
        if scope.get("method") == "GET":
            given += [v.encode() for k, v in _query(scope) if k == "token"]
        return any(hmac.compare_digest(g, self.token or b"") for g in given)

    def _sign_in(self, scope: Scope):
        """A GET carrying the (checked) token in its query: the cookie, and the same
        address without it."""
        query = _query(scope)
        if not any(k == "token" for k, _ in query):
            return None
        rest = urlencode([(k, v) for k, v in query if k != "token"])
        location = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie: SimpleCookie = SimpleCookie()
        cookie[COOKIE] = self.policy.token or ""
        cookie[COOKIE].update({"path": "/", "httponly": True, "samesite": "Strict"})
        header = cookie.output(header="").strip()
        return RedirectResponse(location, 303, headers={"Set-Cookie": header})

    def _own(self, origin: str, host: str) -> bool:
        """A page of this server: one of its names, or (on a wildcard address, where the
        names are not known) the name the request itself was sent to."""
        m = re.fullmatch(r"https?://([^/]+)", origin)
        return m is not None and m.group(1) in (self.hosts or {host})

    async def _body(self, headers: dict[str, bytes], receive: Receive):
        """Read the body up to the bound; refuse a larger one, else replay it to the app."""
        limit = self.policy.body_max
        too_large = refusal(413, "TooLarge", f"request bodies are limited to {limit} bytes")
        declared = headers.get("content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            return too_large, receive
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return None, receive  # the client went away; the app sees the disconnect
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > limit:
                return too_large, receive
        replayed: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

        async def replay() -> Message:
            return replayed.pop() if replayed else await receive()

        return None, replay


def _query(scope: Scope) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


_PARENT = re.compile(r"(^|[/\\])\.\.([/\\:]|$)")


def confined(spec: str) -> str:
    """``spec`` (``PATH[:START-END]``) if its path is relative and never climbs out; the
    library then resolves it inside the root, so a symlink out is refused there too."""
    if "\x00" in spec:
        raise BadArgument("a path cannot contain a NUL character")
    if (
        spec.startswith(("/", "\\", "~"))
        or re.match(r"[A-Za-z]:[/\\]", spec)
        or _PARENT.search(spec)
    ):
        raise OutsideRoot(
            f"{spec.partition(':')[0]!r}: paths are relative to the indexed root, without '..'"
        )
    return spec
