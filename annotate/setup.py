"""Which recognizers run on an index: the installed ones as ``kbx.toml`` sets them up,
plus the index's own gazetteer."""

from __future__ import annotations

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
    return [Entry(r[0], r[1], r[2], tuple(r[3]), r[4], r[5]) for r in rows]


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
