"""What failed on one unit or one document, and nothing more: where it is kept and how
``kbx status``, ``kbx index`` and ``kbx reprocess`` list it beside the files that failed.

A recognizer that raises on a unit fails that unit alone (annotate/run.py tries a batch
that raised again unit by unit): its run is stored with the error, so the next pass tries
it again, and the unit has none of that recognizer's mentions meanwhile. A stage of the
document context (annotate/context.py: the document's own date, its names carried through
it, a mention's value resolved against its date) that raises on one document or one value
fails that alone: the document gets no date from its head, its names as its units found
them, the value none; the failure is one ``doc_context`` row per document and stage
(recognizer ``failed:STAGE``), replaced whenever the stage redoes the document, and gone
with the document. No table is added: an index of an older kbx reads the same.
"""

from __future__ import annotations

import json
from datetime import datetime

import duckdb

from kbx.extract.textmap import locate, unpack
from kbx.store.db import rows_select

FAILED = "failed:"  # the doc_context rows of a stage that failed on a document
ERROR_CHARS = 500  # of an exception's text, kept


def error_text(e: BaseException) -> str:
    """An exception as one line: its type and message."""
    return " ".join(f"{type(e).__name__}: {e}".split())[:ERROR_CHARS]


def record(
    con: duckdb.DuckDBPyConnection, stage: str, docs: list[int], failed: dict[int, list[dict]]
) -> None:
    """Inside the caller's transaction: the failures of ``stage`` on ``docs`` (those it just
    redid) are now ``failed`` (per document, dicts of ``recognizer``, ``unit``, ``start`` and
    ``error``); the documents not in it failed on nothing."""
    con.execute(
        "DELETE FROM doc_context WHERE recognizer = ? AND list_contains(?, doc_id)",
        [FAILED + stage, docs],
    )
    at = datetime.now().isoformat(timespec="microseconds")
    rows = [
        (doc_id, FAILED + stage, "1", json.dumps({"at": at, "failures": found}))
        for doc_id, found in failed.items()
        if found
    ]
    if rows:
        select, params = rows_select(["doc_id", "recognizer", "version", "data"], rows)
        con.execute(f"INSERT INTO doc_context {select}", params)


def listed(
    con: duckdb.DuckDBPyConnection, since: datetime | None = None, limit: int = 200
) -> list[dict]:
    """Units a recognizer failed on and documents a context stage failed on (those since
    ``since``), each as ``path``, ``line`` (the passage's first, or the value's), ``recognizer``,
    ``stage`` (``recognize``, ``date``, ``names``, ``resolve``) and ``error``; at most
    ``limit`` of each kind (``kbx status`` counts a recognizer's failed units all)."""
    units = con.execute(
        f"""SELECT d.path, min(pl.start_line), r.recognizer, r.error
            FROM runs r JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
            JOIN documents d USING (doc_id)
            WHERE r.error IS NOT NULL AND r.ran_at >= ?
            GROUP BY d.path, r.unit_hash, r.recognizer, r.error
            ORDER BY d.path, 2, r.recognizer LIMIT {int(limit)}""",
        [since or datetime.min],
    ).fetchall()
    out = [
        {"path": p, "line": line, "recognizer": rec, "stage": "recognize", "error": e}
        for p, line, rec, e in units
    ]
    docs = con.execute(
        f"""SELECT c.doc_id, d.path, c.recognizer, c.data FROM doc_context c
            JOIN documents d USING (doc_id)
            WHERE starts_with(c.recognizer, '{FAILED}') AND c.data->>'at' >= ?
            ORDER BY d.path, c.recognizer LIMIT {int(limit)}""",
        [since.isoformat(timespec="microseconds") if since else ""],
    ).fetchall()
    at = _placed(con, [doc_id for doc_id, *_ in docs])
    for doc_id, path, stage, data in docs:
        for f in json.loads(data).get("failures", []):
            out.append(
                {
                    "path": path,
                    "line": _line(at.get((doc_id, f.get("unit"))), f.get("start")),
                    "recognizer": f.get("recognizer"),
                    "stage": stage.removeprefix(FAILED),
                    "error": f.get("error"),
                }
            )
    return out


def _placed(con: duckdb.DuckDBPyConnection, docs: list[int]) -> dict[tuple, tuple]:
    """Where each unit of the documents first sits: its first line, offset map and text."""
    if not docs:
        return {}
    rows = con.execute(
        """SELECT pl.doc_id, u.unit_hash, arg_min(pl.start_line, pl.ordinal),
                  arg_min(pl.offsets, pl.ordinal), arg_min(u.text, pl.ordinal)
           FROM placements pl JOIN units u USING (unit_id)
           WHERE list_contains(?, pl.doc_id) GROUP BY ALL""",
        [docs],
    ).fetchall()
    return {(d, h): tuple(placed) for d, h, *placed in rows}


def _line(placed: tuple | None, start: int | None) -> int | None:
    """The line of character ``start`` of a placed unit (its first line without one)."""
    if placed is None:
        return None
    first, offsets, text = placed
    if start is None:
        return first
    try:
        return locate(unpack(offsets), text, start).line
    except (ValueError, IndexError):  # an odd map: the passage's first line says enough
        return first

