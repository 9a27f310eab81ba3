"""The curated gazetteer's own file: ``.kbx/gazetteer.jsonl``, an append-only log.

Everything in the index can be rebuilt from the files except what people and agents typed
in: gazetteer entries, their aliases, retractions and why. Those live in this log, one
JSON object per change (the rows of ``gazetteer_log``), beside the index file and never
derived from it. The store's ``gazetteer`` and ``gazetteer_log`` tables are a cache of it:
every writing command first brings them level with the log (``sync``), so deleting or
rebuilding the index loses no entry and no history.

Why a JSONL log, not a second DuckDB file: it is the history itself (the current entries
are a fold over it), a person can read, diff and back it up, appending a line is atomic
enough with one ``write`` and ``fsync`` (a torn last line is an edit that never committed,
and is dropped), and it cannot be locked by a reader the way a database file is.

An edit appends its lines *before* the store commits, so a crash between the two leaves
the change in the log, and the next command replays it; a failed commit truncates them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import duckdb

from kbx.errors import SchemaError
from kbx.store.db import kill_point, mark_dirty, set_meta
from kbx.store.transaction import transaction

FIELDS = ["seq", "entry_id", "action", "actor", "source", "note", "data", "logged_at"]


def read(path: Path) -> list[dict]:
    """The log's events in order; a torn last line (a crash mid-append) is left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as e:
        raise SchemaError(f"cannot read the gazetteer log {path}: {e}") from None
    lines = text.split("\n")
    events = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            if not isinstance(event, dict) or not {"seq", "entry_id", "action"} <= set(event):
                raise ValueError("not a gazetteer event")
        except ValueError as e:
            if n == len(lines):  # no newline after it: the append never finished
                break
            raise SchemaError(
                f"{path}, line {n}: {e}; the gazetteer log is kept by hand-readable lines, "
                "fix or remove that line (nothing else was changed)"
            ) from None
        events.append(event)
    return events


def append(path: Path, events: list[dict]) -> int:
    """Append events durably, after dropping a torn last line; returns the file's size
    before them, for ``truncate``."""
    with open(path, "a+b") as f:
        end = f.seek(0, os.SEEK_END)
        keep = _complete(f, end)
        if keep != end:
            f.truncate(keep)
        f.write(b"".join(_line(e) for e in events))
        f.flush()
        os.fsync(f.fileno())
    return keep


def truncate(path: Path, size: int) -> None:
    """Undo an ``append`` whose store commit failed."""
    with open(path, "r+b") as f:
        f.truncate(size)
        os.fsync(f.fileno())


def rows_since(con: duckdb.DuckDBPyConnection, seq: int) -> list[dict]:
    """The store's log rows after ``seq``, as events."""
    rows = con.execute(
        f"SELECT {', '.join(FIELDS)} FROM gazetteer_log WHERE seq > ? ORDER BY seq", [seq]
    ).fetchall()
    return [_event(r) for r in rows]


def last_seq(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT coalesce(max(seq), 0) FROM gazetteer_log").fetchone()[0]


def sync(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Bring the store's gazetteer level with the log; returns the events replayed.

    The log wins: events it has beyond the store are replayed, and a store whose log is
    not a prefix of it is rebuilt from it. Events only the store has (an index from a kbx
    before the log existed, or a log deleted by hand) are written to the log."""
    if _stamp(path) == _recorded(con):  # the log as the store last saw it: nothing to read
        return 0
    events = read(path)
    stored = rows_since(con, 0)
    n = min(len(events), len(stored))
    if events[:n] == stored[:n] and len(stored) >= len(events):
        if len(stored) > len(events):
            append(path, stored[len(events) :])
        record(con, path)
        return 0
    replay = events[n:] if events[:n] == stored[:n] else events
    with transaction(con):
        if replay is events:
            con.execute("DELETE FROM gazetteer")
            con.execute("DELETE FROM gazetteer_log")
        for e in replay:
            _apply(con, e)
        mark_dirty(con)
        record(con, path)
    return len(replay)


STAMP = "journal_stamp"  # kbx_meta key: the log's size and mtime when the store matched it


def _stamp(path: Path) -> str:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "absent"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _recorded(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [STAMP]).fetchone()
    return row[0] if row else None


def record(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Note that the store matches the log as it is now (in the caller's transaction, after
    its append): the next ``sync`` reads the log only if it changed since (an edit whose
    commit never came, a hand edit, a copy), where reading a log of a million imported
    entries costs every writing command a minute."""
    set_meta(con, STAMP, _stamp(path))


def _apply(con: duckdb.DuckDBPyConnection, e: dict) -> None:
    """Replay one event into the ``gazetteer`` table and its log."""
    at = datetime.fromisoformat(e["logged_at"])
    data = e.get("data") or {}
    if e["action"] == "add":
        con.execute(
            "INSERT INTO gazetteer VALUES (?, ?, ?, ?, ?, false, ?, ?, ?, ?, NULL, NULL, NULL)",
            [
                e["entry_id"],
                data["name"],
                data["type"],
                data["aliases"],
                bool(data.get("ignore_case")),
                e["actor"],
                e.get("source"),
                e.get("note"),
                at,
            ],
        )
    elif e["action"] in ("alias", "restore"):
        (aliases,) = con.execute(
            "SELECT aliases FROM gazetteer WHERE entry_id = ?", [e["entry_id"]]
        ).fetchone()
        merged = list(dict.fromkeys([*aliases, *data["aliases"]]))
        con.execute("UPDATE gazetteer SET aliases = ? WHERE entry_id = ?", [merged, e["entry_id"]])
        if e["action"] == "restore":
            con.execute(
                "UPDATE gazetteer SET retracted_at = NULL, retracted_by = NULL, why = NULL "
                "WHERE entry_id = ?",
                [e["entry_id"]],
            )
    elif e["action"] == "retract":
        con.execute(
            "UPDATE gazetteer SET retracted_at = ?, retracted_by = ?, why = ? WHERE entry_id = ?",
            [at, e["actor"], e.get("note"), e["entry_id"]],
        )
    elif e["action"] == "protect":
        con.execute("UPDATE gazetteer SET protected = true WHERE entry_id = ?", [e["entry_id"]])
        set_meta(con, "protected", json.dumps(data.get("words", [])))
    con.execute(
        f"INSERT INTO gazetteer_log ({', '.join(FIELDS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            e["seq"],
            e["entry_id"],
            e["action"],
            e["actor"],
            e.get("source"),
            e.get("note"),
            json.dumps(data),
            at,
        ],
    )


def _event(row: tuple) -> dict:
    e = dict(zip(FIELDS, row, strict=True))
    e["data"] = json.loads(e["data"]) if e["data"] else {}
    e["logged_at"] = e["logged_at"].isoformat()
    return e


def _line(event: dict) -> bytes:
    return (json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _complete(f, end: int, chunk: int = 4096) -> int:
    """The size of the file up to its last newline: what a crash mid-append leaves whole."""
    pos = end
    while pos > 0:
        start = max(0, pos - chunk)
        f.seek(start)
        at = f.read(pos - start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        pos = start
    return 0


@contextmanager
def journaled(con: duckdb.DuckDBPyConnection, path: Path) -> Iterator[None]:
    """A transaction whose new ``gazetteer_log`` rows reach the log file before it commits
    (a failed commit takes them out again); it marks the entity layer stale."""
    seq = last_seq(con)
    size = None
    try:
        with transaction(con):
            yield
            events = rows_since(con, seq)
            mark_dirty(con)
            if events:
                size = append(path, events)
                record(con, path)
                kill_point("journal.appended")
    except BaseException:  # rolled back, or the commit failed: the log takes them out too
        if size is not None:
            truncate(path, size)
        raise
