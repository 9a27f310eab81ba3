"""``kbx reprocess``: plan, then redo only the recognizer runs that are stale or missing.

A run is keyed by (unit hash, recognizer, version), so after an upgrade the stale
units are exactly those whose run carries another version. The pass itself is
:func:`kbx.annotate.run.recognize`: workers compute, this process commits one
batch per transaction, and finished batches are never redone. A forced pass
(``--all``) records when it started, so an interrupted one resumes too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from kbx.annotate.context import refresh as refresh_context
from kbx.annotate.run import (
    BATCH_UNITS,
    RecognizerReport,
    measured_rate,
    recognize,
    recognize_batch,
)
from kbx.recognizers.base import Recognizer
from kbx.recognizers.registry import Registry
from kbx.store.consistency import repair, settle
from kbx.store.db import Index, kill_point

SAMPLE_UNITS = 100  # timed in a dry run when no pass has measured the rate yet


@dataclass
class PlanRow:
    """Where one recognizer stands: how many units are current, stale, missing or failed."""

    name: str
    version: str
    units: int
    current: int
    stale: int  # their run carries another version
    missing: int  # never run, e.g. a recognizer installed after indexing
    failed: int  # the current version raised on them; retried
    forced: int = 0  # current, but redone by a forced pass
    estimate_s: float | None = None

    @property
    def todo(self) -> int:
        return self.stale + self.missing + self.failed + self.forced


@dataclass
class ReprocessReport:
    """The plan and what the pass did, per recognizer."""

    plan: list[PlanRow]
    done: list[RecognizerReport] = field(default_factory=list)
    dry_run: bool = False
    seconds: float = 0.0


def _redo_key(name: str) -> str:
    return f"redo:{name}"


def pending_redo(con: duckdb.DuckDBPyConnection, r: Recognizer) -> datetime | None:
    """When an unfinished forced pass of this recognizer's version started, if one did."""
    row = con.execute(
        "SELECT value FROM kbx_meta WHERE key = ?", [_redo_key(r.info.name)]
    ).fetchone()
    if not row:
        return None
    version, started = row[0].split(" ", 1)
    return datetime.fromisoformat(started) if version == r.info.version else None


def standing(
    con: duckdb.DuckDBPyConnection, r: Recognizer, redo_from: datetime | None = None
) -> PlanRow:
    """Count the units by the state of this recognizer's run on them."""
    units, current, failed, stale, never, forced = con.execute(
        """SELECT count(*),
                  count(*) FILTER (cur.error IS NULL AND cur.ran_at >= ?),
                  count(*) FILTER (cur.error IS NOT NULL),
                  count(*) FILTER (cur.unit_hash IS NULL AND old.unit_hash IS NOT NULL),
                  count(*) FILTER (cur.unit_hash IS NULL AND old.unit_hash IS NULL),
                  count(*) FILTER (cur.error IS NULL AND cur.ran_at < ?)
           FROM units u
           LEFT JOIN (SELECT unit_hash, error, ran_at FROM runs
                      WHERE recognizer = ? AND version = ?) cur USING (unit_hash)
           LEFT JOIN (SELECT DISTINCT unit_hash FROM runs
                      WHERE recognizer = ? AND version <> ?) old USING (unit_hash)""",
        [redo_from or datetime.min, redo_from or datetime.min] + [r.info.name, r.info.version] * 2,
    ).fetchone()
    return PlanRow(r.info.name, r.info.version, units, current, stale, never, failed, forced)


def _estimate(
    index: Index, r: Recognizer, row: PlanRow, workers: int, sample: bool
) -> float | None:
    """Seconds the row's work should take, from the rate measured here before, else (when
    ``sample``) from a small timed sample whose results are not kept."""
    if not row.todo:
        return 0.0
    with index.reader() as con:
        rate = measured_rate(con, r)
        sample = (
            []
            if rate or not sample
            else con.execute(
                "SELECT unit_hash, text, heading_path FROM units ORDER BY unit_id LIMIT ?",
                [SAMPLE_UNITS],
            ).fetchall()
        )
    if not rate and sample:
        started = time.monotonic()
        recognize_batch(r, sample)
        rate = len(sample) / max(time.monotonic() - started, 1e-6)
    if not rate:
        return None
    parallel = r.info.fork_safe and row.todo > BATCH_UNITS
    return row.todo / (rate * (workers if parallel else 1))


def plan(
    index: Index,
    registry: Registry,
    names: list[str] | None = None,
    redo_all: bool = False,
    workers: int = 1,
    sample: bool = True,
) -> list[PlanRow]:
    """What a pass would do, per recognizer, with a time estimate (None when no pass has
    measured the rate and ``sample`` is off)."""
    chosen = [registry.get(n) for n in names] if names else list(registry)
    rows = []
    for r in chosen:
        with index.reader() as con:
            redo_from = datetime.now() if redo_all else None
            row = standing(con, r, pending_redo(con, r) or redo_from)
        row.estimate_s = _estimate(index, r, row, workers, sample)
        rows.append(row)
    return rows


def reprocess(
    index: Index,
    registry: Registry,
    names: list[str] | None = None,
    redo_all: bool = False,
    workers: int = 1,
    dry_run: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> ReprocessReport:
    """Redo the stale, missing and failed runs of the chosen recognizers (with
    ``redo_all``, every run); other recognizers' runs and mentions are not touched."""
    started = time.monotonic()
    if dry_run:
        rows = plan(index, registry, names, redo_all, workers, sample=True)
        return ReprocessReport(rows, dry_run=True)
    with index.writing("reprocess"):
        with index.writer() as con:
            repair(con, index)
        report = _reprocess(index, registry, names, redo_all, workers, progress)
    report.seconds = time.monotonic() - started
    return report


def _reprocess(
    index: Index,
    registry: Registry,
    names: list[str] | None,
    redo_all: bool,
    workers: int,
    progress: Callable[[str, int, int], None] | None,
) -> ReprocessReport:
    report = ReprocessReport(plan(index, registry, names, redo_all, workers, sample=False))
    chosen = [registry.get(row.name) for row in report.plan]
    redo_from = {}
    with index.writer() as con:
        for r in chosen:
            pending = pending_redo(con, r)
            if redo_all and not pending:
                pending = datetime.now()
                con.execute(
                    "INSERT OR REPLACE INTO kbx_meta VALUES (?, ?)",
                    [_redo_key(r.info.name), f"{r.info.version} {pending.isoformat()}"],
                )
            if pending:
                redo_from[r.info.name] = pending
    report.done = recognize(
        index,
        registry,
        [r.info.name for r in chosen],
        progress=progress,
        workers=workers,
        redo_from=redo_from,
    )
    kill_point("reprocess.recognized")
    with index.writer() as con:
        for name in redo_from:
            con.execute("DELETE FROM kbx_meta WHERE key = ?", [_redo_key(name)])
        refresh_context(con, registry)
        kill_point("reprocess.context")
        settle(con)
    return report
