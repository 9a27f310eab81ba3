"""kbx resolve loses nothing: every network fault and every odd answer, from Crossref and
OpenAlex alike, ends as a recorded failure (or a 404's not found), never a traceback and
never a cached ``ok``; the next run against a good server resolves what failed; a store
already holding an odd cached answer still rebuilds; offline, every scope says so in one
line and changes nothing."""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import Loopback, attached, copy_index, crossref_work
from inprocess import run_cli

from kbx.entities.lookup import entity
from kbx.entities.resolve import MATCH, resolve
from kbx.indexing.ingest import index
from kbx.linking.resolvers import Settings
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.references import ReferenceRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.search import search
from kbx.store.db import Index

DOI = "10.1145/1629575.1629596"
ORCID = "0000-0002-1825-0097"
TITLE = "seL4: formal verification of an OS kernel"
REFERENCE = f"1. Klein, G., Elphinstone, K. (2009). {TITLE}. SOSP.\n"
WORK = crossref_work(DOI, TITLE, 2009, [("Gerwin", "Klein", ORCID)], "SOSP")
ITEMS = {"message": {"total-results": 1, "items": [WORK["message"] | {"score": 90}]}}
OPENALEX_WORK = {"id": "https://openalex.org/W2100837269", "publication_year": 2009}
AUTHOR = {"id": "https://openalex.org/A5023888391", "display_name": "Gerwin Klein"}
CROSSREF_PATH, MATCH_PATH = f"/works/{DOI}", "/works?"  # how each question is asked
OPENALEX_PATH, AUTHOR_PATH = "/works/https://doi.org/", "/authors/https://orcid.org/"
GOOD = {CROSSREF_PATH: WORK, MATCH_PATH: ITEMS, OPENALEX_PATH: OPENALEX_WORK, AUTHOR_PATH: AUTHOR}
ASKED = {  # (entity, service) of every question the corpus raises
    (f"doi:{DOI}", "crossref"),
    (f"doi:{DOI}", "openalex"),
    (f"orcid:{ORCID}", "openalex"),
}
TIMEOUT = 0.3


def _corpus(root: Path) -> Index:
    """An indexed corpus naming a DOI, an ORCID and a reference string."""
    root.mkdir()
    (root / "paper.md").write_text(
        f"# Paper\n\nThe kernel is doi:{DOI}, by orcid {ORCID}.\n\n## References\n\n{REFERENCE}"
    )
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner"]\n')
    index(root, registry=REGISTRY)
    return Index.for_root(root)


REGISTRY = Registry([IdentifierRecognizer(), ReferenceRecognizer()])


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return _corpus(tmp_path_factory.mktemp("template") / "docs").root


@pytest.fixture
def idx(template, tmp_path) -> Index:
    """A copy of the template, told its new root (so that indexing it again works as on the
    template): a build is half a second, a copy milliseconds."""
    return copy_index(template, tmp_path / "docs")


def _settings(url: str, **kw) -> Settings:
    base = {"rate": 1000.0, "timeout": TIMEOUT, "retries": 1, "backoff": 0.01, "max_wait": 5.0}
    return Settings(**({"crossref_url": url, "openalex_url": url} | base | kw))


def _rows(idx: Index) -> dict[tuple[str, str], tuple[str, object, str | None]]:
    """(entity, service): (status, data, error) of every answer recorded."""
    with attached(idx.db) as con:
        rows = con.execute("SELECT entity_id, service, status, data, error FROM resolutions")
        return {
            (e, s): (st, data and json.loads(data), err) for e, s, st, data, err in rows.fetchall()
        }


def _ref(rows) -> tuple[str, str]:
    return next(k for k in rows if k[1] == MATCH)


Reply = Callable[[socket.socket, str], None]


class Raw:
    """A loopback server writing raw bytes, for the faults ``Loopback`` cannot make: a body
    cut short, a stall, a reset. Each path prefix has a list of replies (the last one
    repeats), each a function of the socket and the request path."""

    def __init__(self, routes: dict[str, list[Reply]]):
        self.routes, self.requests = routes, []
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = self.request.recv(65536)
                    if not chunk:
                        return
                    head += chunk
                path = unquote(head.split(b" ", 2)[1].decode())
                server.requests.append(path)
                key = max((k for k in server.routes if path.startswith(k)), key=len, default="")
                replies = server.routes.get(key) or [send(404, {})]
                reply = replies.pop(0) if len(replies) > 1 else replies[0]
                with contextlib.suppress(OSError):  # the client gave up first
                    reply(self.request, path)

        self.tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.tcp.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.tcp.server_address[1]}"
        serve = {"poll_interval": 0.02}  # close() waits for the loop to see it
        threading.Thread(target=self.tcp.serve_forever, kwargs=serve, daemon=True).start()

    def close(self) -> None:
        self.tcp.shutdown()
        self.tcp.server_close()


def send(
    status: int,
    body: object,
    headers: dict | None = None,
    ctype: str | None = "application/json",
    extra: int = 0,
    stall: float = 0.0,
) -> Reply:
    """A reply: ``extra`` bytes promised by Content-Length and never sent, ``stall``
    seconds between the head and the body; ``headers`` may use ``{path}``."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()

    def write(sock: socket.socket, path: str) -> None:
        lines = [f"HTTP/1.1 {status} Whatever", f"Content-Length: {len(data) + extra}"]
        lines += [f"Content-Type: {ctype}"] if ctype else []
        lines += [f"{k}: {v.format(path=path)}" for k, v in (headers or {}).items()]
        sock.sendall(("\r\n".join([*lines, "Connection: close"]) + "\r\n\r\n").encode())
        time.sleep(stall)
        sock.sendall(data)

    return write


def good(path: str) -> Reply:
    """The good answer to the question asked at ``path``."""
    return send(200, GOOD[max((k for k in GOOD if path.startswith(k)), key=len)])


def reset(sock: socket.socket, path: str) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # an RST
    sock.close()


def hang_up(sock: socket.socket, path: str) -> None:
    sock.close()


def raw(data: bytes) -> Reply:
    def write(sock: socket.socket, path: str) -> None:
        sock.sendall(data)

    return write


def slow_head(sock: socket.socket, path: str) -> None:
    time.sleep(3 * TIMEOUT)
    good(path)(sock, path)


TRIES = "after 2 tries"  # retries=1
FAULTS: dict[str, tuple[Reply, str]] = {  # every request gets it; the reason recorded (a regex)
    "body cut short": (send(200, WORK, extra=500), rf"connection broken .*{TRIES}"),
    "chunked body cut short": (
        raw(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json"
            b'\r\n\r\n400\r\n{"message": {'
        ),  # fmt: skip
        rf"connection broken .*{TRIES}",
    ),
    "slow body": (send(200, WORK, stall=3 * TIMEOUT), rf"timed out after {TIMEOUT} s, {TRIES}"),
    "slow head": (slow_head, rf"timed out after {TIMEOUT} s, {TRIES}"),
    "connection reset": (reset, rf"connection broken .*{TRIES}"),
    "hung up without an answer": (hang_up, rf"connection broken .*{TRIES}"),
    "not HTTP at all": (raw(b"garbage\r\n\r\n"), rf"connection broken .*{TRIES}"),
    "HTTP 400 with JSON": (send(400, {"message": "bad request"}), r"HTTP 400$"),
    "HTTP 400 with HTML": (send(400, b"<html>bad</html>", ctype="text/html"), r"HTTP 400$"),
    "HTTP 401": (send(401, {"error": "no"}), r"HTTP 401$"),
    "always HTTP 503": (send(503, {}), rf"HTTP 503, {TRIES}"),
    "redirect loop": (
        send(301, {}, {"Location": "{path}"}),
        r"too many redirects|HTTP 301$",  # a query is not followed: it names no DOI
    ),
    "Retry-After huge": (
        send(429, {}, {"Retry-After": "86400"}),
        r"HTTP 429, Retry-After 86400 s is over max_wait 5 s",
    ),
    "Retry-After infinite": (send(429, {}, {"Retry-After": "1e999"}), r"Retry-After inf s"),
    "Retry-After a date years away": (
        send(503, {}, {"Retry-After": "Fri, 31 Dec 2100 23:59:59 GMT"}),
        r"HTTP 503, Retry-After \d+ s is over",
    ),
    "not JSON": (send(200, b"{not json"), r"malformed JSON"),
    "empty body": (send(200, b""), r"malformed JSON"),
    "empty body, no content type": (send(200, b"", ctype=None), r"unexpected answer|malformed"),
    "HTML with 200": (
        send(200, b"<html><body>Sorry</body></html>", ctype="text/html"),
        r"not JSON|malformed JSON",
    ),
    "JSON null": (send(200, None), r"unexpected answer"),
    "a gzip body that is not": (
        send(200, b"plain", {"Content-Encoding": "gzip"}),
        r"unexpected answer|malformed JSON",
    ),
    "HTTP 404": (send(404, {"message": "Resource not found."}), ""),  # not found, not failed
}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_is_recorded_and_the_next_run_resolves_it(idx, fault):
    reply, why = FAULTS[fault]
    bad = Raw({"/": [reply]})
    waits: list[float] = []
    try:
        r = resolve(idx, settings=_settings(bad.url), sleep=waits.append)
    finally:
        bad.close()
    rows = _rows(idx)
    asked = ASKED | {_ref(rows)}
    assert set(rows) == asked and r.offline is None
    assert all(data is None for _, data, _ in rows.values())  # nothing cached
    assert all(0 <= w <= 5.0 for w in waits) and not any(map(math.isnan, waits))
    if fault == "HTTP 404":
        assert {st for st, _, _ in rows.values()} == {"not_found"} and not r.failures
        return
    assert {st for st, _, _ in rows.values()} == {"failed"}
    assert {(e, s) for e, s, _ in r.failures} == asked
    for (e, s), (_, _, error) in rows.items():
        assert re.search(why, error), (e, s, error)
    assert search(idx, "kernel").hits  # the store still answers
    server = Loopback({k: [(200, v, {})] for k, v in GOOD.items()})
    try:
        again = resolve(idx, settings=_settings(server.url))
    finally:
        server.close()
    assert (again.found, again.failures, again.cached) == (4, [], 0)  # all asked again
    assert {st for st, _, _ in _rows(idx).values()} == {"ok"}
    e = entity(idx, f"doi:{DOI}")
    assert (e.label, e.meta["year"], e.meta["openalex"]) == (TITLE, 2009, "W2100837269")


RECOVERED = {  # a fault then an answer: the retry gets it, within the same run
    "Retry-After negative": send(429, {}, {"Retry-After": "-5"}),
    "Retry-After not a number": send(429, {}, {"Retry-After": "soon"}),
    "Retry-After NaN": send(503, {}, {"Retry-After": "nan"}),
    "Retry-After a date past": send(429, {}, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}),
    "Retry-After empty": send(429, {}, {"Retry-After": ""}),
    "a reset": reset,
    "a body cut short": send(200, WORK, extra=50),
}


@pytest.mark.parametrize("fault", RECOVERED)
def test_a_passing_fault_is_retried_with_a_sane_wait(idx, fault):
    server = Raw({path: [RECOVERED[fault], good(path)] for path in GOOD})
    waits: list[float] = []
    try:
        r = resolve(idx, settings=_settings(server.url, retries=2), sleep=waits.append)
    finally:
        server.close()
    assert (r.found, r.failures, r.retried) == (4, [], 4)
    assert {st for st, _, _ in _rows(idx).values()} == {"ok"}
    assert all(0 <= w <= 0.01 for w in waits)  # the pacing, and the backoff (or 0 for a past date)


ODD = {  # a well-formed JSON answer of a shape kbx does not read, per question
    "crossref: message a list": (CROSSREF_PATH, {"message": []}),
    "crossref: title a number": (CROSSREF_PATH, {"message": {"DOI": DOI, "title": 5}}),
    "crossref: a list, not an object": (CROSSREF_PATH, [WORK]),
    "crossref: a string": (CROSSREF_PATH, "work"),
    "crossref: no message": (CROSSREF_PATH, {"status": "ok"}),
    "crossref: no DOI": (CROSSREF_PATH, {"message": {"title": [TITLE]}}),
    "crossref: title of booleans": (CROSSREF_PATH, {"message": {"DOI": DOI, "title": [True]}}),
    "crossref: date-parts strings": (
        CROSSREF_PATH,
        {"message": {"DOI": DOI, "issued": {"date-parts": [["2009"]]}}},
    ),
    "crossref: date-parts flat": (
        CROSSREF_PATH,
        {"message": {"DOI": DOI, "issued": {"date-parts": [2009]}}},
    ),
    "crossref: author an object": (CROSSREF_PATH, {"message": {"DOI": DOI, "author": {"a": 1}}}),
    "crossref: author names": (CROSSREF_PATH, {"message": {"DOI": DOI, "author": ["Klein"]}}),
    "crossref: given a number": (
        CROSSREF_PATH,
        {"message": {"DOI": DOI, "author": [{"given": 7, "family": "Klein"}]}},
    ),
    "crossref: venue numbers": (CROSSREF_PATH, {"message": {"DOI": DOI, "container-title": [1]}}),
    "match: items a string": (MATCH_PATH, {"message": {"total-results": 1, "items": "x"}}),
    "match: items numbers": (MATCH_PATH, {"message": {"total-results": 1, "items": [5]}}),
    "match: score a word": (
        MATCH_PATH,
        {"message": {"total-results": 1, "items": [{"DOI": DOI, "score": "high"}]}},
    ),
    "match: message a list": (MATCH_PATH, {"message": []}),
    "match: no items": (MATCH_PATH, {"message": {"total-results": 1}}),
    "openalex: results a string": (OPENALEX_PATH, {"results": "x"}),
    "openalex: a result list": (OPENALEX_PATH, {"results": [], "meta": {}}),
    "openalex: a list": (OPENALEX_PATH, [OPENALEX_WORK]),
    "openalex: id a number": (OPENALEX_PATH, {"id": 5}),
    "openalex: year a string": (OPENALEX_PATH, {"id": "W1", "publication_year": "2009"}),
    "openalex: authorships a string": (OPENALEX_PATH, {"id": "W1", "authorships": "x"}),
    "openalex: author a name": (OPENALEX_PATH, {"id": "W1", "authorships": [{"author": "G"}]}),
    "openalex: location a list": (OPENALEX_PATH, {"id": "W1", "primary_location": []}),
    "openalex: venue a number": (
        OPENALEX_PATH,
        {"id": "W1", "primary_location": {"source": {"display_name": 3}}},
    ),
    "author: name a number": (AUTHOR_PATH, {"id": "A1", "display_name": 5}),
    "author: no id": (AUTHOR_PATH, {"display_name": "Gerwin Klein"}),
    "author: a list": (AUTHOR_PATH, [AUTHOR]),
}
SERVICE = {CROSSREF_PATH: "crossref", MATCH_PATH: MATCH, OPENALEX_PATH: "openalex"}


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_answer_is_a_failure_never_cached(idx, odd):
    path, body = ODD[odd]
    server = Loopback({k: [(200, body if k == path else v, {})] for k, v in GOOD.items()})
    try:
        r = resolve(idx, settings=_settings(server.url))
        rows = _rows(idx)
        key = next(
            k
            for k in rows
            if k[1] == SERVICE.get(path, "openalex")
            and k[0].startswith("orcid:") == (path == AUTHOR_PATH)
        )
        assert rows[key][:2] == ("failed", None), rows[key]  # recorded, nothing cached
        assert rows[key][2].startswith("unexpected answer")
        assert [(e, s) for e, s, _ in r.failures] == [key]
        assert {st for k, (st, _, _) in rows.items() if k != key} == {"ok"}  # the rest go on
        assert entity(idx, f"doi:{DOI}").entity_id  # the entity layer rebuilt
        assert search(idx, "kernel", facets=True).hits
        server.routes[path] = [(200, GOOD[path], {})]
        again = resolve(idx, settings=_settings(server.url))
    finally:
        server.close()
    assert (again.found, again.failures) == (1, []) and _rows(idx)[key][0] == "ok"


def test_a_failed_refresh_keeps_the_answer_it_meant_to_renew(idx):
    server = Loopback({k: [(200, v, {})] for k, v in GOOD.items()})
    try:
        resolve(idx, settings=_settings(server.url))
        before = _rows(idx)
        server.routes[CROSSREF_PATH] = [(500, {}, {})]
        r = resolve(idx, settings=_settings(server.url), refresh=True, sleep=lambda s: None)
    finally:
        server.close()
    assert [(e, s) for e, s, _ in r.failures] == [(f"doi:{DOI}", "crossref")]
    assert _rows(idx)[(f"doi:{DOI}", "crossref")] == before[(f"doi:{DOI}", "crossref")]
    assert entity(idx, f"doi:{DOI}").label == TITLE


BAD_CACHE = {  # ok answers an older kbx cached without checking them
    "a list": [],
    "title a number": {"DOI": DOI, "title": 5, "issued": {"date-parts": [["2009"]]}},
    "a string": "work",
    "a number": 5,
    "author a string": {"DOI": DOI, "author": "Klein", "container-title": 7},
    "authors odd": {"DOI": DOI, "author": [5, {"given": 5, "family": ["Klein"]}, None]},
    "a year too large": {"DOI": DOI, "issued": {"date-parts": [[99999999999]]}},
    "date-parts empty": {"DOI": DOI, "issued": {"date-parts": []}, "title": [None]},
    "no data": None,
}


@pytest.mark.parametrize("bad", BAD_CACHE)
def test_a_bad_cached_answer_does_not_break_the_rebuild(idx, bad):
    rows = [
        (f"doi:{DOI}", "crossref", BAD_CACHE[bad]),
        (f"doi:{DOI}", "openalex", OPENALEX_WORK),
        (f"orcid:{ORCID}", "openalex", BAD_CACHE[bad]),
    ]
    with attached(idx.db, read_only=False) as con:
        for e, s, data in rows:
            data = None if data is None else json.dumps(data)
            con.execute("INSERT INTO resolutions VALUES (?, ?, 'ok', now(), ?, NULL)", [e, s, data])
    paper = idx.root / "paper.md"
    paper.write_text(paper.read_text() + "\nMore about the kernel.\n")
    report = index(idx.root, registry=REGISTRY)
    assert report.updated == 1  # the entity layer was rebuilt
    e = entity(idx, f"doi:{DOI}")
    assert e.meta["openalex"] == "W2100837269" and e.meta["year"] == 2009  # from OpenAlex
    assert entity(idx, "W2100837269").entity_id == f"doi:{DOI}"
    cited = search(idx, "kernel", facets=True).facets.cited_years
    assert cited.values == [{"year": 2009, "count": 1}]


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("base", ["closed port", "no DNS"])
def test_offline_in_every_scope_is_one_line_and_changes_nothing(idx, base):
    url = _closed_port() if base == "closed port" else "http://kbx-offline.invalid"
    for only in (None, ["doi"], ["orcid"], ["reference"]):
        r = resolve(idx, only=only, settings=_settings(url))
        assert r.offline and "cannot be reached" in r.offline and "\n" not in r.offline
        assert (r.found, r.not_found, r.failures, _rows(idx)) == (0, 0, [], {})
    assert r.offline.startswith("crossref cannot be reached")  # a reference asks Crossref


@pytest.mark.parametrize("args", [[], ["--only", "reference"], ["--only", "orcid"]])
def test_the_command_offline_says_one_line(idx, args, monkeypatch):
    url = _closed_port()
    monkeypatch.setenv("KBX_CROSSREF_URL", url)
    monkeypatch.setenv("KBX_OPENALEX_URL", url)
    r = run_cli("resolve", *args, cwd=idx.root)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    lines = r.stdout.splitlines()
    assert [line for line in lines if line.startswith("offline:")] == lines[:1]
    assert "cannot be reached" in lines[0] and len(lines) == 2
    assert _rows(idx) == {}


def test_index_then_resolve_offline_keeps_the_index_summary(idx, monkeypatch):
    url = _closed_port()
    monkeypatch.setenv("KBX_CROSSREF_URL", url)
    monkeypatch.setenv("KBX_OPENALEX_URL", url)
    (idx.root / "more.md").write_text(f"# More\n\nAgain doi:{DOI}.\n")
    r = run_cli("index", str(idx.root), "--resolve")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.startswith("Indexed ") and "1 new" in r.stdout
    offline = [line.strip() for line in r.stdout.splitlines() if "offline:" in line]
    assert len(offline) == 1 and "cannot be reached" in offline[0]
    assert _rows(idx) == {}


def test_one_service_offline_leaves_the_other_asked(idx):
    server = Loopback({k: [(200, v, {})] for k, v in GOOD.items()})
    try:
        settings = _settings(server.url, openalex_url=_closed_port())
        r = resolve(idx, settings=settings)
    finally:
        server.close()
    assert r.offline and r.offline.startswith("openalex cannot be reached")
    assert {s: st for (_, s), (st, _, _) in _rows(idx).items()} == {"crossref": "ok", MATCH: "ok"}
    assert entity(idx, f"doi:{DOI}").label == TITLE
