"""The gazetteer in an index: provenance, refusals that change nothing, edits that re-run only
the units they can touch, retraction, import/export, and protected names."""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from helpers import registry_with_gazetteer as _registry

from kbx.entities import gazetteer as gz
from kbx.entities.lookup import entities
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.search.filters import Filters
from kbx.search.search import search
from kbx.store.db import Index


def _q(idx: Index, sql: str, params=()):
    con = duckdb.connect(str(idx.db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _units_containing(idx: Index, alias: str) -> int:
    """Units holding the alias as written: those an edit of a case-sensitive entry re-runs."""
    return sum(1 for (t,) in _q(idx, "SELECT text FROM units") if alias in t)


def _occurrences(idx: Index, pattern: str) -> int:
    return sum(len(re.findall(pattern, t)) for (t,) in _q(idx, "SELECT text FROM units"))


def test_an_added_entry_is_found_with_its_provenance(posts):
    r = gz.add(
        posts,
        "Project Cedar",
        "project",
        ["Cedar"],
        actor="agent:planner",
        source="posts/2021-openssl.md",
        note="the supplier project",
    )
    assert r.entry_ids == ["gz:project-cedar"]
    (row,) = [e for e in entities(posts) if e.entity_id == "gz:project-cedar"]
    assert (row.type, row.documents) == ("PROJECT", 2)
    shown = gz.show(posts, "gz:project-cedar")
    (log,) = shown["log"]
    assert (log["action"], log["by"], log["source"], log["note"]) == (
        "add",
        "agent:planner",
        "posts/2021-openssl.md",
        "the supplier project",
    )
    hits = search(posts, "ships", filters=Filters(entities=["Cedar"])).hits
    assert [h.path for h in hits] == ["posts/2023-release.md"]


def test_bad_entries_change_nothing(posts):
    gz.add(posts, "Project Cedar", "PROJECT", ["Cedar"])
    before = (
        _q(posts, "SELECT * FROM gazetteer ORDER BY ALL"),
        _q(posts, "SELECT count(*) FROM gazetteer_log"),
    )
    for call, message in [
        (lambda: gz.add(posts, "  ", "ORG"), "the name is empty"),
        (lambda: gz.add(posts, "Acme", "COMPANY"), "unknown type 'COMPANY'; choose from"),
        (
            lambda: gz.add(posts, "Cedar Corp", "ORG", ["cedar"]),
            r"'cedar' is already an alias of gz:project-cedar \(Project Cedar\)",
        ),
        (lambda: gz.add(posts, "Acme", "ORG", source="/etc/hosts"), "outside the indexed root"),
        (lambda: gz.add(posts, "Acme", "ORG", source="posts/nope.md"), "no such file"),
        (lambda: gz.add(posts, "Acme", "ORG", entry_id="gz:project-cedar"), "is a PROJECT"),
        (lambda: gz.retract(posts, "gz:nope", "ann", "why"), "no gazetteer entry"),
    ]:
        with pytest.raises(BadArgument, match=message):
            call()
    after = (
        _q(posts, "SELECT * FROM gazetteer ORDER BY ALL"),
        _q(posts, "SELECT count(*) FROM gazetteer_log"),
    )
    assert after == before


def test_an_edit_reruns_only_the_units_that_can_hold_its_names(posts):
    n_units = _q(posts, "SELECT count(*) FROM units")[0][0]
    r = gz.add(posts, "OpenSSL", "SOFTWARE")
    assert r.units_rerun == _units_containing(posts, "OpenSSL") == 2
    assert r.units_carried == n_units - 2
    r = gz.add(posts, "Apple Inc.", "ORG", ["Apple"], entry_id="Q312")
    assert r.units_rerun == _units_containing(posts, "Apple") == 2  # both passages of apple.md
    # the carried-over runs are what a full run gives: compare with one from scratch
    version = r.version
    kept = _q(
        posts,
        "SELECT unit_hash, start_char, end_char, key FROM mentions "
        "WHERE recognizer = 'gazetteer' ORDER BY ALL",
    )
    assert _q(posts, "SELECT DISTINCT version FROM runs WHERE recognizer = 'gazetteer'") == [
        (version,)
    ]
    reprocess(posts, _registry(posts), ["gazetteer"], redo_all=True)
    assert kept == _q(
        posts,
        "SELECT unit_hash, start_char, end_char, key FROM mentions "
        "WHERE recognizer = 'gazetteer' ORDER BY ALL",
    )
    expected = _occurrences(posts, r"\bOpenSSL\b") + _occurrences(posts, r"\bApple\b")
    assert len(kept) == expected


def test_a_retraction_removes_mentions_from_search_but_keeps_the_history(posts):
    gz.add(posts, "OpenSSL", "SOFTWARE", actor="ann")
    assert search(posts, "update", filters=Filters(entities=["OpenSSL"])).hits
    r = gz.retract(posts, "gz:openssl", "bo", "a library, not worth tracking")
    assert r.removed == _occurrences(posts, r"\bOpenSSL\b") and r.units_rerun == 2
    with pytest.raises(BadArgument, match="no entity named 'OpenSSL'"):
        search(posts, "update", filters=Filters(entities=["OpenSSL"]))
    assert _q(posts, "SELECT count(*) FROM mentions WHERE key = 'gz:openssl'") == [(0,)]
    log = gz.show(posts, "gz:openssl")["log"]
    assert [(x["action"], x["by"]) for x in log] == [("add", "ann"), ("retract", "bo")]
    assert [e["entry_id"] for e in gz.listing(posts)] == []
    assert [e["entry_id"] for e in gz.listing(posts, retracted=True)] == ["gz:openssl"]
    with pytest.raises(BadArgument, match="already retracted"):
        gz.retract(posts, "gz:openssl", "bo", "again")


def test_export_then_import_gives_the_same_entries(posts, tmp_path):
    gz.add(posts, "OpenSSL", "SOFTWARE", ["openssl"], ignore_case=True, actor="ann")
    gz.add(posts, "Apple Inc.", "ORG", ["Apple"], entry_id="Q312", actor="bo")
    gz.add(posts, "Cedar", "PROJECT", actor="bo")
    gz.retract(posts, "gz:cedar", "bo", "merged")  # exported as history, not imported
    for fmt in ("jsonl", "csv"):
        dump = tmp_path / f"gazetteer.{fmt}"
        dump.write_text(gz.export(posts, fmt))
        other = tmp_path / f"other-{fmt}"
        other.mkdir()
        (other / "a.md").write_text("# A\n\nApple and OPENSSL.\n")
        idx = Index.for_root(other)
        index(other, registry=_registry(idx))
        r = gz.import_entries(idx, dump)
        assert sorted(r.entry_ids) == ["Q312", "gz:openssl"]
        fields = ["entry_id", "name", "type", "aliases", "ignore_case", "added_by"]
        assert [{k: e[k] for k in fields} for e in gz.listing(idx)] == [
            {k: e[k] for k in fields} for e in gz.listing(posts)
        ]
        assert r.mentions == 2


def test_a_bad_import_line_adds_nothing(posts, tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text(
        json.dumps({"name": "Acme", "type": "ORG"})
        + "\n"
        + json.dumps({"name": "Zed", "type": "PLANET"})
        + "\n"
    )
    with pytest.raises(BadArgument, match="bad.jsonl, entry 2: unknown type 'PLANET'"):
        gz.import_entries(posts, f)
    assert gz.listing(posts) == []
    f.write_text("{not json\n")
    with pytest.raises(BadArgument, match="line 1: not JSON"):
        gz.import_entries(posts, f)


def test_check_protects_split_names_and_rebuilds_their_postings(posts):
    gz.add(posts, "io.js", "SOFTWARE")
    before = {h.path for h in search(posts, "io", k=20, exact=0).hits}
    assert before == {"notes/io.md"}  # io.js's part "io", and "io library"
    found = gz.check(posts, protect=False)
    assert [(f["word"], f["why"]) for f in found] == [("io.js", "split into io, js")]
    assert _q(posts, "SELECT value FROM kbx_meta WHERE key = 'protected'") == []
    gz.check(posts)
    assert json.loads(_q(posts, "SELECT value FROM kbx_meta WHERE key = 'protected'")[0][0]) == [
        "io.js"
    ]
    # "js" no longer matches the io.js unit through its part; io.js itself still does
    js_units = {h.unit for h in search(posts, "js", k=20, exact=0).hits}
    io_js = search(posts, "io.js", k=20, exact=0).hits
    assert io_js and all(re.search(r"io\.js", h.text) for h in io_js)
    assert not any(
        "io.js" in h.text and "node.js" not in h.text
        for h in search(posts, "js", k=20, exact=0).hits
    )
    assert js_units  # node.js still has the part "js"
    assert _q(posts, "SELECT protected FROM gazetteer") == [(True,)]
