"""A shared alias pinned through the HTTP API, as `kbx gazetteer add --pin` pins it."""

from __future__ import annotations

from kbx import api
from kbx.store import journal


def test_a_taken_alias_is_refused_unless_pinned(http, docs):
    first = {"action": "add", "name": "Bluefin Labs", "type": "ORG", "alias": ["Bluefin"],
             "by": "agent:pytest"}  # fmt: skip
    assert http.post("/api/gazetteer", json=first).status_code == 200
    second = {"action": "add", "name": "Bluefin Holdings", "type": "ORG", "alias": ["Bluefin"],
              "by": "agent:pytest"}  # fmt: skip
    r = http.post("/api/gazetteer", json=second)
    assert r.status_code == 400 and "already an alias" in r.json()["message"]
    r = http.post("/api/gazetteer", json={**second, "pin": True})
    assert r.status_code == 200, r.text
    assert r.json()["entry_ids"] == ["gz:bluefin-holdings"]
    log = journal.read(api.Index.for_root(docs).journal_path)
    pins = [(e["entry_id"], e["data"]["aliases"]) for e in log if e["action"] == "pin"]
    assert pins == [("gz:bluefin-holdings", ["Bluefin Holdings", "Bluefin"])]
