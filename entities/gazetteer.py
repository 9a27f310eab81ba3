"""The gazetteer in the store: entries with provenance, an append-only log, and edits that
re-run the gazetteer recognizer only where they can change what it finds.

The recognizer's version is a digest of the entries, so an edit makes every unit's run
stale. But a unit whose text contains none of the aliases that changed (compared case-
insensitively, a superset of any match) would get the same mentions again: its run and
mentions are carried to the new version in one statement, and only the rest are redone.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from kbx.analysis import Analyzer
from kbx.annotate.run import missing, recognize
from kbx.annotate.setup import NAME, entries, recognizer
from kbx.entities.build import repair, settle
from kbx.errors import BadArgument
from kbx.gazetteer.entries import Entry, check_id, check_name, check_type, slug, version_of
from kbx.gazetteer.protect import damage
from kbx.recognizers.registry import Registry
from kbx.source.cite import read_regular, resolve
from kbx.store import journal
from kbx.store.db import Index, WriterLease, kill_point, set_meta
from kbx.store.postings import analyzer_of, rebuild_postings
from kbx.store.transaction import transaction


@dataclass
class EditReport:
    """What an edit changed and what it cost."""

    entry_ids: list[str]
    version: str
    units_rerun: int = 0
    units_carried: int = 0
    mentions: int = 0
    removed: int = 0
    seconds: float = 0.0
    protected: list[dict] = field(default_factory=list)


def default_actor() -> str:
    return f"user:{os.environ.get('USER') or os.environ.get('USERNAME') or 'unknown'}"


def _log(con, entry_id: str, action: str, actor: str, source=None, note=None, data=None, at=None):
    con.execute(  # seq follows the log, which a replay (store/journal.py) may have filled
        "INSERT INTO gazetteer_log SELECT coalesce(max(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ? "
        "FROM gazetteer_log",
        [
            entry_id,
            action,
            actor,
            source,
            note,
            json.dumps(data or {}, sort_keys=True),
            at or datetime.now(),
        ],
    )


def _source(index: Index, con: duckdb.DuckDBPyConnection, source: str | None) -> str | None:
    """The root-relative path of an indexed document, or an error."""
    if source is None:
        return None
    _, rel = resolve(index.root, source)
    if not con.execute("SELECT 1 FROM documents WHERE path = ?", [rel]).fetchone():
        raise BadArgument(f"--source {source}: not an indexed document; run `kbx index` first")
    return rel


def _bound(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, str]]:
    """Every current alias (case-folded) → (entry ID, name)."""
    out = {}
    for e in entries(con):
        for a in e.aliases:
            out[a.casefold()] = (e.entry_id, e.name)
    return out


def _new_id(con: duckdb.DuckDBPyConnection, name: str) -> str:
    base, n = f"gz:{slug(name)}", 1
    taken = {r[0] for r in con.execute("SELECT entry_id FROM gazetteer").fetchall()}
    candidate = base
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _stage(
    index: Index,
    con: duckdb.DuckDBPyConnection,
    name: str,
    type_: str,
    aliases: list[str],
    entry_id: str | None,
    actor: str,
    source: str | None,
    note: str | None,
    ignore_case: bool,
    pin: bool = False,
) -> str:
    """Validate one addition and write it with its log line (inside the caller's
    transaction); an ID that exists gains the new aliases. With ``pin``, its names may be
    other entries' aliases too, and this entry wins them (a ``pin`` line in the log)."""
    name = check_name(name)
    type_ = check_type(type_)
    names = list(dict.fromkeys([name, *(check_name(a, "alias") for a in aliases)]))
    actor = check_name(actor, "--by")
    rel = _source(index, con, source)
    existing = None
    if entry_id:
        entry_id = check_id(entry_id)
        existing = con.execute(
            "SELECT type, aliases, retracted_at FROM gazetteer WHERE entry_id = ?", [entry_id]
        ).fetchone()
        if existing and existing[0] != type_:
            raise BadArgument(f"{entry_id} is a {existing[0]}, not a {type_}")
    bound = {} if pin else _bound(con)
    for a in names:
        owner = bound.get(a.casefold())
        if owner and owner[0] != entry_id:
            raise BadArgument(f"{a!r} is already an alias of {owner[0]} ({owner[1]})")
    if existing:
        merged = list(dict.fromkeys([*existing[1], *names]))
        con.execute("UPDATE gazetteer SET aliases = ? WHERE entry_id = ?", [merged, entry_id])
        if existing[2] is not None:  # an ID people search by (Q312) is restored, not lost
            con.execute(
                "UPDATE gazetteer SET retracted_at = NULL, retracted_by = NULL, why = NULL "
                "WHERE entry_id = ?",
                [entry_id],
            )
            _log(con, entry_id, "restore", actor, rel, note, {"aliases": names})
        elif not pin or len(merged) > len(existing[1]):
            _log(con, entry_id, "alias", actor, rel, note, {"aliases": names})
        if pin:
            _log(con, entry_id, "pin", actor, rel, note, {"aliases": names})
        return entry_id
    entry_id = entry_id or _new_id(con, name)
    con.execute(
        "INSERT INTO gazetteer VALUES (?, ?, ?, ?, ?, false, ?, ?, ?, ?, NULL, NULL, NULL)",
        [entry_id, name, type_, names, ignore_case, actor, rel, note, now := datetime.now()],
    )
    _log(
        con,
        entry_id,
        "add",
        actor,
        rel,
        note,
        {"name": name, "type": type_, "aliases": names, "ignore_case": ignore_case},
        at=now,
    )
    if pin:
        _log(con, entry_id, "pin", actor, rel, note, {"aliases": names}, at=now)
    return entry_id


def _edit(index: Index, stage) -> EditReport:
    """Run ``stage(con) -> entry IDs`` in one transaction, then apply the change; the file
    is opened once for both."""
    started = time.monotonic()
    with index.writing("gazetteer edit"), WriterLease(index) as lease:
        con = lease.con()
        repair(con, index)
        _catch_up(index, lease)
        con = lease.con()  # a catch-up may have let the file go
        before = entries(con)
        with journal.journaled(con, index.journal_path):
            ids = stage(con)
        kill_point("gazetteer.logged")
        report = apply(index, before, lease)
    report.entry_ids = ids
    report.seconds = time.monotonic() - started
    return report


def _catch_up(index: Index, lease: WriterLease) -> None:
    """Bring the gazetteer's runs level with its entries before a new edit, in case an
    earlier edit was killed between its commit and its re-run (the edit then refused, as a
    duplicate, would otherwise leave them behind)."""
    current = recognizer(lease.con())
    if missing(lease.con(), current, limit=1, keys_only=True):
        recognize(index, Registry([current]), workers=1, lease=lease)
        settle(lease.con())  # the repair before this settled everything else


def add(
    index: Index,
    name: str,
    type_: str,
    aliases: list[str] | None = None,
    entry_id: str | None = None,
    actor: str | None = None,
    source: str | None = None,
    note: str | None = None,
    ignore_case: bool = False,
    pin: bool = False,
) -> EditReport:
    """Add an entry (or aliases to the entry ``entry_id``), recorded with who and where;
    ``pin`` settles a shared alias (two imported QIDs called "Apple") on this entry."""
    return _edit(
        index,
        lambda con: [
            _stage(
                index,
                con,
                name,
                type_,
                aliases or [],
                entry_id,
                actor or default_actor(),
                source,
                note,
                ignore_case,
                pin,
            )
        ],
    )


def retract(index: Index, entry_id: str, actor: str, why: str) -> EditReport:
    """Retract an entry: its mentions leave search; the entry and its log stay."""
    actor, why = check_name(actor, "--by"), check_name(why, "--why")

    def stage(con):
        row = con.execute(
            "SELECT retracted_at FROM gazetteer WHERE entry_id = ?", [entry_id]
        ).fetchone()
        if not row:
            raise BadArgument(f"no gazetteer entry {entry_id!r}; see `kbx gazetteer list`")
        if row[0] is not None:
            raise BadArgument(f"{entry_id} is already retracted")
        con.execute(
            "UPDATE gazetteer SET retracted_at = ?, retracted_by = ?, why = ? WHERE entry_id = ?",
            [now := datetime.now(), actor, why, entry_id],
        )
        _log(con, entry_id, "retract", actor, note=why, at=now)
        return [entry_id]

    return _edit(index, stage)


def import_entries(index: Index, path: Path, actor: str | None = None) -> EditReport:
    """Add every entry of a JSONL or CSV file (fields as ``export`` writes them) in one
    transaction: one bad line and nothing is added, with the line named. Retracted entries
    in the file are skipped. Fields are type-checked here, since a file can hold any JSON."""
    rows = _read_rows(path)
    actor = actor or default_actor()

    def text(row: dict, key: str, where: str) -> str | None:
        value = row.get(key)
        if value is None or isinstance(value, str):
            return value or None
        raise BadArgument(f"{where}: {key} is {type(value).__name__}, not text")

    def stage(con):
        ids = []
        for n, (line, row) in enumerate(rows, start=1):
            where = f"{path.name}, entry {n}" + (f" (line {line})" if line != n else "")
            if not isinstance(row, dict):
                raise BadArgument(f"{where}: not an object with name and type")
            if row.get("retracted_at"):
                continue  # exported history: a retracted entry is not brought back
            aliases = row.get("aliases") or []
            if isinstance(aliases, str):
                aliases = [a for a in aliases.split("|") if a.strip()]
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise BadArgument(f"{where}: aliases must be a list of text or one text a|b")
            try:
                ids.append(
                    _stage(
                        index,
                        con,
                        text(row, "name", where) or "",
                        text(row, "type", where) or "",
                        aliases,
                        text(row, "entry_id", where) or text(row, "id", where),
                        text(row, "added_by", where) or actor,
                        text(row, "source", where),
                        text(row, "note", where),
                        str(row.get("ignore_case", "")).lower() in ("true", "1", "yes"),
                    )
                )
            except BadArgument as e:
                if str(e).startswith(where):
                    raise
                raise BadArgument(f"{where}: {e}") from None
        return ids

    return _edit(index, stage)


def _read_rows(path: Path) -> list[tuple[int, object]]:
    """The file's rows, each with the line it ends on; anything unreadable is a BadArgument
    naming the file and line (not UTF-8, not JSON, nested too deep, a CSV field too long)."""
    data = read_regular(path, str(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise BadArgument(
            f"{path.name}, line {line}: not UTF-8 (byte {data[e.start]:#04x}); save it as UTF-8"
        ) from None
    if path.suffix.lower() == ".csv":
        lines = 0  # read so far: csv's own line_num lags behind on an error

        def counted():
            nonlocal lines
            for line in io.StringIO(text, newline=""):
                lines += 1
                yield line

        rows: list[tuple[int, object]] = []
        try:
            rows.extend((lines, row) for row in csv.DictReader(counted()))
        except csv.Error as e:
            raise BadArgument(f"{path.name}, line {lines}: not CSV ({e})") from None
        return rows
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as e:
                raise BadArgument(f"{path.name}, line {n}: not JSON ({e.msg})") from None
            except RecursionError:
                raise BadArgument(f"{path.name}, line {n}: JSON nested too deep") from None
            except ValueError as e:  # an integer over Python's 4300-digit limit
                why = str(e).split(":")[0]
                raise BadArgument(f"{path.name}, line {n}: not usable JSON ({why})") from None
    return rows


EXPORT_FIELDS = [
    "entry_id",
    "name",
    "type",
    "aliases",
    "ignore_case",
    "protected",
    "added_by",
    "source",
    "note",
    "added_at",
    "retracted_at",
    "retracted_by",
    "why",
]


def listing(index: Index, retracted: bool = False) -> list[dict]:
    """Entries with their provenance, as ``list`` and ``export`` show them."""
    with index.reader() as con:
        rows = con.execute(
            f"SELECT {', '.join(EXPORT_FIELDS)} FROM gazetteer "
            f"{'' if retracted else 'WHERE retracted_at IS NULL'} ORDER BY entry_id"
        ).fetchall()
    return [dict(zip(EXPORT_FIELDS, r, strict=True)) for r in rows]


def export(index: Index, fmt: str = "jsonl") -> str:
    """Every entry, retracted ones included, as JSONL or CSV."""
    rows = listing(index, retracted=True)
    if fmt == "jsonl":
        return "".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in rows)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, EXPORT_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(r | {"aliases": "|".join(r["aliases"])})
        return buf.getvalue()
    raise BadArgument(f"unknown format {fmt!r}; choose jsonl or csv")


def show(index: Index, entry_id: str) -> dict:
    """One entry and its full history."""
    with index.reader() as con:
        row = con.execute(
            f"SELECT {', '.join(EXPORT_FIELDS)} FROM gazetteer WHERE entry_id = ?", [entry_id]
        ).fetchone()
        if not row:
            raise BadArgument(f"no gazetteer entry {entry_id!r}; see `kbx gazetteer list`")
        log = con.execute(
            "SELECT seq, action, actor, source, note, data, logged_at FROM gazetteer_log "
            "WHERE entry_id = ? ORDER BY seq",
            [entry_id],
        ).fetchall()
    keys = ["seq", "action", "by", "source", "note", "data", "at"]
    return dict(zip(EXPORT_FIELDS, row, strict=True)) | {
        "log": [dict(zip(keys, r, strict=True)) | {"data": json.loads(r[5])} for r in log]
    }


def _changed_aliases(before: list[Entry], after: list[Entry]) -> tuple[list[str], list[str]]:
    """Aliases whose matching (entity, type or case rule) differs between the two sets:
    those matched as written, and those matched in any case (lower-cased)."""

    def keyed(es):
        return {
            (a, e.entry_id, e.type, e.ignore_case, a.lower() in e.pinned)
            for e in es
            for a in e.aliases
        }

    changed = keyed(before) ^ keyed(after)
    exact = sorted({a for a, _, _, folded, _ in changed if not folded})
    folded = sorted({a for a, _, _, folded, _ in changed if folded})  # lowered in SQL, as text is
    return exact, folded


# Past this many changed aliases (an import), testing every unit for each of them costs
# more than matching every unit again in one Aho-Corasick pass: nothing is carried.
CARRY_LIMIT = 2_000


def apply(index: Index, before: list[Entry], lease: WriterLease) -> EditReport:
    """Bring the gazetteer's runs to its new version: carry the units no changed alias can
    touch, re-run the rest, then refresh the entity layer."""
    con = lease.con()
    after = recognizer(con)
    old = version_of(before)  # the digest alone: no automaton built for it
    exact, folded = _changed_aliases(before, after.entries)
    if len(exact) + len(folded) > CARRY_LIMIT:
        exact, folded = [""], []  # "" is in every text: no unit is carried
    with transaction(con):
        carried = con.execute(
            """UPDATE runs SET version = ? WHERE recognizer = ? AND version = ? AND error IS NULL
               AND unit_hash IN (
                   SELECT unit_hash FROM units
                   WHERE NOT coalesce(list_bool_or([contains(text, a) FOR a IN ?]), false)
                     AND NOT coalesce(
                         list_bool_or([contains(lower(text), lower(a)) FOR a IN ?]), false))""",
            [after.info.version, NAME, old, exact, folded],
        ).fetchone()[0]
        con.execute(
            """UPDATE mentions SET version = ? WHERE recognizer = ? AND version = ?
               AND unit_hash IN (SELECT unit_hash FROM runs
                                 WHERE recognizer = ? AND version = ?)""",
            [after.info.version, NAME, old, NAME, after.info.version],
        )
    kill_point("gazetteer.carried")
    (done,) = recognize(index, Registry([after]), workers=1, lease=lease)
    kill_point("gazetteer.rerun")
    settle(lease.con())
    return EditReport([], after.info.version, done.units, carried, done.mentions, done.removed)


def check(index: Index, protect: bool = True) -> list[dict]:
    """Entries whose names the analysis chain damages; with ``protect``, their words are
    kept whole from now on and the postings of the units that hold them are rebuilt."""
    with index.writing("gazetteer check"), index.writer() as con:
        repair(con, index)
        analyzer = analyzer_of(con)
        plain = Analyzer(analyzer.stemmer)

        def df(term: str) -> int:
            row = con.execute(
                "SELECT count(*) FROM postings JOIN terms USING (term_id) WHERE term = ?", [term]
            ).fetchone()
            return row[0]

        found = []
        for e in entries(con):
            for name in e.aliases:
                for d in damage(name, plain, df):
                    found.append({"entry_id": e.entry_id, "name": name} | asdict(d))
        if not protect or not found:
            return found
        words = sorted({f["word"] for f in found} | analyzer.protected)
        with journal.journaled(con, index.journal_path):
            set_meta(con, "protected", json.dumps(words))
            con.execute(
                "UPDATE gazetteer SET protected = true WHERE list_contains(?, entry_id)",
                [sorted({f["entry_id"] for f in found})],
            )
            for entry_id in sorted({f["entry_id"] for f in found}):
                _log(con, entry_id, "protect", "kbx:check", data={"words": words})
        units = [
            u
            for (u,) in con.execute(
                "SELECT unit_id FROM units WHERE list_bool_or([contains(lower(strip_accents("
                "text || ' ' || array_to_string(heading_path, ' '))), w) FOR w IN ?])",
                [[f["word"] for f in found]],
            ).fetchall()
        ]
        rebuild_postings(con, Analyzer(analyzer.stemmer, frozenset(words)), units)
    return found
