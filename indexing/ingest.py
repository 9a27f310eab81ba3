"""``kbx index``: walk the root, extract what changed in worker processes, commit in short batches.

Workers compute (read, hash, extract, analyze, and run the rule-based recognizers, see
``read`` and ``prepare``); this process is the single writer, on one connection for the run. Each
batch replaces its documents in one transaction, so a crash loses at most the batch in
flight; a reader that asks for the file ends the batch and gets it. Once every file is
in, the folder is searchable; the slow recognizers (models) then fill in through the
same resumable pass as ``kbx reprocess``.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kbx.annotate.context import forget_documents
from kbx.annotate.context import refresh as refresh_context
from kbx.annotate.engine import Engine, connect
from kbx.annotate.failures import listed
from kbx.annotate.run import RecognizerReport, batch_units, lacking, recognize, record_info
from kbx.annotate.setup import registry_for
from kbx.config import load_config
from kbx.entities import facet_arrays
from kbx.entities.build import repair, settle
from kbx.errors import BadArgument, EngineUnavailable, KbxError
from kbx.extract.document import EXTRACTION_VERSIONS
from kbx.indexing.prepare import PLACEMENT_COLUMNS, UNIT_COLUMNS, run_with
from kbx.indexing.read import AS_TEXT, Outcome, read_all
from kbx.recognizers.base import Recognizer
from kbx.recognizers.registry import Registry
from kbx.source.walk import Found, walk
from kbx.store import passages_file, postings_file
from kbx.store.arrays import worth_mapping
from kbx.store.consistency import drop_orphans, unplace
from kbx.store.db import (
    WRITER_WAIT,
    Index,
    WriterLease,
    kill_point,
    mark_stale,
    runs_changed,
    set_meta,
    staged,
)
from kbx.store.postings import (
    record_languages,
    resort_postings,
    settle_analyzer,
    term_rows,
    touched,
)
from kbx.store.schema import REEXTRACT
from kbx.store.transaction import transaction

EXTRACTION = "extraction"  # kbx_meta key: the EXTRACTION_VERSIONS that read the files

if TYPE_CHECKING:
    from kbx.vectors.run import VectorReport

DEFAULT_MAX_SIZE = 50 * 1024 * 1024
BATCH_DOCS = 400
# A batch also ends after this long, or as soon as a reader asks for the file. Each commit
# costs about 0.1 s of the writer's CPU whatever its size, and on a busy machine a 2 s
# cadence made batches of 20 files (43 commits for the Node.js corpus instead of 3).
BATCH_SECONDS = 8.0
PARALLEL_THRESHOLD = 32


VECTORS_STAGE = "vectors"  # the name ``recognizer_progress`` and ``searchable`` give it


@dataclass
class IndexReport:
    """The summary ``kbx index`` prints."""

    root: str
    db: str
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    skipped: int = 0
    units_added: int = 0
    units_swept: int = 0
    failures: list[dict] = field(default_factory=list)  # path, status, error: as in status
    # files of formats kbx does not read, by kind (source/walk.unread_kind); None: the
    # caller walked (the watcher), and the last full walk's count stands
    passed_over: dict[str, int] | None = None
    unit_failures: list[dict] = field(default_factory=list)  # this run's, as in status
    recognizers: list[RecognizerReport] = field(default_factory=list)
    unavailable: list[tuple[str, str]] = field(default_factory=list)  # recognizers not run
    searchable_s: float | None = None  # when every file was in, before the slow recognizers
    vectors: VectorReport | None = None  # where the index has vectors: its new units'
    seconds: float = 0.0


def _readers(todo: list[Found], workers: int) -> int:
    """One worker for a short list, else ``workers``."""
    return 1 if len(todo) < PARALLEL_THRESHOLD else max(1, workers)


def _placed(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, frozenset[str]]:
    """The units each of these documents placed when last indexed: they have their runs,
    so a changed file's unchanged passages are not recognized again."""
    if not paths:
        return {}
    rows = con.execute(
        """SELECT d.path, list(u.unit_hash) FROM documents d JOIN placements p USING (doc_id)
           JOIN units u USING (unit_id) WHERE list_contains(?, d.path) GROUP BY d.path""",
        [paths],
    ).fetchall()
    return {path: frozenset(hashes) for path, hashes in rows}


_DOCUMENT_COLUMNS = [
    "id",
    "path",
    "sha256",
    "size",
    "mtime_ns",
    "format",
    "encoding",
    "title",
    "doc_date",
    "authors",
    "meta",
    "status",
    "error",
    "warnings",
    "n_units",
]


def _write_batch(
    con: duckdb.DuckDBPyConnection, batch: list[Outcome], known: dict
) -> tuple[int, int]:
    """Replace the batch's documents in one transaction, sweeping the units they no longer
    place in the same one; returns the units added and swept."""
    docs = [
        o
        for o in batch
        if o.status in ("ok", "failed", "skipped")
        or (o.status == "unreadable" and o.rel not in known)
    ]
    stale = [known[o.rel]["doc_id"] for o in docs if o.rel in known]
    with transaction(con):
        if stale:
            unplace(con, stale)
            forget_documents(con, stale)
        if docs:
            _write_documents(con, docs, known)
        added = _write_units(con, [o for o in docs if o.document])
        swept = drop_orphans(con) if stale else 0
        # Known files that could not be read keep their units; the error is noted.
        for o in batch:
            if o.status == "unreadable" and o.rel in known:
                con.execute(
                    "UPDATE documents SET error = ? WHERE doc_id = ?",
                    [o.error, known[o.rel]["doc_id"]],
                )
        if docs:
            written = con.execute(
                "SELECT doc_id FROM documents WHERE list_contains(?, path)", [[o.rel for o in docs]]
            ).fetchall()
            mark_stale(con, [d for (d,) in written])
            passages_file.touched(con, [d for (d,) in written])
    return added, swept


def _write_documents(con: duckdb.DuckDBPyConnection, docs: list[Outcome], known: dict) -> None:
    """Insert or update the documents' rows in one statement."""
    rows = []
    for o in docs:
        d = o.document
        status = "ok" if d else ("skipped" if o.status == "skipped" else "failed")
        rows.append(
            (known.get(o.rel, {}).get("doc_id"), o.rel, o.sha256, o.size, o.mtime_ns)
            + (
                (d.format, d.encoding, d.title, d.doc_date, d.authors, d.meta)
                if d
                else (None, None, None, None, [], None)
            )
            + (status, o.error, d.warnings if d else [], d.n_units if d else 0)
        )
    columns = dict(zip(_DOCUMENT_COLUMNS, zip(*rows, strict=True), strict=True))
    with staged(con, "staged_docs", columns, frozenset({"size", "mtime_ns", "n_units"})):
        con.execute(
            """INSERT INTO documents
            SELECT coalesce(id::INTEGER, nextval('doc_ids')), path, sha256::VARCHAR, size,
                   mtime_ns, format::VARCHAR, encoding::VARCHAR, title::VARCHAR,
                   doc_date::VARCHAR, authors::VARCHAR[], meta::JSON, status, error::VARCHAR,
                   warnings::VARCHAR[], n_units, ?
            FROM staged_docs
            ON CONFLICT (doc_id) DO UPDATE SET
                sha256 = excluded.sha256, size = excluded.size, mtime_ns = excluded.mtime_ns,
                format = excluded.format, encoding = excluded.encoding,
                title = excluded.title, doc_date = excluded.doc_date,
                authors = excluded.authors, meta = excluded.meta, status = excluded.status,
                error = excluded.error, warnings = excluded.warnings,
                n_units = excluded.n_units, indexed_at = excluded.indexed_at""",
            [datetime.now()],
        )


def _write_units(con: duckdb.DuckDBPyConnection, outcomes: list[Outcome]) -> int:
    """Insert the units not yet stored (with their postings, and the mentions and runs the
    workers found in them) and every placement; returns the units added."""
    if not outcomes:
        return 0
    distinct: dict[str, int] = {}  # unit hash -> its index k in this batch
    units: list[tuple] = []
    placements: list[tuple] = []
    mentions: list[tuple] = []
    runs: list[tuple] = []
    for o in outcomes:
        d = o.document
        ks, seen = [], set()  # seen: units an earlier document of the batch brought
        for u in d.units:
            k = distinct.get(u[0])
            if k is None:
                k = distinct[u[0]] = len(units)
                units.append((k, *u))
            else:
                seen.add(u[0])
            ks.append(k)
        placements += [(o.rel, p[0], ks[p[1]], *p[2:]) for p in d.placements]
        mentions += [m for m in d.mentions if m[0] not in seen] if seen else d.mentions
        runs += [r for r in d.runs if r[0] not in seen] if seen else d.runs
    unit_columns = dict(zip(["k", *UNIT_COLUMNS], zip(*units, strict=True), strict=True))
    place_columns = ["path", "ordinal", "k", *PLACEMENT_COLUMNS[2:]]
    ints = frozenset({"k", "n_tokens", "n_terms", "ordinal", "start_line", "end_line"})
    with (
        staged(con, "staged_units", unit_columns, ints),
        staged(con, "staged_placements", _columns(place_columns, placements), ints),
    ):
        con.execute(
            """CREATE OR REPLACE TEMP TABLE new_units AS
            SELECT nextval('unit_ids') AS unit_id, s.* FROM (
                SELECT * FROM staged_units s ANTI JOIN units u USING (unit_hash) ORDER BY k
            ) s"""
        )
        con.execute(
            """INSERT INTO units
            SELECT unit_id, unit_hash, heading_path::VARCHAR[], text, n_tokens, kind, n_terms,
                   code_spans::INTEGER[][], breaks::INTEGER[]
            FROM new_units ORDER BY unit_id"""
        )
        _write_postings(con)
        con.execute(
            """INSERT INTO placements
            SELECT d.doc_id, p.ordinal, u.unit_id, p.kind, p.page::INTEGER,
                   p.start_line, p.end_line, p.offsets::BLOB
            FROM staged_placements p JOIN documents d USING (path)
            JOIN staged_units s USING (k) JOIN units u USING (unit_hash)"""
        )
    _write_found(con, mentions, runs)
    (new,) = con.execute("SELECT count(*) FROM new_units").fetchone()
    con.execute("DROP TABLE new_units")
    return new


def _write_postings(con: duckdb.DuckDBPyConnection) -> None:
    """The postings of the batch's new units, their terms added to the dictionary."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE staged_postings AS " + term_rows("new_units", "unit_id")
    )
    con.execute(
        """INSERT INTO terms SELECT nextval('term_ids'), term
        FROM (SELECT DISTINCT term FROM staged_postings) s ANTI JOIN terms t USING (term)"""
    )
    con.execute(
        """INSERT INTO postings
        SELECT t.term_id, p.unit_id, p.tf, p.htf
        FROM staged_postings p JOIN terms t USING (term)
        ORDER BY t.term_id"""
    )
    con.execute("DROP TABLE staged_postings")
    touched(con)


MENTION_COLUMNS = ["unit_hash", "recognizer", "version", "start_char", "end_char", "type"]
MENTION_COLUMNS += ["text", "value", "confidence", "key"]
RUN_COLUMNS = ["unit_hash", "recognizer", "version", "n_mentions", "error", "ran_at"]


def _write_found(con: duckdb.DuckDBPyConnection, mentions: list, runs: list) -> None:
    """The workers' mentions and runs of the units this batch added (a unit stored before
    has its runs, or gets them in the pass after the batches)."""
    if not runs:
        return
    runs_changed(con)
    ints = frozenset({"start_char", "end_char", "n_mentions"})
    with (
        staged(con, "staged_mentions", _columns(MENTION_COLUMNS, mentions), ints),
        staged(con, "staged_runs", _columns(RUN_COLUMNS, runs), ints),
    ):
        if mentions:
            con.execute(
                """INSERT INTO mentions
                SELECT unit_hash, recognizer, version, start_char, end_char, type, text,
                       value::VARCHAR, confidence::DOUBLE, key::VARCHAR
                FROM staged_mentions SEMI JOIN new_units USING (unit_hash)"""
            )
        con.execute(
            """INSERT INTO runs
            SELECT unit_hash, recognizer, version, n_mentions, error::VARCHAR,
                   ran_at::TIMESTAMP
            FROM staged_runs SEMI JOIN new_units USING (unit_hash)"""
        )


def _columns(names: list[str], rows: list[tuple]) -> dict[str, tuple]:
    """Rows as named columns."""
    if not rows:
        return {n: () for n in names}
    return dict(zip(names, zip(*rows, strict=True), strict=True))


def index(
    root: str | Path,
    db: str | Path | None = None,
    *,
    max_size: int | None = None,
    workers: int | None = None,
    hidden: bool | None = None,
    stemmer: str | None = None,
    registry: Registry | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    recognizer_progress: Callable[[str, int, int], None] | None = None,
    searchable: Callable[[IndexReport, list[str]], None] | None = None,
    walked: tuple[bool, list[Found]] | None = None,
) -> IndexReport:
    """Bring the index of ``root`` up to date with its files; returns what changed.
    ``max_size`` and ``hidden`` left out are as the index last took them (see
    ``walk_settings``). ``searchable`` is called once every file is in and searchable,
    with the slow recognizers that run next (none, often). ``walked``: whether hidden files
    were walked, and the root's files as the caller has just walked them (the server's
    watcher, which walks to see whether a change matters): taken in place of a second
    walk of a large folder when the run walks as that walk did."""
    started, began = time.monotonic(), datetime.now()
    idx = Index.for_root(root, db)
    if not idx.root.is_dir():
        raise BadArgument(f"not a folder: {root}")
    report = IndexReport(str(idx.root), str(idx.db))
    # background work: it waits out another writer's run (a server's re-index) for up to a
    # minute, and says so, where an interactive edit gives up sooner
    with idx.writing("index", wait=WRITER_WAIT), WriterLease(idx) as lease:
        (last_unit,) = lease.con().execute("SELECT coalesce(max(unit_id), 0) FROM units").fetchone()
        registry = _index(
            idx, lease, report, max_size, workers, hidden, stemmer, registry, progress, walked
        )
        slow = _pending(lease.con(), registry)
        embedding = _unembedded(lease.con(), last_unit)
        # The layer now, so that filters work while the models run, unless they have at
        # most one batch to do: then it would be built twice within a second or two, and
        # a rebuild costs 80 ms even for a few files (what a server pays on every change).
        if not slow or any(n > batch_units(registry.get(name)) for name, n in slow.items()):
            _settle(lease, registry)
        try:
            if worth_mapping(lease.con()):  # made where a reader will map them
                refresh_mapped(lease.con(), idx.db)
            report.searchable_s = time.monotonic() - started
            if searchable:
                searchable(report, list(slow) + ([VECTORS_STAGE] if embedding else []))
            if slow:  # the models: on the cluster when kbx.toml names one ([engine])
                with _engine(idx) or nullcontext() as engine:
                    report.recognizers += recognize(
                        idx,
                        registry,
                        list(slow),
                        progress=recognizer_progress,
                        workers=workers,
                        lease=lease,
                        engine=engine,
                    )
        finally:  # after the models, or without them: a pass that could not run, or ctrl-C
            if slow:
                _settle(lease, registry)
        if embedding:
            from kbx.indexing.embedding import embed

            tick = recognizer_progress
            report.vectors = embed(
                idx,
                (lambda d, t: tick(VECTORS_STAGE, d, t)) if tick else None,
                lease=lease,
                added_after=last_unit,
            )
        report.unit_failures = listed(lease.con(), since=began)
    report.seconds = time.monotonic() - started
    return report


def _unembedded(con: duckdb.DuckDBPyConnection, last_unit: int) -> bool:
    """Whether the index has vectors (``kbx embed`` ran on it) and a unit this run added
    (its id past ``last_unit``, the ids being a sequence) has none: then ``kbx index``
    gives those theirs, last, so an embedded index stays whole as its mentions do. Only
    those: a pass ``kbx embed`` left is its to finish, not a server's next re-index, which
    would hold the write lock through it. No model is loaded where nothing is missing."""
    return bool(
        con.execute(
            """SELECT 1 FROM units u WHERE u.unit_id > ? AND EXISTS (SELECT 1 FROM vectors)
               AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.unit_hash = u.unit_hash)
               LIMIT 1""",
            [last_unit],
        ).fetchone()
    )


def refresh_mapped(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    """Export each mapped file not of its table's generation: what facets count over, what
    a search ranks over, and what its hits are read from."""
    facet_arrays.refresh(con, db)
    postings_file.refresh(con, db)
    passages_file.refresh(con, db)


def _engine(idx: Index) -> Engine | None:
    """The engine kbx.toml names for the model pass, connected; one that cannot run says
    that the files are in, so the user knows what a rerun will add."""
    try:
        return connect(load_config(idx.root).engine)
    except EngineUnavailable as e:
        raise EngineUnavailable(
            f"every file is indexed and searchable, but the model pass did not run: {e}"
        ) from None


def _index(
    idx: Index,
    lease: WriterLease,
    report: IndexReport,
    max_size: int | None,
    workers: int | None,
    hidden: bool | None,
    stemmer: str | None,
    registry: Registry | None,
    progress: Callable[[int, int, str], None] | None,
    walked: tuple[bool, list[Found]] | None = None,
) -> Registry:
    """Everything up to searchable: files, postings and the rule-based recognizers (the
    entity layer is the caller's to settle); returns the recognizers of this index."""
    con = lease.con()
    recorded = con.execute("SELECT value FROM kbx_meta WHERE key = 'root'").fetchone()[0]
    if recorded != str(idx.root):
        raise BadArgument(f"{idx.db} indexes {recorded}, not {idx.root}")
    report.units_swept += repair(con, idx, settle_layer=False).swept  # settled at the end
    try:
        max_size, hidden = walk_settings(con, max_size, hidden)
        analyzer = settle_analyzer(con, stemmer)
        registry = registry if registry is not None else registry_for(idx, con=con)
    except KbxError:
        settle(con)  # a run that refuses its arguments repairs all the same
        raise
    again = _read_again(con)
    report.unavailable = list(registry.broken)
    record_info(con, list(registry))  # search can say which have not run everywhere yet
    if walked is not None and walked[0] == hidden:  # the caller's walk, just made
        found = walked[1]
    else:
        passed: Counter[str] = Counter()
        found = list(walk(idx.root, hidden=hidden, passed=passed))
        report.passed_over = dict(passed.most_common())
        set_meta(con, "passed_over", json.dumps(report.passed_over))
    seen = {f.rel for f in found}
    known, new = _changed(con, found, again)
    todo = [f for f in found if f.rel in known or f.rel in new]
    report.unchanged += len(found) - len(todo)
    gone = [known[p]["doc_id"] for p in known if p not in seen]
    placed = _placed(con, [f.rel for f in todo if f.rel in known])
    workers = workers or os.cpu_count() or 1
    # With many files to read, the rule-based recognizers run in the readers; with a few,
    # in the pass below (in this process).
    run_with(_with_extraction(registry) if len(todo) >= PARALLEL_THRESHOLD else [])
    since = datetime.now()
    batch: list[Outcome] = []
    flushed = time.monotonic()
    for n, outcome in enumerate(
        read_all(idx.root, todo, known, placed, max_size, _readers(todo, workers), analyzer),
        start=1,
    ):
        _count(report, outcome, known)
        if outcome.status == "vanished" and outcome.rel in known:
            gone.append(known[outcome.rel]["doc_id"])
        batch.append(outcome)
        if progress:
            progress(n, len(todo), outcome.rel)
        if len(batch) >= BATCH_DOCS or time.monotonic() - flushed > BATCH_SECONDS or lease.expired:
            _flush(lease, batch, known, report)
            batch, flushed = [], time.monotonic()
    _flush(lease, batch, known, report)
    con = lease.con()
    if gone:
        with transaction(con):
            unplace(con, gone)
            forget_documents(con, gone)
            for table in ("doc_mentions", "documents"):
                con.execute(f"DELETE FROM {table} WHERE list_contains(?, doc_id)", [gone])
            report.units_swept += drop_orphans(con)  # unplace marked them stale
        kill_point("index.removed")
    report.removed = len(gone)
    resort_postings(con)
    record_languages(con)
    set_meta(con, "indexed_at", datetime.now().isoformat())
    con.execute("DELETE FROM kbx_meta WHERE key = ?", [REEXTRACT])
    set_meta(con, EXTRACTION, json.dumps(EXTRACTION_VERSIONS, sort_keys=True))
    if worth_mapping(con):  # now, not after the recognizers: a search ranks mapped again
        postings_file.refresh(con, idx.db)  # a delta, where only a few files changed
        passages_file.refresh(con, idx.db)
    # what the readers did not run (a unit stored before, a file past its budget)
    fast = [r for r in registry if not (r.info.slow or not r.info.fork_safe)]
    if fast:
        if _complete(con, fast):  # a refresh that changed nothing: no pass to plan
            passed = [RecognizerReport(r.info.name, r.info.version) for r in fast]
        else:
            names = [r.info.name for r in fast]
            passed = recognize(idx, registry, names, workers=workers, lease=lease)
        report.recognizers = _with_readers(lease.con(), passed, since)
    return registry


_KNOWN = ("doc_id", "sha256", "size", "mtime_ns", "status", "format")


def _changed(
    con: duckdb.DuckDBPyConnection, found: list[Found], again: set[str]
) -> tuple[dict[str, dict], set[str]]:
    """The documents a run must look at, as ``known`` rows by path (those whose file changed
    stat, went, or was not read well, and those of a format read again: their hash and
    size forgotten), and the paths of files the index does not know. Compared in one
    statement over the walk, not a Python row per document (42,500: about 0.4 s)."""
    columns = {
        "path": [f.rel for f in found] or [None],  # a row of NULL: the relation's types
        "size": [f.size for f in found] or [0],
        "mtime_ns": [f.mtime_ns for f in found] or [0],
    }
    with staged(con, "walked", columns, frozenset({"size", "mtime_ns"})):
        rows = con.execute(
            f"""SELECT d.path, d.{", d.".join(_KNOWN)}, list_contains($1, d.format) OR $2
                FROM documents d LEFT JOIN walked w ON w.path::VARCHAR = d.path
                WHERE w.path IS NULL OR d.status IS DISTINCT FROM 'ok'
                   OR d.size IS DISTINCT FROM w.size OR d.mtime_ns IS DISTINCT FROM w.mtime_ns
                   OR list_contains($1, d.format) OR $2""",
            [sorted(again) or [""], "*" in again],
        ).fetchall()
        new = con.execute(
            "SELECT list(w.path::VARCHAR) FROM walked w "
            "WHERE w.path IS NOT NULL AND w.path::VARCHAR NOT IN (SELECT path FROM documents)"
        ).fetchall()[0][0]
    known = {}
    for path, *values, read_again in rows:
        k = known[path] = dict(zip(_KNOWN, values, strict=True))
        if read_again:
            k["sha256"] = k["size"] = None
    return known, set(new or ())


def _complete(con: duckdb.DuckDBPyConnection, recognizers: list[Recognizer]) -> bool:
    """Every unit has a good run of each of these recognizers' current versions."""
    return not any(lacking(con, recognizers).values())


def _with_readers(
    con: duckdb.DuckDBPyConnection, passed: list[RecognizerReport], since: datetime
) -> list[RecognizerReport]:
    """The reports of a pass, counting the runs the readers did since ``since`` too."""
    done = {
        name: (units, mentions, failures)
        for name, units, mentions, failures in con.execute(
            """SELECT recognizer, count(*), sum(n_mentions),
                      list((unit_hash, error)) FILTER (error IS NOT NULL)
               FROM runs WHERE ran_at >= ? GROUP BY recognizer""",
            [since],
        ).fetchall()
    }
    for r in passed:
        units, mentions, failures = done.get(r.name, (0, 0, None))
        r.units, r.mentions = units, int(mentions or 0)
        r.failures = [tuple(f) for f in failures or []]
    return passed


def _with_extraction(registry: Registry) -> list[Recognizer]:
    """The recognizers that run in the extraction workers: all but models (``slow``) and
    those that must not run in a forked process."""
    chosen = [r for r in registry if not r.info.slow and r.info.fork_safe]
    for r in chosen:
        if hasattr(r, "load"):
            r.load()  # before forking: one copy, shared by every worker
    return chosen


def _pending(con: duckdb.DuckDBPyConnection, registry: Registry) -> dict[str, int]:
    """The recognizers left out of extraction (models: spaCy, GLiNER) with units to do,
    and how many. They run once the folder is searchable, in the resumable pass of ``kbx
    reprocess``, which lets readers in between its batches; killed, the next ``kbx index``
    or ``kbx reprocess`` carries on."""
    slow = [r for r in registry if r.info.slow or not r.info.fork_safe]
    return {name: n for name, n in lacking(con, slow).items() if n}


def _settle(lease: WriterLease, registry: Registry) -> None:
    refresh_context(lease, registry)  # lets the file go while it computes
    kill_point("index.context")
    settle(lease.con())  # a migration marks the layer stale too


def walk_settings(
    con: duckdb.DuckDBPyConnection, max_size: int | None = None, hidden: bool | None = None
) -> tuple[int, bool]:
    """The size cap and hidden-files choice of the walk: as given, else as the index last
    took them, and remembered. A folder indexed with ``--hidden`` keeps its hidden files
    through a plain ``kbx index`` and the server's watcher, rather than losing them and
    everything recognized in them."""
    known = _remembered(con)
    last_size, last_hidden = _walk_defaults(known)
    max_size = max_size if max_size is not None else last_size
    hidden = hidden if hidden is not None else last_hidden
    if known != {"max_size": str(max_size), "hidden": str(hidden).lower()}:
        set_meta(con, "max_size", str(max_size))
        set_meta(con, "hidden", str(hidden).lower())
    return max_size, hidden


def walk_of(index: Index) -> tuple[int, bool]:
    """The size cap and hidden-files choice a run of ``index`` takes when given none."""
    with index.reader() as con:
        return _walk_defaults(_remembered(con))


def _remembered(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    keys = "('max_size', 'hidden')"
    return dict(con.execute(f"SELECT key, value FROM kbx_meta WHERE key IN {keys}").fetchall())


def _walk_defaults(known: dict[str, str]) -> tuple[int, bool]:
    return int(known.get("max_size", DEFAULT_MAX_SIZE)), known.get("hidden") == "true"


def _flush(lease: WriterLease, batch: list[Outcome], known: dict, report: IndexReport) -> None:
    """Write a batch; if the store refuses it, write its files one by one, so a file that
    cannot be stored is recorded as failed and the rest go in. Then let a waiting reader
    have the file."""
    if not batch:
        return
    con = lease.con()
    try:
        added, swept = _write_batch(con, batch, known)
    except duckdb.Error:
        if len(batch) == 1:
            raise
        added = swept = 0
        for o in batch:
            a, s = _write_alone(con, o, known, report)
            added, swept = added + a, swept + s
    _touch(con, [o for o in batch if o.status == "same"], known)
    report.units_added += added
    report.units_swept += swept
    kill_point("index.batch")
    if any(o.document and o.document.runs for o in batch):
        kill_point("recognize.batch")  # recognizer runs were committed, as in a pass's batch
    if lease.expired:
        lease.release()


def _read_again(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The formats whose files this run reads again though their bytes did not change:
    those a migration named (``REEXTRACT``; ``*``: every one), and those whose extractor
    changed since the index last read them (``EXTRACTION_VERSIONS``)."""
    meta = dict(
        con.execute(
            "SELECT key, value FROM kbx_meta WHERE key IN (?, ?)", [REEXTRACT, EXTRACTION]
        ).fetchall()
    )
    asked = meta.get(REEXTRACT)
    out = set() if asked is None else {"*"} if asked == "1" else set(asked.split(","))
    read = json.loads(meta.get(EXTRACTION) or "{}")
    return out | {f for f, v in EXTRACTION_VERSIONS.items() if read.get(f, "1") != v}


def _write_alone(
    con: duckdb.DuckDBPyConnection, o: Outcome, known: dict, report: IndexReport
) -> tuple[int, int]:
    try:
        return _write_batch(con, [o], known)
    except duckdb.Error as e:
        why = f"could not be stored: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        _count(report, o, known, undo=True)
        failed = Outcome(o.rel, o.size, o.mtime_ns, o.sha256, error=why, status="failed")
        _count(report, failed, known)
        return _write_batch(con, [failed], known)


def _touch(con: duckdb.DuckDBPyConnection, same: list[Outcome], known: dict) -> None:
    """Record the new stat of files whose bytes did not change, in one statement."""
    if not same:
        return
    rows = [(known[o.rel]["doc_id"], o.size, o.mtime_ns) for o in same]
    columns = _columns(["doc_id", "size", "mtime_ns"], rows)
    with transaction(con), staged(con, "touched", columns, frozenset(columns)):
        con.execute(
            """UPDATE documents SET size = t.size, mtime_ns = t.mtime_ns,
                   error = CASE WHEN starts_with(error, ?) THEN error END
            FROM touched t WHERE documents.doc_id = t.doc_id""",
            [AS_TEXT],  # readable again clears "could not be read"; bytes as before, not this
        )
        passages_file.touched(con, [r[0] for r in rows])


def _count(report: IndexReport, o: Outcome, known: dict, undo: bool = False) -> None:
    """Add an outcome to the report's counts (with ``undo``, take a counted one back)."""
    if undo:
        field = "updated" if o.rel in known else "new"
        setattr(report, field, getattr(report, field) - 1)
        return
    if o.status == "same":
        report.unchanged += 1
    elif o.status == "ok":
        if o.rel in known:
            report.updated += 1
        else:
            report.new += 1
        if o.error:  # read as plain text: in, and said
            report.failures.append({"path": o.rel, "status": "ok", "error": o.error})
    elif o.status == "skipped":
        report.skipped += 1
        report.failures.append({"path": o.rel, "status": "skipped", "error": o.error or ""})
    elif o.status in ("failed", "unreadable"):
        report.failed += 1
        report.failures.append({"path": o.rel, "status": "failed", "error": o.error or ""})
