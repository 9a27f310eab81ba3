"""The HTTP JSON API against the real server: each answer is exactly the command's --json,
parameters are the CLI's options, a bad request is one JSON error with a 4xx, and writes
go through the store's own lock."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from helpers import run_kbx
from typer.testing import CliRunner

from kbx import api
from kbx.cli.app import app

SAME_AS_CLI = [  # (path and query, the same command line)
    ("/api/search?q=supplier+approval&k=3", ["search", "supplier approval", "-k", "3"]),
    ("/api/search?q=supplier&entity=Ann+Lee", ["search", "supplier", "--entity", "Ann Lee"]),
    ("/api/grep?pattern=Supp%5Cw%2B&context=1", ["grep", r"Supp\w+", "-C", "1"]),
    ("/api/read?spec=notes/cedar.md:7-9", ["read", "notes/cedar.md:7-9"]),
    ("/api/entities?type=DOI", ["entities", "--type", "DOI"]),
    ("/api/entity/doi:10.1000/xyz123", ["entity", "doi:10.1000/xyz123"]),
    ("/api/status", ["status"]),
    (
        "/api/search?q=supplier&after=2021-03&before=2021-03",
        ["search", "supplier", "--after", "2021-03", "--before", "2021-03"],
    ),
]


def cli_json(docs, args: list[str]) -> dict:
    db = str(docs / ".kbx" / "index.duckdb")
    r = CliRunner().invoke(app, [*args, "--db", db, "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize(("query", "args"), SAME_AS_CLI, ids=[a[0] for _, a in SAME_AS_CLI])
def test_each_answer_is_the_commands_json(http, docs, monkeypatch, query, args):
    monkeypatch.chdir(docs)
    r = http.get(query)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == cli_json(docs, args)


def test_filters_are_named_as_the_cli_options(http):
    def paths(**params) -> list[str]:
        r = http.get("/api/search", params={"q": "supplier approval", **params})
        assert r.status_code == 200, r.text
        return sorted({h["path"] for h in r.json()["hits"]})

    assert paths() == ["notes/cedar.md", "runbook.txt"]
    assert paths(path="notes/*") == ["notes/cedar.md"]
    assert paths(meta="category=process") == ["notes/cedar.md"]
    assert paths(after="2022", **{"date-from": "mentioned"}) == ["runbook.txt"]
    # --before is inclusive at the precision written; --after D --before D is D
    assert paths(before="2021-03-04") == ["notes/cedar.md"]  # the note's own day
    assert paths(before="2021-03-03") == []
    assert paths(after="2021-03-04", before="2021-03-04") == ["notes/cedar.md"]
    assert paths(after="2022", before="2022", **{"date-from": "mentioned"}) == ["runbook.txt"]
    assert paths(entity=["Ann Lee", "doi:10.1000/xyz123"]) == ["notes/cedar.md"]
    r = http.get("/api/search", params={"q": "supplier", "facets": "false"})
    assert r.json()["facets"] is None  # as `kbx search` without --facets


BAD = [  # (request, status, error, words of its message)
    ("/api/search?k=3", 400, "BadArgument", "/api/search needs q"),
    ("/api/search?q=a&kk=2", 400, "BadArgument", "takes no kk; it takes q, k, entity"),
    ("/api/search?q=a&k=1000", 400, "BadArgument", "k must be from 1 to 100"),
    ("/api/search?q=a&k=two", 400, "BadArgument", "k must be a whole number"),
    ("/api/search?q=a&k=1&k=2", 400, "BadArgument", "give k once"),
    ("/api/search?q=a&facets=maybe", 400, "BadArgument", "facets is true or false"),
    ("/api/search?q=a&entity=Nobody", 400, "BadArgument", "no entity named 'Nobody'"),
    ("/api/grep?pattern=(", 400, "BadArgument", "bad regular expression"),
    ("/api/grep?pattern=a&max=100000", 400, "BadArgument", "max must be from 1 to 500"),
    ("/api/grep?pattern=a&timeout=0", 400, "BadArgument", "timeout must be from 1 to 60"),
    ("/api/grep?pattern=a&timeout=600", 400, "BadArgument", "timeout must be from 1 to 60"),
    ("/api/read?spec=nothere.md", 400, "BadArgument", "no such file"),
    ("/api/entity/nobody", 400, "BadArgument", "nobody"),
    ("/api/nothing", 404, "NotFound", "GET /api/nothing"),
]


@pytest.mark.parametrize(("query", "status", "error", "words"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_request_is_one_json_error(http, query, status, error, words):
    r = http.get(query)
    assert r.status_code == status
    body = r.json()
    assert set(body) == {"error", "code", "message", "hint"}
    assert body["error"] == error and body["code"] == 2
    assert words in body["message"]


def test_a_wrong_method_is_refused_in_json(http):
    r = http.post("/api/search?q=a", json={})
    assert r.status_code == 405
    assert r.json()["error"] == "MethodNotAllowed"


def test_a_gazetteer_entry_added_and_retracted_through_the_api(http, docs):
    add = {"action": "add", "name": "Bluefin Labs", "type": "ORG", "by": "agent:pytest",
           "source": "notes/cedar.md", "note": "seen in the steps"}  # fmt: skip
    r = http.post("/api/gazetteer", json=add)
    assert r.status_code == 200, r.text
    assert r.json()["entry_ids"] == ["gz:bluefin-labs"] and r.json()["mentions"] == 1
    hits = http.get("/api/search", params={"q": "certificate", "entity": "Bluefin Labs"})
    assert [h["path"] for h in hits.json()["hits"]] == ["notes/cedar.md"]
    (entry,) = api.gazetteer_list(api.Index.for_root(docs))  # the store, through the library
    assert (entry["added_by"], entry["source"]) == ("agent:pytest", "notes/cedar.md")

    again = http.post("/api/gazetteer", json=add)
    assert again.status_code == 400 and "Bluefin Labs" in again.json()["message"]
    gone = {"action": "retract", "id": "gz:bluefin-labs", "by": "agent:pytest", "why": "test"}
    assert http.post("/api/gazetteer", json=gone).status_code == 200
    (entry,) = api.gazetteer_list(api.Index.for_root(docs), retracted=True)
    assert (entry["retracted_by"], entry["why"]) == ("agent:pytest", "test")
    r = http.get("/api/search", params={"q": "certificate", "entity": "gz:bluefin-labs"})
    assert r.status_code == 400  # its mentions left search: the entity is no longer known
    assert "no entity named 'gz:bluefin-labs'" in r.json()["message"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"name": "X", "type": "ORG", "by": "a"}, "action must be add or retract"),
        ({"action": "add", "name": "X", "type": "ORG"}, "needs by"),
        ({"action": "add", "name": "X", "type": "ORG", "by": " "}, "by is required"),
        ({"action": "add", "name": "X", "type": "NOPE", "by": "a"}, "NOPE"),
        ({"action": "add", "name": "X", "type": "ORG", "by": "a", "colour": 1}, "takes no colour"),
        ({"action": "add", "name": ["X"], "type": "ORG", "by": "a"}, "name takes text"),
        ({"action": "add", "name": 3, "type": "ORG", "by": "a"}, "name takes text"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_a_bad_edit_is_refused_and_changes_nothing(http, docs, body, words):
    before = api.gazetteer_list(api.Index.for_root(docs), retracted=True)
    r = http.post("/api/gazetteer", json=body)
    assert r.status_code == 400
    assert words in r.json()["message"]
    assert api.gazetteer_list(api.Index.for_root(docs), retracted=True) == before


def test_kbx_index_from_a_shell_goes_through_while_the_server_answers(http, docs):
    """Searches keep coming while another process indexes: the server lets the file go
    between connections, so the writer waits a moment and succeeds; searches never fail."""
    statuses: list[int] = []
    done = threading.Event()

    def keep_searching():
        while not done.is_set():
            statuses.append(http.get("/api/search", params={"q": "supplier"}).status_code)

    (docs / "later.md").write_text("# Later\n\nA zephyrine note about suppliers.\n")
    worker = threading.Thread(target=keep_searching)
    worker.start()
    try:
        r = run_kbx("index", str(docs))
    finally:
        done.set()
        worker.join()
        (docs / "later.md").unlink()
    assert r.returncode == 0, r.stderr
    assert statuses and set(statuses) == {200}
    hits = http.get("/api/search", params={"q": "zephyrine"}).json()["hits"]
    assert [h["path"] for h in hits] == ["later.md"]


HOLD_THE_LOCK = """
import sys
from kbx import api
with api.Index.for_root(sys.argv[1]).writing("test (holding the lock)"):
    print("held", flush=True)
    sys.stdin.readline()  # until the test closes it, or 30 s
"""


def test_searches_go_on_while_a_write_waits_for_another_process(http, docs):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(docs)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    let_go = threading.Timer(30, holder.stdin.close)
    let_go.start()
    try:
        assert holder.stdout.readline() == "held\n"
        edit: dict = {}
        add = {"action": "add", "name": "Ann Lee", "type": "PERSON", "by": "agent:pytest"}
        writer = threading.Thread(
            target=lambda: edit.update(r=http.post("/api/gazetteer", json=add))
        )
        writer.start()
        time.sleep(0.3)  # the edit now waits for the lock
        t = time.monotonic()
        assert http.get("/api/search", params={"q": "supplier"}).status_code == 200
        assert time.monotonic() - t < 2 and writer.is_alive()  # answered while it waits
        holder.stdin.close()  # the holder lets go: the edit goes through
        writer.join()
    finally:
        let_go.cancel()
        if not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(30)
    assert edit["r"].status_code == 200, edit["r"].text
    gone = {"action": "retract", "id": edit["r"].json()["entry_ids"][0], "by": "a", "why": "t"}
    assert http.post("/api/gazetteer", json=gone).status_code == 200


def test_the_servers_connections_send_without_waiting_for_acks():
    """Nagle's algorithm off on every accepted connection: with it on, a keep-alive
    client's every answer waited for its own delayed ACK. asyncio turns it off only on a
    socket that names its protocol, so this is a property of ``bound_socket``'s socket."""
    import asyncio
    import socket

    from kbx.serve.http import bound_socket

    async def accepted() -> int:
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        class Record(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        listening = bound_socket("127.0.0.1", 0)
        port = listening.getsockname()[1]
        srv = await asyncio.get_running_loop().create_server(Record, sock=listening)
        async with srv:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            flag = await asyncio.wait_for(seen, 10)
            writer.close()
        return flag

    assert asyncio.run(accepted()) != 0
