"""Where each recognizer stands on an index (current, stale, missing, failed units) and
what redoing it would cost: read-only, for ``kbx reprocess --dry-run`` and ``kbx status``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

import duckdb

from kbx.annotate.run import BATCH_UNITS, SLOW_BATCH_UNITS, measured_rate, recognize_batch
from kbx.recognizers.base import Recognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

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


def redo_key(name: str) -> str:
    return f"redo:{name}"


def pending_redo(con: duckdb.DuckDBPyConnection, r: Recognizer) -> datetime | None:
    """When an unfinished forced pass of this recognizer's version started, if one did."""
    row = con.execute(
        "SELECT value FROM kbx_meta WHERE key = ?", [redo_key(r.info.name)]
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
    parallel = r.info.fork_safe and row.todo > (SLOW_BATCH_UNITS if r.info.slow else BATCH_UNITS)
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
