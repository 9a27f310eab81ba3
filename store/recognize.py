"""Running recognizers over stored units: whatever (unit, recognizer, version) lacks a run.

Each batch is one transaction that replaces a recognizer's mentions and runs for
its units, so search sees a unit's old mentions or its new ones, never a mix; an
interrupted pass resumes where it stopped, since finished batches have their runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
from kbx.recognizers.base import Recognizer, check_spans
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

BATCH_UNITS = 500


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
) -> list:
    """Units with no successful run of this recognizer at its current version (and, in a
    pass that started at ``since``, none that failed during it)."""
    sql = """SELECT u.unit_hash, u.text FROM units u
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
    """Append rows column-wise in one statement (DuckDB's executemany goes row by row)."""
    if rows:
        cols = [list(c) for c in zip(*rows, strict=True)]
        select = ", ".join(f"unnest(${i + 1})" for i in range(len(cols)))
        con.execute(f"INSERT INTO {table} SELECT {select}", cols)


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


def recognize(
    index: Index,
    registry: Registry,
    names: list[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[RecognizerReport]:
    """Run each recognizer (or those named) on every unit that lacks its current run."""
    chosen = [registry.get(n) for n in names] if names else list(registry)
    reports = []
    for r in chosen:
        report = RecognizerReport(r.info.name, r.info.version)
        started, since = time.monotonic(), datetime.now()
        with index.writer() as con:
            total = len(missing(con, r, since=since))
        while True:
            with index.writer() as con:
                batch = missing(con, r, BATCH_UNITS, since)
                if not batch:
                    break
                mentions, runs = _recognize(r, batch)
                _write(con, r.info.name, mentions, runs)
            report.units += len(runs)
            report.mentions += len(mentions)
            report.failures += [(run[0], run[4]) for run in runs if run[4]]
            if progress:
                progress(r.info.name, report.units, total)
        report.seconds = time.monotonic() - started
        reports.append(report)
    return reports
