"""``kbx index``: walk the root, extract what changed in worker processes, commit in short batches.

Workers only compute (read, hash, extract); this process is the single writer.
Each batch replaces its documents in one transaction, so a crash loses at most
the batch in flight, and between batches the file is free for readers.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import duckdb

from kbx.analysis import Analyzer, analyze_units
from kbx.annotate.context import refresh as refresh_context
from kbx.annotate.run import RecognizerReport, recognize
from kbx.annotate.setup import registry_for
from kbx.entities.build import repair, settle
from kbx.errors import BadArgument, ExtractError, OverBudget
from kbx.extract import Document, extract
from kbx.extract.textmap import pack
from kbx.recognizers.registry import Registry
from kbx.source.walk import Found, walk
from kbx.store.consistency import drop_orphans, unplace
from kbx.store.db import Index, kill_point, mark_dirty, rows_select
from kbx.store.postings import analyzer_of, rebuild_postings, resort_postings, term_rows
from kbx.store.schema import REEXTRACT
from kbx.store.transaction import transaction
from kbx.store.workers import each_in_order, timed

DEFAULT_MAX_SIZE = 50 * 1024 * 1024
BATCH_DOCS = 400
BATCH_SECONDS = 2.0
PARALLEL_THRESHOLD = 32


@dataclass
class Outcome:
    """What reading one file gave: a document, the same bytes as before, or a failure."""

    rel: str
    size: int = 0
    mtime_ns: int = 0
    sha256: str | None = None
    document: Document | None = None
    terms: list[tuple[str, str, str, int]] = field(default_factory=list)  # see analyze_units
    error: str | None = None
    status: str = "ok"  # ok | same | failed | skipped | vanished | unreadable


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
    recognizers: list[RecognizerReport] = field(default_factory=list)
    unavailable: list[tuple[str, str]] = field(default_factory=list)  # recognizers not run
    seconds: float = 0.0


def read_one(
    root: str, found: Found, known_sha: str | None, max_size: int, analyzer: Analyzer
) -> Outcome:
    """Read, hash, extract and analyze one file within its time budget. Runs in a worker;
    never raises."""
    try:
        return timed(_read_one, root, found, known_sha, max_size, analyzer)
    except OverBudget as e:
        return Outcome(found.rel, found.size, found.mtime_ns, error=str(e), status="failed")


def _read_one(
    root: str, found: Found, known_sha: str | None, max_size: int, analyzer: Analyzer
) -> Outcome:
    out = Outcome(found.rel, found.size, found.mtime_ns)
    if found.error:
        out.status, out.error = "unreadable", found.error
        return out
    if found.size > max_size:
        out.status = "skipped"
        out.error = f"larger than the size cap ({found.size:,} > {max_size:,} bytes)"
        return out
    try:
        st, data = _read_inside(root, found.rel, max_size)
    except FileNotFoundError:
        out.status = "vanished"
        return out
    except OSError as e:
        out.status, out.error = "unreadable", e.strerror or str(e)
        return out
    except ExtractError as e:
        out.status, out.error = "skipped", str(e)
        return out
    out.size, out.mtime_ns = st.st_size, st.st_mtime_ns
    out.sha256 = hashlib.sha256(data).hexdigest()
    if out.sha256 == known_sha:
        out.status = "same"
        return out
    try:
        out.document = extract(found.rel, data)
        out.terms = analyze_units(out.document.units, analyzer)
    except ExtractError as e:
        out.status, out.error = "failed", str(e)
    except MemoryError:
        out.document, out.terms = None, []
        out.status, out.error = "failed", "over the memory budget for one file"
    except Exception as e:  # a parser bug must not stop the run
        out.status, out.error = "failed", f"parser error: {type(e).__name__}: {e}"
    return out


def _read_inside(root: str, rel: str, max_size: int) -> tuple[os.stat_result, bytes]:
    """Open first, then check what was opened: a regular file (a FIFO would block; opened
    non-blocking it cannot), within the size cap, and still inside the root, so a symlink
    swapped in after the walk cannot bring in a file from elsewhere."""
    fd = os.open(os.path.join(root, rel), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ExtractError("not a regular file")
        real = _opened_path(fd)
        if real is not None and os.path.commonpath([real, root]) != root:
            raise ExtractError(f"leads outside the indexed folder, to {real}")
        if st.st_size > max_size:
            raise ExtractError(f"larger than the size cap ({st.st_size:,} > {max_size:,} bytes)")
        os.set_blocking(fd, True)
        return st, f.read()


def _opened_path(fd: int) -> str | None:
    """The real path of an open file (Linux); None where the system cannot say."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _trusted_sha(known: dict | None) -> str | None:
    """The hash that lets a file skip extraction: only one that was indexed fine (a file
    that failed is tried again, since a newer kbx may read it)."""
    return known["sha256"] if known and known["status"] == "ok" else None


def _read_all(
    root: Path, todo: list[Found], known: dict, max_size: int, workers: int, analyzer: Analyzer
) -> Iterator[Outcome]:
    """Every file's outcome in order, read by budgeted workers (one for a short list)."""
    args = [(str(root), f, _trusted_sha(known.get(f.rel)), max_size, analyzer) for f in todo]
    n = 1 if len(todo) < PARALLEL_THRESHOLD else max(1, workers)
    yield from each_in_order(read_one, args, n, _died)


def _died(job: tuple, why: str) -> Outcome:
    found: Found = job[1]
    return Outcome(found.rel, found.size, found.mtime_ns, error=why, status="failed")


def _json_default(value):
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def _doc_date(raw: str | None) -> str | None:
    """An ISO date (or year-month, or year) from a metadata value, else None."""
    if not raw:
        return None
    raw = str(raw).strip()
    for fmt, n in (("%Y-%m-%d", 10), ("%Y-%m", 7), ("%Y", 4)):
        try:
            datetime.strptime(raw[:n], fmt)
            return raw[:n]
        except ValueError:
            continue
    for fmt in ("%d %B %Y", "%B %d, %Y", "%B %Y", "%d %b %Y", "%b %d, %Y"):
        try:
            parsed = datetime.strptime(raw, fmt)
            return parsed.strftime("%Y-%m" if fmt == "%B %Y" else "%Y-%m-%d")
        except ValueError:
            continue
    return None


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
    "indexed_at",
]


def _write_batch(
    con: duckdb.DuckDBPyConnection, batch: list[Outcome], known: dict
) -> tuple[int, int]:
    """Replace the batch's documents in one transaction, sweeping the units they no longer
    place in the same one; returns the units added and swept."""
    now = datetime.now()
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
            con.execute("DELETE FROM doc_context WHERE list_contains(?, doc_id)", [stale])
        rows = []
        for o in docs:
            d = o.document
            meta = d.meta if d else None
            rows.append(
                (
                    known.get(o.rel, {}).get("doc_id"),
                    o.rel,
                    o.sha256,
                    o.size,
                    o.mtime_ns,
                    d.format if d else None,
                    d.encoding if d else None,
                    meta.title if meta else None,
                    _doc_date(meta.date) if meta else None,
                    meta.authors if meta else [],
                    json.dumps(meta.fields, default=_json_default) if meta else None,
                    "ok" if d else ("skipped" if o.status == "skipped" else "failed"),
                    o.error,
                    d.warnings if d else [],
                    len(d.units) if d else 0,
                    now,
                )
            )
        if rows:
            select, params = rows_select(
                _DOCUMENT_COLUMNS, rows, frozenset({"authors", "warnings"})
            )
            con.execute(
                f"""INSERT INTO documents
                SELECT coalesce(id, nextval('doc_ids')), * EXCLUDE (id) FROM ({select})
                ON CONFLICT (doc_id) DO UPDATE SET
                    sha256 = excluded.sha256, size = excluded.size, mtime_ns = excluded.mtime_ns,
                    format = excluded.format, encoding = excluded.encoding,
                    title = excluded.title, doc_date = excluded.doc_date,
                    authors = excluded.authors, meta = excluded.meta, status = excluded.status,
                    error = excluded.error, warnings = excluded.warnings,
                    n_units = excluded.n_units, indexed_at = excluded.indexed_at""",
                params,
            )
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
            mark_dirty(con)
    return added, swept


def _write_units(con: duckdb.DuckDBPyConnection, outcomes: list[Outcome]) -> int:
    """Insert the units not yet stored (with their postings) and every placement."""
    if not outcomes:
        return 0
    distinct: dict[str, int] = {}  # unit hash -> its index k in this batch
    units: list[tuple] = []
    placements: list[tuple] = []
    for o in outcomes:
        d = o.document
        for i, u in enumerate(d.units):
            h = u.hash
            if h not in distinct:
                distinct[h] = len(units)
                code = [list(c) for c in u.code_spans] or None  # NULL: none
                units.append(
                    (len(units), h, list(u.heading_path), u.text, u.n_tokens, u.kind, *o.terms[i])
                    + (code, list(u.breaks) or None)
                )
            start, end = u.lines
            placements.append(
                (d.path, i, distinct[h], u.kind, u.page, start, end, pack(u.segments))
            )
    _stage(
        con,
        "staged_units",
        [
            "k",
            "unit_hash",
            "heading_path",
            "text",
            "n_tokens",
            "kind",
            "terms",
            "tfs",
            "htfs",
            "n_terms",
            "code_spans",
            "breaks",
        ],
        units,
    )
    _stage(
        con,
        "staged_placements",
        ["path", "ordinal", "k", "kind", "page", "start_line", "end_line", "offsets"],
        placements,
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE staged_postings AS "
        + term_rows("staged_units s ANTI JOIN units u USING (unit_hash)", "k")
    )
    new = con.execute(
        "SELECT count(*) FROM staged_units s ANTI JOIN units u USING (unit_hash)"
    ).fetchone()[0]
    con.execute(
        """INSERT INTO units
        SELECT nextval('unit_ids'), unit_hash, heading_path, text, n_tokens, kind, n_terms,
               code_spans, breaks
        FROM staged_units s ANTI JOIN units u USING (unit_hash) ORDER BY k"""
    )
    con.execute(
        """INSERT INTO terms SELECT nextval('term_ids'), term
        FROM (SELECT DISTINCT term FROM staged_postings) s ANTI JOIN terms t USING (term)"""
    )
    con.execute(
        """INSERT INTO postings
        SELECT t.term_id, u.unit_id, p.tf, p.htf
        FROM staged_postings p JOIN staged_units s USING (k)
        JOIN units u USING (unit_hash) JOIN terms t USING (term)
        ORDER BY t.term_id"""
    )
    con.execute(
        """INSERT INTO placements
        SELECT d.doc_id, p.ordinal, u.unit_id, p.kind, p.page::INTEGER,
               p.start_line, p.end_line, p.offsets::BLOB
        FROM staged_placements p JOIN documents d USING (path)
        JOIN staged_units s USING (k) JOIN units u USING (unit_hash)"""
    )
    for table in ("staged_units", "staged_postings", "staged_placements"):
        con.execute(f"DROP TABLE {table}")
    return new


def _stage(con: duckdb.DuckDBPyConnection, name: str, columns: list[str], rows: list[tuple]):
    """A temporary table of ``rows``, loaded in one statement."""
    lists = frozenset({"heading_path", "code_spans", "breaks"})
    select, params = rows_select(columns, rows, lists)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {select}", params)


def index(
    root: str | Path,
    db: str | Path | None = None,
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    workers: int | None = None,
    hidden: bool = False,
    stemmer: str | None = None,
    registry: Registry | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    recognizer_progress: Callable[[str, int, int], None] | None = None,
) -> IndexReport:
    """Bring the index of ``root`` up to date with its files; returns what changed."""
    started = time.monotonic()
    idx = Index.for_root(root, db)
    if not idx.root.is_dir():
        raise BadArgument(f"not a folder: {root}")
    report = IndexReport(str(idx.root), str(idx.db))
    with idx.writing("index"):
        _index(
            idx, report, max_size, workers, hidden, stemmer, registry, progress, recognizer_progress
        )
    report.seconds = time.monotonic() - started
    return report


def _index(
    idx: Index,
    report: IndexReport,
    max_size: int,
    workers: int | None,
    hidden: bool,
    stemmer: str | None,
    registry: Registry | None,
    progress: Callable[[int, int, str], None] | None,
    recognizer_progress: Callable[[str, int, int], None] | None,
) -> None:
    with idx.writer() as con:
        recorded = con.execute("SELECT value FROM kbx_meta WHERE key = 'root'").fetchone()[0]
        if recorded != str(idx.root):
            raise BadArgument(f"{idx.db} indexes {recorded}, not {idx.root}")
        report.units_swept += repair(con, idx).swept
        analyzer = _analyzer(con, stemmer)
        known = {
            r[0]: dict(zip(("doc_id", "sha256", "size", "mtime_ns", "status"), r[1:], strict=True))
            for r in con.execute(
                "SELECT path, doc_id, sha256, size, mtime_ns, status FROM documents"
            ).fetchall()
        }
        if con.execute("SELECT 1 FROM kbx_meta WHERE key = ?", [REEXTRACT]).fetchone():
            for k in known.values():  # a migration asked for every file to be read again
                k["sha256"] = k["size"] = None
    found = list(walk(idx.root, hidden=hidden))
    seen = {f.rel for f in found}
    todo = []
    for f in found:
        k = known.get(f.rel)
        if k and k["status"] == "ok" and (k["size"], k["mtime_ns"]) == (f.size, f.mtime_ns):
            report.unchanged += 1
        else:
            todo.append(f)
    gone = [known[p]["doc_id"] for p in known if p not in seen]
    workers = workers or os.cpu_count() or 1
    batch: list[Outcome] = []
    flushed = time.monotonic()
    for n, outcome in enumerate(
        _read_all(idx.root, todo, known, max_size, workers, analyzer), start=1
    ):
        _count(report, outcome, known)
        if outcome.status == "vanished" and outcome.rel in known:
            gone.append(known[outcome.rel]["doc_id"])
        batch.append(outcome)
        if progress:
            progress(n, len(todo), outcome.rel)
        if len(batch) >= BATCH_DOCS or time.monotonic() - flushed > BATCH_SECONDS:
            _flush(idx, batch, known, report)
            batch, flushed = [], time.monotonic()
    _flush(idx, batch, known, report)
    with idx.writer() as con:
        if gone:
            with transaction(con):
                unplace(con, gone)
                for table in ("doc_context", "doc_mentions", "documents"):
                    con.execute(f"DELETE FROM {table} WHERE list_contains(?, doc_id)", [gone])
                report.units_swept += drop_orphans(con)
                mark_dirty(con)
            kill_point("index.removed")
        report.removed = len(gone)
        resort_postings(con)
        con.execute(
            "INSERT OR REPLACE INTO kbx_meta VALUES ('indexed_at', ?)", [datetime.now().isoformat()]
        )
        con.execute("DELETE FROM kbx_meta WHERE key = ?", [REEXTRACT])
    registry = registry if registry is not None else registry_for(idx)
    report.unavailable = list(registry.broken)
    report.recognizers = recognize(idx, registry, progress=recognizer_progress)
    with idx.writer() as con:
        refresh_context(con, registry)
        kill_point("index.context")
        settle(con)  # a migration marks the layer stale too


def _analyzer(con: duckdb.DuckDBPyConnection, stemmer: str | None) -> Analyzer:
    """The index's analysis chain; choosing another stemmer rebuilds the postings."""
    row = con.execute("SELECT value FROM kbx_meta WHERE key = 'stemmer'").fetchone()
    analyzer = analyzer_of(con, stemmer)
    if row is None or row[0] != analyzer.stemmer:
        rebuild_postings(con, analyzer)
        con.execute("INSERT OR REPLACE INTO kbx_meta VALUES ('stemmer', ?)", [analyzer.stemmer])
    return analyzer


def _flush(idx: Index, batch: list[Outcome], known: dict, report: IndexReport) -> None:
    """Write a batch; if the store refuses it, write its files one by one, so a file that
    cannot be stored is recorded as failed and the rest go in."""
    if not batch:
        return
    with idx.writer() as con:
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


def _touch(con: duckdb.DuckDBPyConnection, same: Iterable[Outcome], known: dict) -> None:
    """Record the new stat of files whose bytes did not change."""
    for o in same:
        con.execute(
            "UPDATE documents SET size = ?, mtime_ns = ?, error = NULL WHERE doc_id = ?",
            [o.size, o.mtime_ns, known[o.rel]["doc_id"]],
        )


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
    elif o.status == "skipped":
        report.skipped += 1
        report.failures.append({"path": o.rel, "status": "skipped", "error": o.error or ""})
    elif o.status in ("failed", "unreadable"):
        report.failed += 1
        report.failures.append({"path": o.rel, "status": "failed", "error": o.error or ""})
