"""Which recognizers run on an index: the installed ones as ``kbx.toml`` sets them up,
plus the index's own gazetteer."""

from __future__ import annotations

import json

import duckdb

from kbx.config import load_config
from kbx.gazetteer.entries import Entry
from kbx.gazetteer.matcher import GazetteerRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

NAME = "gazetteer"


def entries(con: duckdb.DuckDBPyConnection, retracted: bool = False) -> list[Entry]:
    """The current entries (with ``retracted``, the retracted ones too)."""
    rows = con.execute(
        "SELECT entry_id, name, type, aliases, ignore_case, protected FROM gazetteer "
        f"{'' if retracted else 'WHERE retracted_at IS NULL'} ORDER BY entry_id"
    ).fetchall()
    held: dict[str, list[str]] = {}
    for alias, entry_id in pins(con).items():
        held.setdefault(entry_id, []).append(alias)
    return [
        Entry(r[0], r[1], r[2], tuple(r[3]), r[4], r[5], tuple(held.get(r[0], ()))) for r in rows
    ]


def pins(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Shared aliases (lower case, as SQL's ``lower``) → the entry that pins them: the
    latest ``pin`` in the gazetteer's log by an entry that is current and has the alias. A
    pin is only a log line (``kbx gazetteer add --pin``), so replaying the log restores it."""
    rows = con.execute(
        """SELECT l.entry_id, l.data, g.aliases FROM gazetteer_log l
           JOIN gazetteer g ON g.entry_id = l.entry_id AND g.retracted_at IS NULL
           WHERE l.action = 'pin' ORDER BY l.seq"""
    ).fetchall()
    out = {}
    for entry_id, data, aliases in rows:
        has = {a.lower() for a in aliases}
        for a in json.loads(data).get("aliases", []):
            if a.lower() in has:
                out[a.lower()] = entry_id
    return out


def recognizer(con: duckdb.DuckDBPyConnection) -> GazetteerRecognizer:
    return GazetteerRecognizer(entries(con))


def registry_for(
    index: Index, base: Registry | None = None, con: duckdb.DuckDBPyConnection | None = None
) -> Registry:
    """The installed recognizers as the root's ``kbx.toml`` sets them up, plus this index's
    gazetteer (unless ``kbx.toml`` disables it), read on ``con`` when the caller holds the
    file open."""
    config = load_config(index.root)
    registry = base if base is not None else Registry.load(config)
    if NAME in config.disabled:
        return registry
    if con is not None:
        registry.register(recognizer(con))
        return registry
    if not index.db.exists():  # nothing indexed yet: an empty gazetteer
        registry.register(GazetteerRecognizer([]))
        return registry
    with index.reader() as con:
        registry.register(recognizer(con))
    return registry
