"""Running recognizers over stored units: whatever (unit, recognizer, version) lacks a run.

Each batch is one transaction that replaces a recognizer's mentions and runs for
its units, so search sees a unit's old mentions or its new ones, never a mix; an
interrupted pass resumes where it stopped, since finished batches have their runs. A
small pass, where each recognizer has one batch (a re-index of a changed file), writes
them all in one transaction: a transaction's statements, not the rules, are most of what
a small re-index costs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from kbx.annotate.engine import Engine, Pass
from kbx.annotate.failures import error_text
from kbx.errors import Superseded
from kbx.recognizers.base import Recognizer, check_spans, shown_text, within_rules
from kbx.recognizers.registry import Registry
from kbx.store.db import (
    Index,
    WriterLease,
    kill_point,
    mark_dirty,
    mark_units_stale,
    rows_select,
    runs_changed,
    set_meta,
)
from kbx.store.transaction import transaction
from kbx.store.workers import pool as worker_pool

BATCH_UNITS = 500
SLOW_BATCH_UNITS = 64  # a model's batch is seconds of work: progress and resumes move in steps
CHUNK_UNITS = 20_000  # read at a time, so memory stays bounded on a large corpus


@dataclass
class RecognizerReport:
    """What one recognizer did in a pass."""

    name: str
    version: str
    units: int = 0
    mentions: int = 0
    removed: int = 0  # mentions of earlier runs replaced
    superseded: str | None = None  # stopped: a newer version ran meanwhile
    failures: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


def missing(
    con: duckdb.DuckDBPyConnection,
    r: Recognizer,
    limit: int | None = None,
    since: datetime | None = None,
    keys_only: bool = False,
    redo_from: datetime | None = None,
) -> list:
    """Units with no successful run of this recognizer at its current version (and, in a
    pass that started at ``since``, none that failed during it). With ``redo_from``, runs
    older than that count as missing too: a forced pass, resumable like any other."""
    columns = ", u.text, u.heading_path, u.kind, u.code_spans, u.breaks"
    sql = f"""SELECT u.unit_hash{"" if keys_only else columns}
             FROM units u
             ANTI JOIN (SELECT unit_hash FROM runs
                        WHERE recognizer = ? AND version = ?
                        AND (error IS NULL OR ran_at >= ?) AND ran_at >= ?) x
             USING (unit_hash)
             ORDER BY u.unit_id"""
    params = [r.info.name, r.info.version, since or datetime.max, redo_from or datetime.min]
    if limit:
        sql += f" LIMIT {int(limit)}"
    return con.execute(sql, params).fetchall()


def lacking(
    con: duckdb.DuckDBPyConnection,
    recognizers: list[Recognizer],
    redo_from: dict[str, datetime] | None = None,
) -> dict[str, int]:
    """Per recognizer, how many units ``missing`` would return at the start of a pass: a
    unit has at most one run per recognizer, so counting the good runs of each current
    version on stored units (those since ``redo_from[name]`` where given) is enough, in
    one statement for them all where ``missing`` would list every unit of each."""
    if not recognizers:
        return {}
    redo = redo_from or {}
    keys = [(r.info.name, r.info.version, redo.get(r.info.name, datetime.min)) for r in recognizers]
    select, params = rows_select(["name", "version", "since"], keys)
    return dict(
        con.execute(
            f"""SELECT x.name, (SELECT count(*) FROM units) - count(r.unit_hash)
                FROM ({select}) x LEFT JOIN (FROM runs SEMI JOIN units USING (unit_hash)) r
                  ON r.recognizer = x.name AND r.version = x.version AND r.error IS NULL
                 AND r.ran_at >= x.since
                GROUP BY x.name""",
            params,
        ).fetchall()
    )


def _call(r: Recognizer, texts: list[str], headings: list[tuple]) -> list:
    if r.info.headings:
        return r.recognize(texts, headings=headings)
    return r.recognize(texts)


def recognize_batch(r: Recognizer, batch: list[tuple]) -> tuple[list, list]:
    """Mentions and run rows for a batch of ``(unit hash, text, heading path, kind, code
    spans, breaks)`` (the last three may be left out); a unit the recognizer fails on is
    recorded, a code unit of a recognizer that does not read code gets an empty run without
    being shown to it, and the recognizer's rules for inline code and table cells
    (``within_rules``) are applied here, so index and reprocess, built-ins and plugins, all
    keep the same mentions."""
    read = [r.info.code or len(row) < 4 or row[3] != "code" for row in batch]
    mentions, runs = _recognize_rows(r, [row for row, ok in zip(batch, read, strict=True) if ok])
    now = datetime.now()
    skipped = [
        (row[0], r.info.name, r.info.version, 0, None, now)
        for row, ok in zip(batch, read, strict=True)
        if not ok
    ]
    return mentions, runs + skipped


def _layout(row: tuple) -> tuple[list, list]:
    """A unit row's inline code spans and cell separators (NULL or not selected: none)."""
    spans = row[4] if len(row) > 4 else None
    breaks = row[5] if len(row) > 5 else None
    return spans or [], breaks or []


def _recognize_rows(r: Recognizer, batch: list[tuple]) -> tuple[list, list]:
    """Mention and run rows of a batch; where the batch raises (in the recognizer, or in
    what is done with its answer), each unit alone, so only the units it fails on fail."""
    if not batch:
        return [], []
    try:
        texts = [shown_text(r.info, row[1], _layout(row)[1]) for row in batch]
        found = _call(r, texts, [_heading(row) for row in batch])
        results = [_kept(r, row, t, ms) for row, t, ms in zip(batch, texts, found, strict=True)]
        errors: list[str | None] = [None] * len(batch)
    except Exception:  # find the units it fails on, one at a time
        results, errors = [], []
        for row in batch:
            try:
                text = shown_text(r.info, row[1], _layout(row)[1])
                results.append(_kept(r, row, text, _call(r, [text], [_heading(row)])[0]))
                errors.append(None)
            except Exception as e:
                results.append([])
                errors.append(error_text(e))
    now = datetime.now()
    mentions = [m for ms in results for m in ms]
    runs = [
        (row[0], r.info.name, r.info.version, len(ms), err, now)
        for row, ms, err in zip(batch, results, errors, strict=True)
    ]
    return mentions, runs


def _heading(row: tuple) -> tuple:
    return tuple(row[2] or ()) if len(row) > 2 else ()


def _kept(r: Recognizer, row: tuple, text: str, found: list) -> list[tuple]:
    """The mention rows of one unit: spans checked, the recognizer's rules applied, and
    each field of the type the store holds (a plugin's odd value fails its unit, not the
    batch's write)."""
    kept = within_rules(r.info, row[1], check_spans(text, found, r.info.name), *_layout(row))
    name, version = r.info.name, r.info.version
    for m in kept:
        if not all(isinstance(x, str) for x in (m.type, m.text)) or not all(
            x is None or isinstance(x, str) for x in (m.value, m.key)
        ):
            raise TypeError(f"recognizer {name!r} returned a mention with a non-text field: {m}")
    return [
        (row[0], name, version, m.start, m.end, m.type, m.text, m.value, float(m.confidence), m.key)
        for m in kept
    ]


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """Append rows in one statement."""
    if rows:
        select, params = rows_select([f"c{i}" for i in range(len(rows[0]))], rows)
        con.execute(f"INSERT INTO {table} {select}", params)


def _write(con: duckdb.DuckDBPyConnection, results: dict[str, tuple[list, list]]) -> dict[str, int]:
    """Swap the units' mentions and runs of each recognizer named (``name: (mentions,
    runs)``) in one transaction; returns the mentions removed, per name. Nothing is written
    where a newer version of one of them ran meanwhile (``Superseded``)."""
    results = {name: done for name, done in results.items() if done[1]}
    if not results:
        return {}
    names = list(results)
    with transaction(con):
        stored = dict(
            con.execute(
                "SELECT name, version FROM recognizer_info WHERE list_contains(?, name)", [names]
            ).fetchall()
        )
        for name, (_, runs) in results.items():
            if name in stored and stored[name] != runs[0][2]:
                raise Superseded(f"{name} {stored[name]} replaced {runs[0][2]} during this pass")
        which = " OR ".join(["(recognizer = ? AND list_contains(?, unit_hash))"] * len(names))
        params = [x for name, (_, runs) in results.items() for x in (name, [r[0] for r in runs])]
        gone = con.execute(
            f"DELETE FROM mentions WHERE {which} RETURNING recognizer, unit_hash", params
        )
        removed = dict.fromkeys(names, 0)
        changed = set()  # the units whose mentions changed: their documents' layer rows
        for name, unit_hash in gone.fetchall():
            removed[name] += 1
            changed.add(unit_hash)
        con.execute(f"DELETE FROM runs WHERE {which}", params)
        found = [m for mentions, _ in results.values() for m in mentions]
        _insert(con, "mentions", found)
        _insert(con, "runs", [r for _, runs in results.values() for r in runs])
        runs_changed(con)
        mark_units_stale(con, sorted(changed | {m[0] for m in found}))
    return removed


QUICK_BATCH = 0.25  # seconds: a batch this fast may be computed while holding the file
RATE_MIN_UNITS = 200  # a pass shorter than this says little about the rate


def measured_rate(con: duckdb.DuckDBPyConnection, r: Recognizer) -> float | None:
    """Units per second per worker that this recognizer's version reached in its last pass
    here, or None before one has run."""
    row = con.execute(
        "SELECT value FROM kbx_meta WHERE key = ?", [f"rate:{r.info.name}"]
    ).fetchone()
    if not row:
        return None
    version, rate = row[0].rsplit(" ", 1)
    return float(rate) if version == r.info.version else None


def _record_rate(con: duckdb.DuckDBPyConnection, r: Recognizer, rate: float) -> None:
    set_meta(con, f"rate:{r.info.name}", f"{r.info.version} {rate:.1f}")


_IN_WORKERS: dict[str, Recognizer] = {}  # set before the pool forks; looked up by name


def _recognize_by_name(name: str, batch: list[tuple]) -> tuple[list, list]:
    return recognize_batch(_IN_WORKERS[name], batch)


class Forked:
    """The local engine's pass: forked workers that find each recognizer by name."""

    def __init__(self, workers: int):
        self.workers, self._pool = workers, worker_pool(workers)

    def submit(self, r: Recognizer, batch: list[tuple]) -> Future:
        return self._pool.submit(_recognize_by_name, r.info.name, batch)

    def shutdown(self) -> None:
        self._pool.shutdown(cancel_futures=True)


def batch_units(r: Recognizer) -> int:
    """Units per batch (and transaction) of this recognizer."""
    return SLOW_BATCH_UNITS if r.info.slow else BATCH_UNITS


def _results(
    r: Recognizer, chunk: list, pool: Pass | None, lease: WriterLease
) -> Iterator[tuple[list, list]]:
    """Each batch's results in order. The writer lets the file go whenever this process
    would wait (for a worker, or to compute a batch itself) after holding it long enough,
    so readers get in between commits."""
    n = batch_units(r)
    batches = [chunk[i : i + n] for i in range(0, len(chunk), n)]
    if pool is None:
        # a model's first batch takes seconds: let readers in before it; a rule's is quick
        took = float("inf") if r.info.slow else 0.0
        for b in batches:
            if lease.expired or took > QUICK_BATCH:  # a model's batch takes seconds
                lease.release()
            started = time.monotonic()
            result = recognize_batch(r, b)
            took = time.monotonic() - started
            yield result
        return
    futures = [pool.submit(r, b) for b in batches]
    for f in futures:
        if lease.expired or not f.done():
            lease.release()
        yield f.result()


def recognize(
    index: Index,
    registry: Registry,
    names: list[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    workers: int | None = None,
    redo_from: dict[str, datetime] | None = None,
    lease: WriterLease | None = None,
    engine: Engine | None = None,
) -> list[RecognizerReport]:
    """Run each recognizer (or those named) on every unit that lacks its current run, or
    whose run is older than ``redo_from[name]``.

    Worker processes (or a connected ``engine``'s workers) recognize batches; this process
    writes each one as it comes, on ``lease`` when the caller holds one (a short edit then
    opens the file once)."""
    with nullcontext(lease) if lease else WriterLease(index) as lease:
        return _recognize_all(
            index, registry, names, progress, workers, redo_from or {}, lease, engine
        )


def record_info(con: duckdb.DuckDBPyConnection, recognizers: list[Recognizer]) -> None:
    """What search must know of each recognizer before its runs are written: one read of
    what is stored, and one write of what changed (its filter grade feeds the entity
    layer's links)."""
    rows = {
        r.info.name: (
            r.info.name,
            r.info.version,
            list(r.info.types),
            r.info.filter,
            list(r.info.boost_types),
            r.info.names,
        )
        for r in recognizers
    }
    if not rows:
        return
    stored = con.execute(
        "SELECT * FROM recognizer_info WHERE list_contains(?, name)", [list(rows)]
    ).fetchall()
    changed = [row for row in rows.values() if row not in stored]
    if not changed:
        return
    with transaction(con):
        con.execute(
            "DELETE FROM recognizer_info WHERE list_contains(?, name)", [[r[0] for r in changed]]
        )
        con.executemany("INSERT INTO recognizer_info VALUES (?, ?, ?, ?, ?, ?)", changed)
        mark_dirty(con)
        runs_changed(con)


def _commit(
    lease: WriterLease,
    results: dict[str, tuple[list, list]],
    reports: dict[str, RecognizerReport],
    totals: dict[str, int],
    progress: Callable[[str, int, int], None] | None,
) -> bool:
    """Write batches of results (``_write``) and count them in their reports; False where a
    newer version superseded the one recognizer written (several are then written alone)."""
    try:
        removed = _write(lease.con(), results)
    except Superseded as e:
        if len(results) > 1:
            for name, done in results.items():
                _commit(lease, {name: done}, reports, totals, progress)
            return True
        (name,) = results
        reports[name].superseded = str(e)
        return False
    kill_point("recognize.batch")
    for name, (mentions, runs) in results.items():
        report = reports[name]
        report.removed += removed.get(name, 0)
        report.units += len(runs)
        report.mentions += len(mentions)
        report.failures += [(run[0], run[4]) for run in runs if run[4]]
        if progress:
            progress(name, report.units, totals[name])
    return True


def _recognize_all(
    index: Index,
    registry: Registry,
    names: list[str] | None,
    progress: Callable[[str, int, int], None] | None,
    workers: int | None,
    redo_from: dict[str, datetime],
    lease: WriterLease,
    engine: Engine | None,
) -> list[RecognizerReport]:
    chosen = [registry.get(n) for n in names] if names else list(registry)
    since = datetime.now()
    con = lease.con()
    totals = lacking(con, chosen, redo_from)
    record_info(con, chosen)
    reports = {r.info.name: RecognizerReport(r.info.name, r.info.version) for r in chosen}
    todo = [r for r in chosen if totals[r.info.name]]
    if not todo:
        return list(reports.values())
    workers = engine.workers if engine else workers or os.cpu_count() or 1
    parallel = workers > 1 and any(totals[r.info.name] > batch_units(r) for r in todo)
    for r in todo if engine is None else ():  # an engine's workers load their own
        if hasattr(r, "load") and (parallel or r.info.slow):
            # before forking: one copy, shared by every worker; a model loads at once
            # either way, so a missing one is one line, not a failure per unit
            r.load()
    _IN_WORKERS.clear()
    _IN_WORKERS.update({r.info.name: r for r in todo})
    pool = engine.start(todo) if engine else Forked(workers) if parallel else None
    # a small pass (each recognizer one batch, here): all of them in one transaction
    held: dict[str, tuple[list, list]] | None = (
        {} if pool is None and all(totals[r.info.name] <= batch_units(r) for r in todo) else None
    )
    try:
        for r in todo:
            report = reports[r.info.name]
            started = time.monotonic()
            while not report.superseded:
                chunk = missing(
                    lease.con(), r, CHUNK_UNITS, since, redo_from=redo_from.get(r.info.name)
                )
                own = pool if engine or r.info.fork_safe else None
                for mentions, runs in _results(r, chunk, own, lease):
                    if held is not None:
                        held[r.info.name] = (mentions, runs)
                    elif not _commit(
                        lease, {r.info.name: (mentions, runs)}, reports, totals, progress
                    ):
                        break
                if len(chunk) < CHUNK_UNITS:  # that was the last one
                    break
            report.seconds = time.monotonic() - started
        if held:
            _commit(lease, held, reports, totals, progress)
        for r in todo:
            report = reports[r.info.name]
            if report.units >= RATE_MIN_UNITS:
                own = pool if engine or r.info.fork_safe else None
                rate = report.units / report.seconds / (workers if own else 1)
                _record_rate(lease.con(), r, rate)
    finally:
        if pool:
            pool.shutdown()
    return list(reports.values())
