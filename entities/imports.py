"""Bulk imports into the gazetteer: Wikidata's entity JSON and SPARQL CSVs, from a file of
any size, as one edit.

Two phases, so that a whole dump never holds the index: the file is read first, with the
index closed (``gazetteer/wikidata.py`` streams it), the wanted entities spooled to a
temporary file; a bad line stops the import there, before anything is written, unless
``skip_bad``. Then one transaction writes the spool in batches, their log lines reaching
``.kbx/gazetteer.jsonl`` in one append just before the commit (taken out again if it
fails), and the gazetteer's runs are brought to the new version as after any edit.

An imported alias may be another entry's too (a dump has many "John Smith"s): unlike a
hand edit, which is refused, the import keeps both, and the shared alias names neither
until one entry pins it (``kbx gazetteer add NAME --id QID --type T --pin``). An entry
already in the gazetteer gains the file's new aliases; a retracted one is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import duckdb

from kbx.annotate.setup import entries, pins
from kbx.entities.build import repair
from kbx.entities.gazetteer import _catch_up, apply, default_actor
from kbx.errors import BadArgument
from kbx.gazetteer import wikidata
from kbx.gazetteer.entries import check_name
from kbx.store import journal
from kbx.store.db import Index, WriterLease, kill_point, mark_dirty, staged
from kbx.store.transaction import transaction

BATCH = 5_000  # entries per statement: large enough to amortize, small for memory
SHOWN = 5  # bad lines and shared aliases listed in the report
STOP_AT = 1_000  # bad lines: past this, the file is not what it should be

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class ImportReport:
    """What an import read, wrote and left out, and what the re-run cost."""

    file: str
    format: str
    dump_date: str
    read: int = 0
    added: int = 0
    merged: int = 0  # existing entries that gained aliases
    unchanged: int = 0  # existing entries the file adds nothing to
    retracted: int = 0  # retracted entries, left alone
    not_items: int = 0
    filtered: int = 0
    unmapped: int = 0
    aliases_dropped: int = 0
    bad: int = 0
    bad_lines: list[dict] = field(default_factory=list)
    shared_aliases: int = 0  # aliases several current entries have, none pinned
    shared: list[dict] = field(default_factory=list)
    version: str = ""
    units_rerun: int = 0
    units_carried: int = 0
    mentions: int = 0
    removed: int = 0
    seconds: float = 0.0


def import_file(
    index: Index,
    path: Path,
    fmt: str = "wikidata",
    langs: Iterable[str] = ("en",),
    default_type: str | None = None,
    qids: Iterable[str] = (),
    qids_file: Path | None = None,
    only_types: Iterable[str] = (),
    mapping: Iterable[str] = (),
    dump_date: str | None = None,
    skip_bad: bool = False,
    actor: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import the entities of a Wikidata JSON file (a dump, JSON lines, or an EntityData /
    wbgetentities answer) or a SPARQL CSV; see the module's docstring."""
    started = time.monotonic()
    if fmt not in wikidata.FORMATS:
        raise BadArgument(f"unknown format {fmt!r}; choose from {', '.join(wikidata.FORMATS)}")
    wanted = [*qids, *(wikidata.read_qids(qids_file) if qids_file else [])]
    opts = wikidata.options(langs, default_type, wanted, only_types, mapping)
    actor = check_name(actor or default_actor(), "--by")
    piped = str(path) == "-"
    if not piped and not path.is_file():
        raise BadArgument(f"no such file: {path}" if not path.exists() else f"not a file: {path}")
    when = _dump_date(path, dump_date, piped)
    name = wikidata.display_name(path)
    report = ImportReport(name, fmt, when)
    note = f"{'Wikidata' if fmt == 'wikidata' else 'SPARQL CSV'} {name}, dump of {when}"
    counts = wikidata.Counts()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        spooled = _spool(path, fmt, opts, counts, spool, skip_bad, report, progress)
        for name in ("read", "not_items", "filtered", "unmapped", "aliases_dropped"):
            setattr(report, name, getattr(counts, name))
        spool.seek(0)
        _write(index, _unspool(spool), spooled, actor, note, skip_bad, report, progress)
    report.seconds = time.monotonic() - started
    return report


def _dump_date(path: Path, given: str | None, piped: bool) -> str:
    if given is None and piped:
        raise BadArgument("reading standard input: give --dump-date YYYY-MM-DD, the dump's date")
    if given is None:
        return date.fromtimestamp(path.stat().st_mtime).isoformat()
    try:
        return date.fromisoformat(given).isoformat()
    except ValueError:
        raise BadArgument(f"--dump-date {given!r}: write it as YYYY-MM-DD") from None


def _bad(report: ImportReport, line: int, why: str, qid: str | None) -> None:
    report.bad += 1
    if len(report.bad_lines) < SHOWN:
        report.bad_lines.append({"line": line, "qid": qid, "why": why})


def _refuse(report: ImportReport, stopped: bool = False) -> BadArgument:
    first = report.bad_lines[0]
    where = f"line {first['line']}" + (f" ({first['qid']})" if first["qid"] else "")
    count = f"{report.bad}+ (stopped there)" if stopped else str(report.bad)
    return BadArgument(
        f"{report.file}: {count} bad entities, first at {where}: {first['why']}; nothing "
        "was imported (fix them, or pass --skip-bad to import the rest)"
    )


def _spool(
    path: Path,
    fmt: str,
    opts: wikidata.Options,
    counts: wikidata.Counts,
    spool,
    skip_bad: bool,
    report: ImportReport,
    progress: Progress | None,
) -> int:
    """Read the file with the index closed, writing each wanted entity to ``spool``; a bad
    one is counted, and unless ``skip_bad`` the import stops once the file is read."""
    n = 0
    tick = (lambda done, total: progress("reading", done, total)) if progress else None
    for r in wikidata.records(path, fmt, opts, counts, tick):
        if isinstance(r, wikidata.Bad):
            _bad(report, r.line, r.why, r.qid)
            if report.bad >= STOP_AT and not skip_bad:
                raise _refuse(report, stopped=True)
            continue
        spool.write("\t".join([r.qid, r.type, str(r.line), *r.aliases]) + "\n")
        n += 1
    if report.bad and not skip_bad:
        raise _refuse(report)
    return n


def _unspool(spool) -> Iterator[wikidata.Record]:
    """The spooled records: tab-separated, which names cannot hold (``check_name`` makes
    every run of white space one space); the label is the first name."""
    for line in spool:
        qid, type_, at, *names = line.rstrip("\n").split("\t")
        yield wikidata.Record(qid, names[0], tuple(names), type_, int(at))


def _batches(records: Iterator[wikidata.Record]) -> Iterator[list[wikidata.Record]]:
    batch: list[wikidata.Record] = []
    for r in records:
        batch.append(r)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _write(
    index: Index,
    records: Iterator[wikidata.Record],
    total: int,
    actor: str,
    note: str,
    skip_bad: bool,
    report: ImportReport,
    progress: Progress | None,
) -> None:
    """One transaction for every batch, then the re-run. Each batch's log lines go to a
    side file first, and reach the log in one append just before the commit: a crash in
    the middle of the batches leaves the log as it was, not with part of the import."""
    side = index.journal_path.with_name("gazetteer.import.jsonl")
    with index.writing("gazetteer import"), WriterLease(index) as lease:
        con = lease.con()
        repair(con, index)
        _catch_up(index, lease)
        con = lease.con()
        before = entries(con)
        size = None
        try:
            side.write_bytes(b"")
            with transaction(con):
                done = 0
                for batch in _batches(records):
                    seq = journal.last_seq(con)
                    _stage_batch(con, batch, actor, note, skip_bad, report)
                    if report.bad and not skip_bad:
                        raise _refuse(report)
                    journal.append(side, journal.rows_since(con, seq))
                    kill_point("import.batch")
                    done += len(batch)
                    if progress:
                        progress("writing", done, total)
                _shared(con, report)
                mark_dirty(con)
                size = _append_file(index.journal_path, side)
                journal.record(con, index.journal_path)
                kill_point("journal.appended")
        except BaseException:  # rolled back, or the commit failed: the log takes them out
            if size is not None:
                journal.truncate(index.journal_path, size)
            raise
        finally:
            side.unlink(missing_ok=True)
        kill_point("gazetteer.logged")
        edit = apply(index, before, lease)
    report.version, report.units_rerun, report.units_carried = (
        edit.version,
        edit.units_rerun,
        edit.units_carried,
    )
    report.mentions, report.removed = edit.mentions, edit.removed


def _append_file(log: Path, side: Path) -> int:
    """Append the side file's lines to the log durably; returns the log's size before."""
    size = journal.append(log, [])  # drops a torn last line, as every append does
    with open(side, "rb") as src, open(log, "ab") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
        dst.flush()
        os.fsync(dst.fileno())
    return size


def _stage_batch(
    con: duckdb.DuckDBPyConnection,
    batch: list[wikidata.Record],
    actor: str,
    note: str,
    skip_bad: bool,
    report: ImportReport,
) -> None:
    """Add the batch's new entries and the new aliases of those that exist, each with its
    log line, in a few statements."""
    merged: dict[str, wikidata.Record] = {}
    for r in batch:  # the same QID twice in a batch: one entry with both sets of names
        if (had := merged.get(r.qid)) and had.type != r.type:
            _bad(
                report, r.line, f"{r.qid} is a {had.type} at line {had.line}, {r.type} here", r.qid
            )
        elif had:
            aliases = tuple(dict.fromkeys([*had.aliases, *r.aliases]))
            merged[r.qid] = wikidata.Record(r.qid, had.label, aliases, had.type, had.line)
        else:
            merged[r.qid] = r
    existing = {
        e: (t, a, gone)
        for e, t, a, gone in con.execute(
            "SELECT entry_id, type, aliases, retracted_at IS NOT NULL FROM gazetteer "
            "WHERE entry_id IN (SELECT unnest(?))",
            [list(merged)],
        ).fetchall()
    }
    new, grown = [], []
    for r in merged.values():
        if r.qid not in existing:
            new.append(r)
            continue
        type_, aliases, gone = existing[r.qid]
        if gone:
            report.retracted += 1
        elif type_ != r.type:
            _bad(report, r.line, f"{r.qid} is a {type_} in the gazetteer, {r.type} here", r.qid)
        elif added := [a for a in r.aliases if a not in aliases]:
            grown.append((r.qid, added))
        else:
            report.unchanged += 1
    if not skip_bad and report.bad:
        return  # the import is refused once the batch is counted: write nothing more
    now = datetime.now()
    if new:
        columns = {
            "n": range(len(new)),
            "entry_id": [r.qid for r in new],
            "name": [r.label for r in new],
            "type": [r.type for r in new],
            "aliases": ["\x1f".join(r.aliases) for r in new],
            "data": [
                json.dumps(
                    {
                        "aliases": list(r.aliases),
                        "ignore_case": False,
                        "name": r.label,
                        "type": r.type,
                    },
                    sort_keys=True,
                )
                for r in new
            ],
        }
        with staged(con, "new_entries", columns, frozenset({"n"})):
            con.execute(
                """INSERT INTO gazetteer
                   SELECT entry_id, name, type, string_split(aliases, chr(31)), false, false,
                          $1, NULL, $2, $3, NULL, NULL, NULL FROM new_entries""",
                [actor, note, now],
            )
            _log_rows(con, "new_entries", "add", actor, note, now)
        report.added += len(new)
    if grown:
        columns = {
            "n": range(len(grown)),
            "entry_id": [q for q, _ in grown],
            "added": ["\x1f".join(a) for _, a in grown],
            "data": [json.dumps({"aliases": a}) for _, a in grown],
        }
        with staged(con, "grown_entries", columns, frozenset({"n"})):
            con.execute(
                """UPDATE gazetteer SET aliases = list_concat(gazetteer.aliases,
                       string_split(g.added, chr(31))) FROM grown_entries g
                   WHERE gazetteer.entry_id = g.entry_id"""
            )
            _log_rows(con, "grown_entries", "alias", actor, note, now)
        report.merged += len(grown)


def _log_rows(
    con: duckdb.DuckDBPyConnection, table: str, action: str, actor: str, note: str, now: datetime
) -> None:
    con.execute(
        f"""INSERT INTO gazetteer_log
            SELECT (SELECT coalesce(max(seq), 0) FROM gazetteer_log)
                       + row_number() OVER (ORDER BY n),
                   entry_id, $1, $2, NULL, $3, data, $4 FROM {table}""",
        [action, actor, note, now],
    )


def _shared(con: duckdb.DuckDBPyConnection, report: ImportReport) -> None:
    """Aliases several current entries now share with no pin: names that link to none."""
    rows = con.execute(
        """SELECT lower(a) AS alias, list(DISTINCT entry_id ORDER BY entry_id) AS ids
           FROM (SELECT entry_id, unnest(aliases) AS a FROM gazetteer
                 WHERE retracted_at IS NULL)
           GROUP BY 1 HAVING count(DISTINCT entry_id) > 1 ORDER BY 1"""
    ).fetchall()
    pinned = pins(con)
    open_ = [(a, ids) for a, ids in rows if a not in pinned]
    report.shared_aliases = len(open_)
    report.shared = [{"alias": a, "entries": ids[:SHOWN]} for a, ids in open_[:SHOWN]]
