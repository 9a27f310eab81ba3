"""The document context layer: mention values that depend on the document they sit in.

A relative date ("yesterday") is stored in its unit's mention as a relative value;
since one unit can sit in documents of different dates, its resolved value lives here,
keyed by document, and is recomputed whenever a document or its mentions change. So are
a document's names (``annotate/names.py``): "Clinton" after "Bill Clinton" is Bill
Clinton in that document only, so the names as the document reads them are rows of
``doc_names``, one per name, with one ``doc_context`` row per document (recognizer
``names``) that records the version they were carried at; the entity layer reads them
through ``NAMES`` in place of the unit-level name mentions.

What is computed here is computed with the file let go where it takes more than a moment
(``WriterLease``): a document is read, its names carried, and the result written in a
short transaction, so searches from other processes answer meanwhile.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date

import duckdb

from kbx.annotate.failures import error_text, record
from kbx.annotate.names import Found, Unit, in_context
from kbx.recognizers.base import shown_text, within_rules
from kbx.recognizers.registry import Registry
from kbx.store.db import WriterLease, held, mark_dirty, mark_stale, rows_select, staged
from kbx.store.transaction import transaction


def document_date(raw: str | None) -> date | None:
    """A document's date as a day, when its metadata (or first lines) gave one."""
    try:
        return date.fromisoformat(raw) if raw and len(raw) == 10 else None
    except ValueError:
        return None


HEAD_CHARS = 300  # how far into a document its own date is looked for


def document_dates(con: duckdb.DuckDBPyConnection, registry: Registry) -> int:
    """A document without a date in its metadata takes the first full date written at its
    top ("Incident: 2022-01-19", "4 March 2021"), found by the registry's date recognizer
    and recorded with its version in ``doc_context``: redone when that version changes,
    undone when dates are turned off. Returns the documents looked at."""
    dates = next((r for r in registry if r.info.name == "dates"), None)
    version = dates.info.version if dates else None
    rows = con.execute(
        """SELECT d.doc_id, u.text, u.code_spans, u.breaks FROM documents d
           LEFT JOIN doc_context c ON c.doc_id = d.doc_id AND c.recognizer = 'dates'
           LEFT JOIN placements pl ON pl.doc_id = d.doc_id AND pl.ordinal = 0
           LEFT JOIN units u USING (unit_id)
           WHERE d.status = 'ok' AND (c.doc_id IS NOT NULL OR d.doc_date IS NULL)
             AND c.version IS DISTINCT FROM ?""",
        [version],
    ).fetchall()
    if not rows:
        return 0
    found, failed = _head_dates(dates, rows) if dates else ([], {})
    with transaction(con):
        ids = [doc_id for doc_id, *_ in rows]
        con.execute(
            "DELETE FROM doc_context WHERE recognizer = 'dates' AND list_contains(?, doc_id)",
            [ids],
        )
        record(con, "date", ids, failed)
        days = [_full_date(ms) for ms in found] if dates else [None] * len(rows)
        select, params = rows_select(["doc_id", "day"], list(zip(ids, days, strict=True)))
        con.execute(  # one statement for the batch: a first index asks this of every file
            f"UPDATE documents SET doc_date = x.day FROM ({select}) x "
            "WHERE documents.doc_id = x.doc_id",
            params,
        )
        if dates:
            found_at = [
                (i, "dates", version, json.dumps({"date": d}))
                for i, d in zip(ids, days, strict=True)
            ]
            select, params = rows_select(["doc_id", "recognizer", "version", "data"], found_at)
            con.execute(f"INSERT INTO doc_context {select}", params)
        mark_stale(con, ids)
    return len(rows)


def _head_dates(dates, rows: list[tuple]) -> tuple[list[list], dict[int, list[dict]]]:
    """The date mentions at each document's top, under the recognizer's rules for inline
    code and table cells, as in its runs: `2021-03-04` in backticks is no document date.
    Where the batch raises, each document alone: one it fails on has none, and is listed
    in the failures (by document)."""
    heads = []
    for _, text, spans, breaks in rows:
        head = (text or "")[:HEAD_CHARS]
        cut = [[a, min(b, len(head))] for a, b in spans or [] if a < len(head)]
        heads.append((head, cut, [b for b in breaks or [] if b < len(head)]))

    def found(some: list[tuple]) -> list[list]:
        ms = dates.recognize([shown_text(dates.info, h, b) for h, _, b in some])
        return [within_rules(dates.info, h, m, c, b) for (h, c, b), m in zip(some, ms, strict=True)]

    try:
        return found(heads), {}
    except Exception:  # the documents it fails on, one at a time
        out, failed = [], {}
        for (doc_id, *_), head in zip(rows, heads, strict=True):
            try:
                out += found([head])
            except Exception as e:
                out.append([])
                failed[doc_id] = [{"recognizer": dates.info.name, "error": error_text(e)}]
        return out, failed


def _full_date(mentions: list) -> str | None:
    for m in mentions:
        if m.type == "DATE" and m.value and re.fullmatch(r"\d{4}-\d\d-\d\d", m.value):
            return m.value
    return None


# Of the rules in annotate/names.py, and of how the entity layer weighs what they made (a
# carried short form a place of its long form): a new one redoes every document, so a
# reprocess rebuilds the entity layer too.
NAMES_VERSION = "2"
NAME_COLUMNS = ["doc_id", "unit_hash", "start_char", "end_char", "type", "text", "surface"]
NAME_COLUMNS += ["recognizer", "how"]
NAME_LIST = ", ".join(NAME_COLUMNS)
# The names each document holds, as the entity layer reads them: the document's rows of
# ``doc_names`` where its context has a ``names`` row (which keeps the version they were
# carried at), else its units' name mentions as recognized.
NAMES = f"""
    SELECT {NAME_LIST} FROM doc_names
    UNION ALL
    SELECT DISTINCT pl.doc_id, m.unit_hash, m.start_char, m.end_char, m.type, m.text,
           coalesce(m.value, m.text), m.recognizer, 'found'
    FROM mentions m JOIN recognizer_info r ON r.name = m.recognizer AND r.names
    JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
    WHERE m.key IS NULL
      AND pl.doc_id NOT IN (SELECT doc_id FROM doc_context WHERE recognizer = 'names')"""
NAMES_BATCH = 200  # documents read and written per transaction, at most
NAMES_CHARS = 2_000_000  # and characters of text, at most (then the batch is one document)
QUICK_CHARS = 100_000  # a batch of fewer is carried with the file held: a few milliseconds


def forget_documents(con: duckdb.DuckDBPyConnection, doc_ids: list[int]) -> None:
    """Inside the caller's transaction: the documents' context goes (their text changed, or
    they are gone)."""
    for table in ("doc_context", "doc_names"):
        con.execute(f"DELETE FROM {table} WHERE list_contains(?, doc_id)", [doc_ids])


def document_names(lease: WriterLease | duckdb.DuckDBPyConnection) -> int:
    """Carry each document's names through it (``annotate/names.py``) and store them, one row
    each in ``doc_names``, with a ``names`` context row that records the version. The version
    is these rules' plus, per recognizer version that ran on its units, how many of them it
    ran on, so a pass cut short (a document's names read from part of its units) and the
    one that finishes it, a reprocess or a document's change redo it; with no name
    recognizer the rows go, and the mentions are read as they are. The documents are read,
    then carried with the file let go (``lease``; a connection is held throughout) where
    that takes more than a moment, then written in one transaction per batch, so searches
    from other processes get in between. Returns the documents done."""
    lease = held(lease)
    con = lease.con()
    finders = [
        n
        for (n,) in con.execute(
            "SELECT name FROM recognizer_info WHERE names ORDER BY name"
        ).fetchall()
    ]
    if not finders:
        if con.execute("SELECT 1 FROM doc_context WHERE recognizer = 'names' LIMIT 1").fetchone():
            with transaction(con):
                con.execute("DELETE FROM doc_context WHERE recognizer IN ('names', 'failed:names')")
                con.execute("DELETE FROM doc_names")
                mark_dirty(con)
        return 0
    stale = con.execute(  # each finder's version and how many of the units it has run on
        """WITH ran AS (
               SELECT pl.doc_id,
                      r.recognizer || ' ' || r.version || ' ' || count(DISTINCT u.unit_hash)
                          AS done
               FROM placements pl JOIN units u USING (unit_id)
               JOIN runs r ON r.unit_hash = u.unit_hash AND list_contains(?, r.recognizer)
                   AND r.error IS NULL
               GROUP BY pl.doc_id, r.recognizer, r.version),
           now AS (
               SELECT d.doc_id, ? || ';' || coalesce(array_to_string(list_sort(
                          list(ran.done) FILTER (WHERE ran.done IS NOT NULL)), ','), '')
                          AS version
               FROM documents d LEFT JOIN ran USING (doc_id)
               WHERE d.status = 'ok' GROUP BY d.doc_id)
           SELECT now.doc_id, now.version,
                  (SELECT sum(length(u.text)) FROM placements pl JOIN units u USING (unit_id)
                   WHERE pl.doc_id = now.doc_id) AS chars
           FROM now
           LEFT JOIN doc_context c ON c.doc_id = now.doc_id AND c.recognizer = 'names'
           WHERE c.version IS DISTINCT FROM now.version ORDER BY now.doc_id""",
        [finders, NAMES_VERSION],
    ).fetchall()
    for batch in _batches(stale):
        docs = list(batch)
        read = _read_names(lease.con(), docs, finders)
        if lease.expired or sum(c for _, c in batch.values()) > QUICK_CHARS:
            lease.release()  # let readers in while the names are carried
        rows, failed = _carried_names(read, finders)
        con = lease.con()
        with transaction(con):
            con.execute(
                "DELETE FROM doc_context WHERE recognizer = 'names' AND list_contains(?, doc_id)",
                [docs],
            )
            con.execute("DELETE FROM doc_names WHERE list_contains(?, doc_id)", [docs])
            record(con, "names", docs, failed)
            select, params = rows_select(
                ["doc_id", "recognizer", "version", "data"],
                [(d, "names", version, None) for d, (version, _) in batch.items()],
            )
            con.execute(f"INSERT INTO doc_context {select}", params)
            if rows:
                columns = dict(zip(NAME_COLUMNS, zip(*rows, strict=True), strict=True))
                ints = frozenset({"doc_id", "start_char", "end_char"})
                with staged(con, "staged_names", columns, ints):
                    con.execute(f"INSERT INTO doc_names SELECT {NAME_LIST} FROM staged_names")
            mark_stale(con, docs)
    return len(stale)


def _batches(stale: list[tuple]) -> Iterator[dict[int, tuple[str, int]]]:
    """The stale documents (doc_id, version, characters) in batches of ``NAMES_BATCH``
    documents and ``NAMES_CHARS`` characters at most (a larger document alone)."""
    batch: dict[int, tuple[str, int]] = {}
    chars = 0
    for doc_id, version, n in stale:
        n = int(n or 0)
        if batch and (len(batch) >= NAMES_BATCH or chars + n > NAMES_CHARS):
            yield batch
            batch, chars = {}, 0
        batch[doc_id] = (version, n)
        chars += n
    if batch:
        yield batch


def _read_names(
    con: duckdb.DuckDBPyConnection, docs: list[int], finders: list[str]
) -> dict[int, tuple[list[Unit], list[str]]]:
    """Each document's units in reading order, with the name mentions of ``finders``, and
    its authors."""
    units: dict[int, dict[int, tuple[str, str, list[Found]]]] = {d: {} for d in docs}
    for doc_id, ordinal, unit_hash, text, s, e, type_, mtext, surface, rec in con.execute(
        """SELECT pl.doc_id, pl.ordinal, u.unit_hash, u.text, m.start_char, m.end_char, m.type,
                  m.text, coalesce(m.value, m.text), m.recognizer
           FROM placements pl JOIN units u USING (unit_id)
           LEFT JOIN mentions m ON m.unit_hash = u.unit_hash AND m.key IS NULL
               AND list_contains(?, m.recognizer)
           WHERE list_contains(?, pl.doc_id)
           ORDER BY pl.doc_id, pl.ordinal, m.start_char, m.end_char, m.recognizer""",
        [finders, docs],
    ).fetchall():
        unit = units[doc_id].setdefault(ordinal, (unit_hash, text, []))
        if rec is not None:
            unit[2].append(Found(s, e, type_, mtext, surface, rec))
    authors = dict(
        con.execute(
            "SELECT doc_id, authors FROM documents WHERE list_contains(?, doc_id)", [docs]
        ).fetchall()
    )
    return {
        doc_id: (
            [Unit(h, t, tuple(f)) for _, (h, t, f) in sorted(placed.items())],
            authors.get(doc_id) or [],
        )
        for doc_id, placed in units.items()
    }


def _carried_names(
    read: dict[int, tuple[list[Unit], list[str]]], finders: list[str]
) -> tuple[list[tuple], dict[int, list[dict]]]:
    """Each document's names in context, as rows of ``doc_names``, and the documents the
    rules failed on: those keep their names as their units found them. Pure: no store."""
    out, failed = [], {}
    for doc_id, (seq, authors) in read.items():
        try:
            names = {  # a unit placed twice in the document names the same spans there
                (n.unit_hash, n.start, n.end, n.recognizer): n
                for n in in_context(seq, authors, finders[0])
            }
            found = [(doc_id, *vars(n).values()) for n in names.values()]
        except Exception as e:  # this document's names as found; the others go on
            failed[doc_id] = [{"recognizer": ", ".join(finders), "error": error_text(e)}]
            found = [(doc_id, *row) for row in _as_found(seq)]
        out += found
    return out, failed


def _as_found(seq: list[Unit]) -> list[tuple]:
    """The names as the units' recognizers found them, as rows of ``doc_names`` less the
    document."""
    names = {}
    for u in seq:
        for f in u.found:
            row = (u.unit_hash, f.start, f.end, f.type, f.text, f.surface, f.recognizer, "found")
            names[(u.unit_hash, f.start, f.end, f.recognizer)] = row
    return list(names.values())


def refresh(lease: WriterLease | duckdb.DuckDBPyConnection, registry: Registry) -> int:
    """Recompute the layer for documents whose context-dependent mentions it lacks or that
    changed since (their own dates and names first); returns how many values were written.
    The names are carried with the file let go where that takes a while (``lease``)."""
    lease = held(lease)
    document_dates(lease.con(), registry)
    document_names(lease)
    con = lease.con()
    resolvers = {r.info.name: r for r in registry if r.info.needs_context and hasattr(r, "resolve")}
    if not resolvers:
        return 0
    names = list(resolvers)
    stale = con.execute(
        """SELECT DISTINCT pl.doc_id FROM placements pl JOIN units u USING (unit_id)
           JOIN mentions m ON m.unit_hash = u.unit_hash
           WHERE list_contains(?, m.recognizer)
             AND NOT EXISTS (SELECT 1 FROM doc_mentions x WHERE x.doc_id = pl.doc_id
                             AND x.unit_hash = m.unit_hash AND x.recognizer = m.recognizer
                             AND x.version = m.version AND x.start_char = m.start_char)
           UNION
           SELECT DISTINCT x.doc_id FROM doc_mentions x LEFT JOIN documents d USING (doc_id)
           WHERE x.doc_date IS DISTINCT FROM d.doc_date
              OR NOT EXISTS (SELECT 1 FROM placements pl JOIN units u USING (unit_id)
                             WHERE pl.doc_id = x.doc_id AND u.unit_hash = x.unit_hash)
              OR NOT EXISTS (SELECT 1 FROM mentions m WHERE m.unit_hash = x.unit_hash
                             AND m.recognizer = x.recognizer AND m.version = x.version)""",
        [names],
    ).fetchall()
    docs = [d for (d,) in stale]
    if not docs:
        return 0
    rows = con.execute(
        """SELECT pl.doc_id, d.doc_date, m.unit_hash, m.recognizer, m.version, m.start_char,
                  m.value
           FROM placements pl JOIN documents d USING (doc_id) JOIN units u USING (unit_id)
           JOIN mentions m ON m.unit_hash = u.unit_hash
           WHERE list_contains(?, pl.doc_id) AND list_contains(?, m.recognizer)""",
        [docs, names],
    ).fetchall()
    resolved, failed = _resolved(resolvers, rows)
    with transaction(con):
        con.execute("DELETE FROM doc_mentions WHERE list_contains(?, doc_id)", [docs])
        record(con, "resolve", docs, failed)
        if resolved:
            columns = [
                "doc_id",
                "unit_hash",
                "recognizer",
                "version",
                "start_char",
                "doc_date",
                "value",
            ]
            select, params = rows_select(columns, resolved)
            con.execute(f"INSERT INTO doc_mentions {select}", params)
        mark_stale(con, docs)
    return len(resolved)


def _resolved(resolvers: dict, rows: list[tuple]) -> tuple[list[tuple], dict[int, list[dict]]]:
    """Each mention's value in its document, and per document the values whose resolver
    raised: those have none (NULL), and the document's other values are kept."""
    out, failed = [], {}
    for doc_id, when, h, rec, ver, start, value in dict.fromkeys(rows):  # a unit placed twice
        try:
            day = resolvers[rec].resolve(value, document_date(when))
        except Exception as e:
            day = None
            failed.setdefault(doc_id, []).append(
                {"recognizer": rec, "unit": h, "start": start, "error": error_text(e)}
            )
        out.append((doc_id, h, rec, ver, start, when, day))
    return list(dict.fromkeys(out)), failed
