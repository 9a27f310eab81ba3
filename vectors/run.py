"""The vectors stage: vectors for every unit that lacks them for the current (model, version).

A unit has one vector per window of the model (one when it fits, more when it is longer:
model.py), each a row of ``vectors`` under the unit's hash; the ranking scores a unit by
its best row. The recognizers' discipline (annotate/run.py): the cache key is the unit's
hash with the model's name and version, so a unit moved to another file or placed in two
keeps its vectors, and a new model version redoes every unit. Each batch is one
transaction that replaces the batch's units' rows, all their windows together, so a pass
killed at any point loses at most the batch in flight, a unit never has part of its
windows, and the next pass resumes from what is missing. The model computes while the
file is let go (``WriterLease.release``), so readers get in between batches. A pass ends
by exporting the matrix the ranking maps (matrix.py) if the table changed.

Call ``embed(index)`` after the recognizer pass of ``kbx index`` and from ``kbx
reprocess``; with the ``dense`` extra absent it does nothing and says why in its report.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import duckdb

from kbx.errors import ModelMissing
from kbx.store.db import Index, WriterLease, kill_point, rows_select
from kbx.store.transaction import transaction
from kbx.vectors import matrix
from kbx.vectors.model import Encoder, passage_text
from kbx.vectors.setup import encoder_or_why, loaded, setting

BATCH_UNITS = 16  # about 64 windows of Node.js units (4 a unit): seconds of model time
CHUNK_UNITS = 20_000  # read at a time, so memory stays bounded on a large corpus
AHEAD = 2  # batches per cluster worker in flight: each busy while the last is written


@dataclass
class VectorReport:
    """What one pass did, or why it did nothing (``off``)."""

    model: str | None = None
    version: str | None = None
    units: int = 0  # embedded in this pass
    windows: int = 0  # their vectors: one per window
    removed: int = 0  # vectors of other versions replaced, and of units no longer stored
    seconds: float = 0.0
    off: str | None = None


def missing(
    con: duckdb.DuckDBPyConnection,
    enc: Encoder,
    limit: int | None = None,
    redo_from: datetime | None = None,
    keys_only: bool = False,
    added_after: int = 0,
) -> list[tuple]:
    """Units without a vector of this model and version (with ``redo_from``, also those
    whose vector is older: a forced pass, resumable like any other), in unit order; with
    ``added_after``, only those whose id is past it."""
    columns = "u.unit_hash" if keys_only else "u.unit_hash, u.heading_path, u.text"
    sql = f"""SELECT {columns} FROM units u
              ANTI JOIN (SELECT unit_hash FROM vectors WHERE model = ? AND version = ?
                         AND embedded_at >= ?) v USING (unit_hash)
              WHERE u.unit_id > ? ORDER BY u.unit_id"""
    if limit:
        sql += f" LIMIT {int(limit)}"
    params = [enc.name, enc.version, redo_from or datetime.min, added_after]
    return con.execute(sql, params).fetchall()


@dataclass
class Standing:
    """Where the vectors of an index stand for a model (``kbx status``, ``kbx reprocess
    --dry-run``): units with a current vector, with one of another version only, none."""

    model: str
    version: str
    units: int
    current: int
    stale: int
    missing: int

    @property
    def todo(self) -> int:
        return self.stale + self.missing


def standing(con: duckdb.DuckDBPyConnection, enc: Encoder) -> Standing:
    units, current, stale = con.execute(
        """SELECT count(*), count(*) FILTER (cur), count(*) FILTER (NOT cur)
           FROM units u LEFT JOIN (SELECT unit_hash, bool_or(model = ? AND version = ?) cur
                                   FROM vectors GROUP BY unit_hash) v USING (unit_hash)""",
        [enc.name, enc.version],
    ).fetchone()
    return Standing(enc.name, enc.version, units, current, stale, units - current - stale)


def has_vectors(con: duckdb.DuckDBPyConnection, enc: Encoder) -> bool:
    """Whether any unit has a vector of this model and version."""
    sql = "SELECT 1 FROM vectors WHERE model = ? AND version = ? LIMIT 1"
    return con.execute(sql, [enc.name, enc.version]).fetchone() is not None


def coverage(con: duckdb.DuckDBPyConnection, enc: Encoder) -> tuple[int, int]:
    """(units with a current vector, units): until they are equal, a dense ranking sees
    only part of the corpus."""
    return con.execute(
        """SELECT count(v.unit_hash), count(*) FROM units u
           LEFT JOIN (SELECT DISTINCT unit_hash FROM vectors WHERE model = ? AND version = ?) v
           USING (unit_hash)""",
        [enc.name, enc.version],
    ).fetchone()


def sweep(con: duckdb.DuckDBPyConnection) -> int:
    """Delete the vectors of units no longer stored. Run at the start of a pass, after the
    index run that may have removed and re-added a moved unit, so a move keeps its vector."""
    with transaction(con):
        (n,) = con.execute(
            "DELETE FROM vectors WHERE unit_hash NOT IN (SELECT unit_hash FROM units)"
        ).fetchone()
        if n:
            matrix.bump(con)
    return n


def embed_batch(enc: Encoder, batch: list[tuple]) -> list[tuple]:
    """Rows ``(unit_hash, model, version, vector, embedded_at)`` for ``(unit_hash,
    heading_path, text)`` rows: one per window, a unit's in reading order."""
    w = enc.passages([passage_text(h, t) for _, h, t in batch])
    now = datetime.now()
    return [
        (batch[i][0], enc.name, enc.version, v.tolist(), now)
        for i, v in zip(w.owner.tolist(), w.vectors, strict=True)
    ]


def write(con: duckdb.DuckDBPyConnection, rows: list[tuple]) -> int:
    """Replace the units' vectors (any model or version) with ``rows`` in one transaction;
    returns how many rows were replaced."""
    if not rows:
        return 0
    hashes = sorted({r[0] for r in rows})
    cols = ["unit_hash", "model", "version", "vector", "embedded_at"]
    select, params = rows_select(cols, rows, lists=frozenset({"vector"}))
    with transaction(con):
        (removed,) = con.execute(
            "DELETE FROM vectors WHERE list_contains(?, unit_hash)", [hashes]
        ).fetchone()
        con.execute(f"INSERT INTO vectors {select}", params)
        matrix.bump(con)
    return removed


class Workers(Protocol):
    """Where batches can run besides this process: a cluster engine (annotate/engine.py)."""

    @property
    def workers(self) -> int: ...

    def submit(self, fn: Callable[..., object], *args: object): ...


def embed_on_worker(folder: str | None, version: str, batch: list[tuple]) -> list[tuple]:
    """``embed_batch`` on a cluster's worker, with the model of ``folder`` (None: the
    packaged one) loaded once per worker process; a worker whose model is not the one this
    index is embedded with refuses, so vectors of two models never mix."""
    enc = loaded(Path(folder) if folder else None)
    if enc.version != version:
        raise ModelMissing(
            f"a worker's model {enc.name} is version {enc.version}, not {version}: install "
            "the same kbx and model on every worker"
        )
    return embed_batch(enc, batch)


def _embedded(
    enc: Encoder,
    batches: list[list[tuple]],
    lease: WriterLease,
    workers: Workers | None,
    folder: Path | None,
) -> Iterator[tuple[list[tuple], list[tuple]]]:
    """Each batch with its vector rows, in order: computed here, or on the cluster with
    a few batches per worker in flight (their results wait in the workers' memory). The
    writer lets the file go whenever this process computes or waits, so readers get in."""
    if workers is None:
        for batch in batches:
            lease.release()  # seconds of model time: let readers in meanwhile
            yield batch, embed_batch(enc, batch)
        return
    where = str(folder) if folder else None
    sent: deque = deque()
    for batch in [*batches, None]:
        if batch is not None:
            sent.append((batch, workers.submit(embed_on_worker, where, enc.version, batch)))
        while sent and (batch is None or len(sent) > AHEAD * workers.workers):
            done, task = sent.popleft()
            if lease.expired or not task.done():
                lease.release()
            yield done, task.result()


def embed(
    index: Index,
    enc: Encoder | None = None,
    progress: Callable[[int, int], None] | None = None,
    redo_from: datetime | None = None,
    lease: WriterLease | None = None,
    workers: Workers | None = None,
    added_after: int | None = None,
) -> VectorReport:
    """Give every unit of ``index`` a vector of the index's model (or ``enc``), batch by
    batch; ``progress(done, total)`` after each. Holds the index's write lock (re-entrant:
    ``kbx index`` may call this under its own, with ``added_after``: only the units whose
    id is past it) and writes on ``lease`` when given. With
    ``workers`` (a cluster), the batches are embedded there, every batch of a chunk in
    flight at once, and committed here in order, as the recognizer pass does."""
    if enc is None:
        enc, why = encoder_or_why(index.root)
        if enc is None:
            return VectorReport(off=why)
    report = VectorReport(enc.name, enc.version)
    started = time.monotonic()
    with index.writing("embed"), nullcontext(lease) if lease else WriterLease(index) as lease:
        report.removed += sweep(lease.con())
        after = added_after or 0
        total = len(missing(lease.con(), enc, None, redo_from, True, after))
        folder = setting(index.root).folder
        while total:
            chunk = missing(lease.con(), enc, CHUNK_UNITS, redo_from, added_after=after)
            batches = [chunk[s : s + BATCH_UNITS] for s in range(0, len(chunk), BATCH_UNITS)]
            for batch, rows in _embedded(enc, batches, lease, workers, folder):
                report.removed += write(lease.con(), rows)
                kill_point("vectors.batch")
                report.units += len(batch)
                report.windows += len(rows)
                if progress:
                    progress(report.units, total)
            if len(chunk) < CHUNK_UNITS:
                break
        con = lease.con()
        if matrix.load(con, index.db, enc.name, enc.version) is None:
            matrix.export(con, index.db, enc.name, enc.version)
    report.seconds = time.monotonic() - started
    return report
