"""The vectors stage: vectors for every unit that lacks them for the current (model, version).

A unit has one vector per window of the model (one when it fits, more when it is longer:
model.py), each a row of ``vectors`` under the unit's hash; the ranking scores a unit by
its best row. The recognizers' discipline (annotate/run.py): the cache key is the unit's
hash with the model's name and version, so a unit moved to another file or placed in two
keeps its vectors, and a new model version redoes every unit.

A pass runs in two stages, because most of its time is windows past the first (Node.js:
6,610 first windows of 17,500) and a unit's first window is most of what hybrid search
gains (docs/BENCHMARKS.md, "Time to hybrid"): first every unit's first window, then the
others. Until its later windows come, a unit holds a row for each of them with an empty
vector (``PENDING``), written with its first, so the table itself says what is left:
``kbx status`` counts those rows, the second stage reads them, and the ranking passes
them over (a unit ranks by its best window of those embedded). Each batch of either stage
is one transaction, so a pass killed at any point loses at most the batch in flight and
the next resumes from what the table says is missing or pending. The model computes while
the file is let go (``WriterLease.release``), so readers get in between batches. The
matrix the ranking maps (matrix.py) is exported once every unit has its first window and
again as the later windows come (``REFRESH``) and at the end.

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

BATCH_UNITS = 16  # a batch of either stage: seconds of model time, 16 to 48 windows
PENDING: list[float] = []  # the vector of a window still to be embedded (its row says so)
REFRESH = 30.0  # seconds between matrix exports while later windows come, at least 10x one
CHUNK_UNITS = 20_000  # read at a time, so memory stays bounded on a large corpus
AHEAD = 2  # batches per cluster worker in flight: each busy while the last is written


@dataclass
class VectorReport:
    """What one pass did, or why it did nothing (``off``)."""

    model: str | None = None
    version: str | None = None
    units: int = 0  # given their first window in this pass
    windows: int = 0  # vectors computed: one per window, of either stage
    first_windows: int = 0  # of which first windows (the first stage)
    removed: int = 0  # vectors of other versions replaced, and of units no longer stored
    first_seconds: float = 0.0  # until every unit had its first window: hybrid by every unit
    seconds: float = 0.0
    pending: int = 0  # later windows still to embed when the pass ended (0 unless cut short)
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


def pending(
    con: duckdb.DuckDBPyConnection, enc: Encoder, limit: int | None = None, added_after: int = 0
) -> list[tuple]:
    """``(unit_hash, heading_path, text)`` of the units whose later windows are still to be
    embedded (their first is), in unit order; with ``added_after``, only past that id."""
    sql = """SELECT u.unit_hash, u.heading_path, u.text FROM units u
             SEMI JOIN (SELECT unit_hash FROM vectors WHERE model = ? AND version = ?
                        AND len(vector) = 0) v USING (unit_hash)
             WHERE u.unit_id > ? ORDER BY u.unit_id"""
    if limit:
        sql += f" LIMIT {int(limit)}"
    return con.execute(sql, [enc.name, enc.version, added_after]).fetchall()


@dataclass
class Standing:
    """Where the vectors of an index stand for a model (``kbx status``, ``kbx reprocess
    --dry-run``): units with a current vector, with one of another version only, none;
    and of the current ones, those whose later windows are still to come."""

    model: str
    version: str
    units: int
    current: int
    stale: int
    missing: int
    pending: int = 0

    @property
    def todo(self) -> int:
        return self.stale + self.missing


def standing(con: duckdb.DuckDBPyConnection, enc: Encoder) -> Standing:
    units, current, stale, later = con.execute(
        """SELECT count(*), count(*) FILTER (cur), count(*) FILTER (NOT cur),
                  count(*) FILTER (later)
           FROM units u LEFT JOIN (SELECT unit_hash, bool_or(model = ? AND version = ?) cur,
                                          bool_or(model = ? AND version = ? AND len(vector) = 0)
                                          later
                                   FROM vectors GROUP BY unit_hash) v USING (unit_hash)""",
        [enc.name, enc.version, enc.name, enc.version],
    ).fetchone()
    return Standing(enc.name, enc.version, units, current, stale, units - current - stale, later)


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


FIRST, LATER = "first", "later"  # the stages of a pass: every unit's first window, the rest


def embed_batch(enc: Encoder, batch: list[tuple], stage: str = FIRST) -> list[tuple]:
    """Rows ``(unit_hash, model, version, vector, embedded_at)`` for ``(unit_hash,
    heading_path, text)`` rows, a unit's in reading order: in the ``FIRST`` stage its first
    window's and a ``PENDING`` row for each later one; in the ``LATER`` stage its later
    windows'."""
    texts = [passage_text(h, t) for _, h, t in batch]
    w = enc.passages(texts, 0, 1) if stage == FIRST else enc.passages(texts, 1)
    now = datetime.now()
    rows = [
        (batch[i][0], enc.name, enc.version, v.tolist(), now)
        for i, v in zip(w.owner.tolist(), w.vectors, strict=True)
    ]
    if stage == FIRST:
        assert w.total is not None
        rows += [
            (batch[i][0], enc.name, enc.version, PENDING, now)
            for i, n in enumerate(w.total.tolist())
            for _ in range(n - 1)
        ]
    return rows


def _insert(con: duckdb.DuckDBPyConnection, rows: list[tuple]) -> None:
    cols = ["unit_hash", "model", "version", "vector", "embedded_at"]
    select, params = rows_select(cols, rows, lists=frozenset({"vector"}))
    con.execute(f"INSERT INTO vectors {select}", params)


def write(con: duckdb.DuckDBPyConnection, rows: list[tuple]) -> int:
    """Replace the units' vectors (any model or version) with ``rows`` in one transaction;
    returns how many rows were replaced."""
    if not rows:
        return 0
    hashes = sorted({r[0] for r in rows})
    with transaction(con):
        (removed,) = con.execute(
            "DELETE FROM vectors WHERE list_contains(?, unit_hash)", [hashes]
        ).fetchone()
        _insert(con, rows)
        matrix.bump(con)
    return removed


def fill(con: duckdb.DuckDBPyConnection, enc: Encoder, rows: list[tuple]) -> None:
    """Put the later windows' ``rows`` in place of their units' ``PENDING`` rows, in one
    transaction. Only adds windows to units that have their first: the matrix exported
    before stays current (``matrix.bump_later``); a unit in it ranks by the windows it
    holds until the next export."""
    if not rows:
        return
    hashes = sorted({r[0] for r in rows})
    with transaction(con):
        con.execute(
            """DELETE FROM vectors WHERE list_contains(?, unit_hash) AND model = ?
               AND version = ? AND len(vector) = 0""",
            [hashes, enc.name, enc.version],
        )
        _insert(con, rows)
        matrix.bump_later(con)


class Workers(Protocol):
    """Where batches can run besides this process: a cluster engine (annotate/engine.py)."""

    @property
    def workers(self) -> int: ...

    def submit(self, fn: Callable[..., object], *args: object): ...


def embed_on_worker(
    folder: str | None, version: str, batch: list[tuple], stage: str = FIRST
) -> list[tuple]:
    """``embed_batch`` on a cluster's worker, with the model of ``folder`` (None: the
    packaged one) loaded once per worker process; a worker whose model is not the one this
    index is embedded with refuses, so vectors of two models never mix."""
    enc = loaded(Path(folder) if folder else None)
    if enc.version != version:
        raise ModelMissing(
            f"a worker's model {enc.name} is version {enc.version}, not {version}: install "
            "the same kbx and model on every worker"
        )
    return embed_batch(enc, batch, stage)


def _embedded(
    enc: Encoder,
    batches: list[list[tuple]],
    lease: WriterLease,
    workers: Workers | None,
    folder: Path | None,
    stage: str,
) -> Iterator[tuple[list[tuple], list[tuple]]]:
    """Each batch with its vector rows, in order: computed here, or on the cluster with
    a few batches per worker in flight (their results wait in the workers' memory). The
    writer lets the file go whenever this process computes or waits, so readers get in."""
    if workers is None:
        for batch in batches:
            lease.release()  # seconds of model time: let readers in meanwhile
            yield batch, embed_batch(enc, batch, stage)
        return
    where = str(folder) if folder else None
    sent: deque = deque()
    for batch in [*batches, None]:
        if batch is not None:
            task = workers.submit(embed_on_worker, where, enc.version, batch, stage)
            sent.append((batch, task))
        while sent and (batch is None or len(sent) > AHEAD * workers.workers):
            done, task = sent.popleft()
            if lease.expired or not task.done():
                lease.release()
            yield done, task.result()


class _Exports:
    """The matrix export of a pass: after the first stage, then while later windows come,
    at most one export's time in ten (a 200k-unit export takes seconds), and at the end."""

    def __init__(self, index: Index, enc: Encoder):
        self.index, self.enc = index, enc
        self.last, self.took = time.monotonic(), 0.0

    def now(self, con: duckdb.DuckDBPyConnection) -> None:
        t = time.monotonic()
        matrix.export(con, self.index.db, self.enc.name, self.enc.version)
        self.last = time.monotonic()
        self.took = self.last - t

    def maybe(self, con: duckdb.DuckDBPyConnection) -> None:
        if time.monotonic() - self.last >= max(REFRESH, 10 * self.took):
            self.now(con)

    def unless_current(self, con: duckdb.DuckDBPyConnection) -> None:
        if not matrix.holds_all(con, self.index.db, self.enc.name, self.enc.version):
            self.now(con)


def embed(
    index: Index,
    enc: Encoder | None = None,
    progress: Callable[[int, int], None] | None = None,
    redo_from: datetime | None = None,
    lease: WriterLease | None = None,
    workers: Workers | None = None,
    added_after: int | None = None,
) -> VectorReport:
    """Give every unit of ``index`` its vectors of the index's model (or ``enc``), batch by
    batch: every unit's first window, then the later windows; ``progress(done, total)``
    in windows after each batch (the total grows by the later windows once the first
    stage has found them). Holds the index's write lock (re-entrant: ``kbx index`` may
    call this under its own, with ``added_after``: only the units whose id is past it)
    and writes on ``lease`` when given. With ``workers`` (a cluster), the batches are
    embedded there, every batch of a chunk in flight at once, and committed here in order,
    as the recognizer pass does."""
    if enc is None:
        enc, why = encoder_or_why(index.root)
        if enc is None:
            return VectorReport(off=why)
    report = VectorReport(enc.name, enc.version)
    started = time.monotonic()
    exports = _Exports(index, enc)
    with index.writing("embed"), nullcontext(lease) if lease else WriterLease(index) as lease:
        report.removed += sweep(lease.con())
        after = added_after or 0
        total = len(missing(lease.con(), enc, None, redo_from, True, after))
        later = _later_windows(lease.con(), enc, after)
        folder = setting(index.root).folder
        while total:
            chunk = missing(lease.con(), enc, CHUNK_UNITS, redo_from, added_after=after)
            batches = [chunk[s : s + BATCH_UNITS] for s in range(0, len(chunk), BATCH_UNITS)]
            for batch, rows in _embedded(enc, batches, lease, workers, folder, FIRST):
                report.removed += write(lease.con(), rows)
                kill_point("vectors.batch")
                report.units += len(batch)
                report.first_windows += len(batch)
                later += sum(1 for r in rows if not r[3])  # PENDING rows
                if progress:
                    progress(report.first_windows, total + later)
            if len(chunk) < CHUNK_UNITS:
                break
        report.first_seconds = time.monotonic() - started
        exports.unless_current(lease.con())  # every unit searchable by meaning from here on
        while later:
            chunk = pending(lease.con(), enc, CHUNK_UNITS, after)
            batches = [chunk[s : s + BATCH_UNITS] for s in range(0, len(chunk), BATCH_UNITS)]
            for _, rows in _embedded(enc, batches, lease, workers, folder, LATER):
                fill(lease.con(), enc, rows)
                kill_point("vectors.later")
                report.windows += len(rows)
                if progress:
                    progress(report.first_windows + report.windows, total + later)
                exports.maybe(lease.con())
            if len(chunk) < CHUNK_UNITS:
                break
        report.windows += report.first_windows
        report.pending = _later_windows(lease.con(), enc, 0)
        exports.unless_current(lease.con())
    report.seconds = time.monotonic() - started
    return report


def _later_windows(con: duckdb.DuckDBPyConnection, enc: Encoder, added_after: int) -> int:
    """Later windows still to embed (``PENDING`` rows), of the units past ``added_after``."""
    return con.execute(
        """SELECT count(*) FROM vectors v JOIN units u USING (unit_hash)
           WHERE v.model = ? AND v.version = ? AND len(v.vector) = 0 AND u.unit_id > ?""",
        [enc.name, enc.version, added_after],
    ).fetchone()[0]
