"""Running recognizers over stored units: whatever (unit, recognizer, version) lacks a run.

Each batch is one transaction that replaces a recognizer's mentions and runs for
its units, so search sees a unit's old mentions or its new ones, never a mix; an
interrupted pass resumes where it stopped, since finished batches have their runs.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat

import duckdb
from kbx.recognizers.base import Recognizer, check_spans
from kbx.recognizers.registry import Registry
from kbx.store.db import Index, rows_select

BATCH_UNITS = 500
CHUNK_UNITS = 20_000  # read at a time, so memory stays bounded on a large corpus


@dataclass
class RecognizerReport:
    """What one recognizer did in a pass."""

    name: str
    version: str
    units: int = 0
    mentions: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


def missing(
    con: duckdb.DuckDBPyConnection,
    r: Recognizer,
    limit: int | None = None,
    since: datetime | None = None,
    keys_only: bool = False,
) -> list:
    """Units with no successful run of this recognizer at its current version (and, in a
    pass that started at ``since``, none that failed during it)."""
    sql = f"""SELECT u.unit_hash{"" if keys_only else ", u.text"} FROM units u
             ANTI JOIN (SELECT unit_hash FROM runs
                        WHERE recognizer = ? AND version = ?
                        AND (error IS NULL OR ran_at >= ?)) x
             USING (unit_hash)
             ORDER BY u.unit_id"""
    params = [r.info.name, r.info.version, since or datetime.max]
    if limit:
        sql += f" LIMIT {int(limit)}"
    return con.execute(sql, params).fetchall()


def _recognize(r: Recognizer, batch: list[tuple[str, str]]) -> tuple[list, list]:
    """Mentions and run rows for a batch; a unit the recognizer fails on is recorded."""
    texts = [t for _, t in batch]
    try:
        found = r.recognize(texts)
        results = [check_spans(t, ms, r.info.name) for t, ms in zip(texts, found, strict=True)]
        errors = [None] * len(batch)
    except Exception:  # find the units it fails on, one at a time
        results, errors = [], []
        for t in texts:
            try:
                results.append(check_spans(t, r.recognize([t])[0], r.info.name))
                errors.append(None)
            except Exception as e:
                results.append([])
                errors.append(f"{type(e).__name__}: {e}")
    now = datetime.now()
    name, version = r.info.name, r.info.version
    mentions = [
        (h, name, version, m.start, m.end, m.type, m.text, m.value, float(m.confidence))
        for (h, _), ms in zip(batch, results, strict=True)
        for m in ms
    ]
    runs = [
        (h, name, version, len(ms), err, now)
        for (h, _), ms, err in zip(batch, results, errors, strict=True)
    ]
    return mentions, runs


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """Append rows in one statement."""
    if rows:
        select, params = rows_select([f"c{i}" for i in range(len(rows[0]))], rows)
        con.execute(f"INSERT INTO {table} {select}", params)


def _write(con: duckdb.DuckDBPyConnection, name: str, mentions: list, runs: list) -> None:
    hashes = [r[0] for r in runs]
    con.execute("BEGIN")
    try:
        con.execute(
            "DELETE FROM mentions WHERE recognizer = ? AND list_contains(?, unit_hash)",
            [name, hashes],
        )
        con.execute(
            "DELETE FROM runs WHERE recognizer = ? AND list_contains(?, unit_hash)", [name, hashes]
        )
        _insert(con, "mentions", mentions)
        _insert(con, "runs", runs)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


_IN_WORKERS: dict[str, Recognizer] = {}  # set before the pool forks; looked up by name


def _recognize_by_name(name: str, batch: list[tuple[str, str]]) -> tuple[list, list]:
    return _recognize(_IN_WORKERS[name], batch)


def recognize(
    index: Index,
    registry: Registry,
    names: list[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    workers: int | None = None,
) -> list[RecognizerReport]:
    """Run each recognizer (or those named) on every unit that lacks its current run.

    Worker processes recognize batches; this process writes each one as it comes."""
    chosen = [registry.get(n) for n in names] if names else list(registry)
    since = datetime.now()
    with index.writer() as con:
        totals = {r.info.name: len(missing(con, r, since=since, keys_only=True)) for r in chosen}
    reports = {r.info.name: RecognizerReport(r.info.name, r.info.version) for r in chosen}
    todo = [r for r in chosen if totals[r.info.name]]
    if not todo:
        return list(reports.values())
    _IN_WORKERS.clear()
    _IN_WORKERS.update({r.info.name: r for r in todo})
    workers = workers or os.cpu_count() or 1
    parallel = workers > 1 and sum(totals.values()) > BATCH_UNITS
    pool = (
        ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        if (parallel)
        else None
    )
    try:
        for r in todo:
            name, report = r.info.name, reports[r.info.name]
            started = time.monotonic()
            while True:
                with index.writer() as con:
                    chunk = missing(con, r, CHUNK_UNITS, since)
                if not chunk:
                    break
                batches = [chunk[i : i + BATCH_UNITS] for i in range(0, len(chunk), BATCH_UNITS)]
                results = (
                    pool.map(_recognize_by_name, repeat(name), batches)
                    if pool
                    else (_recognize(r, b) for b in batches)
                )
                for mentions, runs in results:
                    with index.writer() as con:
                        _write(con, name, mentions, runs)
                    report.units += len(runs)
                    report.mentions += len(mentions)
                    report.failures += [(run[0], run[4]) for run in runs if run[4]]
                    if progress:
                        progress(name, report.units, totals[name])
            report.seconds = time.monotonic() - started
    finally:
        if pool:
            pool.shutdown()
    return list(reports.values())
