"""``kbx reprocess``: plan, then redo only the recognizer runs that are stale or missing.

A run is keyed by (unit hash, recognizer, version), so after an upgrade the stale
units are exactly those whose run carries another version. The pass itself is
:func:`kbx.annotate.run.recognize`: workers compute, this process commits one
batch per transaction, and finished batches are never redone. A forced pass
(``--all``) records when it started, so an interrupted one resumes too. ``purge`` drops
what recognizers no longer installed found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime

from kbx.annotate.context import refresh as refresh_context
from kbx.annotate.engine import Engine, connect
from kbx.annotate.failures import listed
from kbx.annotate.plan import PlanRow, pending_redo, plan, redo_key
from kbx.annotate.run import (
    RecognizerReport,
    recognize,
)
from kbx.annotate.setup import recognizer as gazetteer
from kbx.config import load_config
from kbx.entities.build import repair, settle
from kbx.errors import BadArgument
from kbx.recognizers.registry import Registry
from kbx.store.db import (
    WRITER_WAIT,
    Index,
    WriterLease,
    kill_point,
    mark_dirty,
    runs_changed,
    set_meta,
)
from kbx.store.transaction import transaction


@dataclass
class ReprocessReport:
    """The plan and what the pass did, per recognizer."""

    plan: list[PlanRow]
    done: list[RecognizerReport] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)  # units and documents, as in status
    dry_run: bool = False
    seconds: float = 0.0


def reprocess(
    index: Index,
    registry: Registry,
    names: list[str] | None = None,
    redo_all: bool = False,
    workers: int = 1,
    dry_run: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    engine: str | None = None,
    address: str | None = None,
    spool: str | None = None,
) -> ReprocessReport:
    """Redo the stale, missing and failed runs of the chosen recognizers (with
    ``redo_all``, every run); other recognizers' runs and mentions are not touched.
    ``engine``, ``address`` and ``spool`` override kbx.toml's ``[engine]``: with a Dask
    cluster, its workers recognize the batches and this process commits them as it does
    its own."""
    started = time.monotonic()
    if dry_run:
        rows = plan(index, registry, names, redo_all, workers, sample=True)
        return ReprocessReport(rows, dry_run=True)
    spec = load_config(index.root).engine.override(engine, address, spool)
    remote = connect(spec)  # first: an engine that cannot run changes nothing
    with remote or nullcontext(), index.writing("reprocess", wait=WRITER_WAIT):
        with index.writer() as con:
            if repair(con, index).replayed:  # edits the registry, read before, did not see
                registry.replace(gazetteer(con))
        report = _reprocess(index, registry, names, redo_all, workers, progress, remote)
    report.seconds = time.monotonic() - started
    return report


def _reprocess(
    index: Index,
    registry: Registry,
    names: list[str] | None,
    redo_all: bool,
    workers: int,
    progress: Callable[[str, int, int], None] | None,
    engine: Engine | None,
) -> ReprocessReport:
    began = datetime.now()
    report = ReprocessReport(plan(index, registry, names, redo_all, workers, sample=False))
    chosen = [registry.get(row.name) for row in report.plan]
    redo_from = {}
    with index.writer() as con:
        for r in chosen:
            pending = pending_redo(con, r)
            if redo_all and not pending:
                pending = datetime.now()
                set_meta(con, redo_key(r.info.name), f"{r.info.version} {pending.isoformat()}")
            if pending:
                redo_from[r.info.name] = pending
    report.done = recognize(
        index,
        registry,
        [r.info.name for r in chosen],
        progress=progress,
        workers=workers,
        redo_from=redo_from,
        engine=engine,
    )
    kill_point("reprocess.recognized")
    with WriterLease(index) as lease:
        for name in redo_from:
            lease.con().execute("DELETE FROM kbx_meta WHERE key = ?", [redo_key(name)])
        refresh_context(lease, registry)  # lets the file go while it computes
        kill_point("reprocess.context")
        settle(lease.con())
        report.failures = listed(lease.con(), since=began)
    return report


def purge(index: Index, names: list[str], registry: Registry) -> dict[str, int]:
    """Drop every run and mention of recognizers that are not installed (or are turned off
    in kbx.toml), so search stops serving what they found; returns the mentions removed."""
    installed = {r.info.name for r in registry}
    if refused := sorted(set(names) & installed):
        raise BadArgument(
            f"{', '.join(refused)} is installed and on; turn it off in kbx.toml first, or "
            "`kbx reprocess` to redo it"
        )
    removed = {}
    with index.writing("recognizers --purge"), index.writer() as con:
        repair(con, index)
        with transaction(con):
            for name in names:
                (n,) = con.execute(
                    "SELECT count(*) FROM mentions WHERE recognizer = ?", [name]
                ).fetchone()
                if (
                    not n
                    and not con.execute(
                        "SELECT 1 FROM runs WHERE recognizer = ? LIMIT 1", [name]
                    ).fetchone()
                ):
                    raise BadArgument(f"no recognizer named {name!r} has run in this index")
                for table in ("mentions", "runs", "doc_mentions", "recognizer_info"):
                    key = "name" if table == "recognizer_info" else "recognizer"
                    con.execute(f"DELETE FROM {table} WHERE {key} = ?", [name])
                removed[name] = n
            mark_dirty(con)
            runs_changed(con)
        settle(con)
    return removed
