"""The scale benchmark's builds: kbx's index (cached between runs) and the peers' indexes.

Each build runs in a fresh child process (``spawn``), which reports its own seconds and
peak RSS (``ru_maxrss`` of itself and of its children, such as kbx's workers), so one
system's memory is never counted against another.

kbx's index of a corpus is built once with the rule-based recognizers (``kbx index``'s
own ``index()``, 2 workers) and kept in the cache folder with its build figures; a later
run reuses it, migrating an older schema in place as any kbx writer does (a newer one,
or ``--rebuild``, makes a new one). The peers
(FTS5, bm25s, Tantivy) are built in every run from the same units read back from kbx's
index: each unit's heading path and text, keyed by kbx's ``unit_id``. The filter tables the
peers get (which units name an entity, each unit's date intervals, its path) are read from
kbx's derived layer, so every system filters on the same facts.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import resource
import shutil
import sqlite3
import time
from pathlib import Path

import duckdb

UNITS_SQL = """SELECT u.unit_id, array_to_string(u.heading_path, ' / ') AS heading, u.text
               FROM units u ORDER BY u.unit_id"""
# The filter tables: what kbx's filters read, expanded to units.
LINKS_SQL = """SELECT DISTINCT l.entity_id AS entity, pl.unit_id AS unit
               FROM links l JOIN placements pl ON pl.doc_id = l.doc_id
                 AND (l.unit_id IS NULL OR l.unit_id = pl.unit_id)
               WHERE l.filter"""
DATES_SQL = """SELECT DISTINCT pl.unit_id AS unit, x.lo, x.hi
               FROM passage_dates x JOIN placements pl ON pl.doc_id = x.doc_id
                 AND (x.unit_id IS NULL OR x.unit_id = pl.unit_id)"""
PATHS_SQL = """SELECT DISTINCT pl.unit_id AS unit, d.path
               FROM placements pl JOIN documents d USING (doc_id)"""


def peak_mb() -> float:
    """This process's peak RSS in MB: VmHWM, which exec resets (``ru_maxrss`` would carry
    the spawning parent's peak into a spawned child)."""
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return round(kb / 1024, 1)


def workers_peak_mb() -> float:
    """The largest peak RSS among this process's finished children (kbx's workers)."""
    return round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)


def _run(conn, fn, args) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(("error", repr(e)))


def in_child(fn, *args):
    """``fn(*args)`` in a fresh spawned (non-daemon, so it may start workers) process."""
    ctx = mp.get_context("spawn")
    mine, theirs = ctx.Pipe()
    proc = ctx.Process(target=_run, args=(theirs, fn, args))
    proc.start()
    status, value = mine.recv()
    proc.join()
    if status != "ok":
        raise RuntimeError(f"{fn.__name__} failed in its child: {value}")
    return value


def size_mb(path: Path) -> float:
    if path.is_dir():
        return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 1)
    return round(path.stat().st_size / 1e6, 1)


# --- kbx ----------------------------------------------------------------------------------


def _kbx_build(root: str, db: str) -> dict:
    from common import rule_registry

    from kbx.indexing.ingest import index

    t = time.perf_counter()
    report = index(root, db=db, workers=2, registry=rule_registry())
    seconds = time.perf_counter() - t
    if report.failed:
        raise RuntimeError(f"kbx failed on {report.failed} files: {report.failures[:3]}")
    return {"seconds": round(seconds, 1), "peak_mb": peak_mb(), "workers_mb": workers_peak_mb()}


def kbx_index(root: Path, db: Path, rebuild: bool) -> dict:
    """kbx's index of ``root`` at ``db``, built unless a readable one is cached; its build
    figures (seconds, peak RSS, when) and its units."""
    from kbx.entities import facet_arrays
    from kbx.entities.build import settle
    from kbx.errors import SchemaError
    from kbx.store import postings_file
    from kbx.store.db import Index

    figures = db.with_suffix(".json")
    idx = Index.for_root(root, db)
    if not rebuild and figures.exists() and db.exists():
        try:
            with idx.writer() as con:  # migrates an older schema, as any kbx writer would,
                postings_file.refresh(con, db)  # maps the postings, as kbx index does,
                settle(con)  # and rebuilds a stale entity layer with its facets' arrays
                facet_arrays.refresh(con, db)
            with idx.reader() as con:
                con.execute("SELECT 1 FROM units LIMIT 1")
            return json.loads(figures.read_text())
        except SchemaError:
            pass  # from a newer kbx: build again
    for p in (db, figures, db.with_name(db.name + ".lock")):
        p.unlink(missing_ok=True)
    built = in_child(_kbx_build, str(root), str(db))
    con = duckdb.connect(str(db), read_only=True)
    built["units"] = con.execute("SELECT count(*) FROM units").fetchone()[0]
    built["postings"] = con.execute("SELECT count(*) FROM postings").fetchone()[0]
    con.close()
    built["mb"] = size_mb(db)
    built["built_at"] = time.strftime("%Y-%m-%d %H:%M")
    figures.write_text(json.dumps(built))
    return built


def export(db: Path, out: Path) -> None:
    """The units and filter tables of kbx's index as Parquet files for the peers."""
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), read_only=True)
    for name, sql in (
        ("units", UNITS_SQL),
        ("links", LINKS_SQL),
        ("dates", DATES_SQL),
        ("paths", PATHS_SQL),
    ):
        con.execute(f"COPY ({sql}) TO '{out / name}.parquet' (FORMAT parquet)")
    con.close()


def read_units(folder: Path) -> list[tuple[int, str, str]]:
    con = duckdb.connect()
    rows = con.execute(f"SELECT * FROM '{folder / 'units.parquet'}'").fetchall()
    con.close()
    return rows


def filter_tables(folder: Path, path: Path) -> None:
    """The peers' filter tables in a SQLite file, indexed as a user of SQLite would."""
    path.unlink(missing_ok=True)
    src = duckdb.connect()
    con = sqlite3.connect(path)
    con.executescript(
        """CREATE TABLE links (entity TEXT, unit INTEGER);
           CREATE TABLE dates (unit INTEGER, lo TEXT, hi TEXT);
           CREATE TABLE paths (unit INTEGER, path TEXT);"""
    )
    for name in ("links", "dates", "paths"):
        rows = src.execute(f"SELECT * FROM '{folder / name}.parquet'").fetchall()
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(
                f"INSERT INTO {name} VALUES ({marks})",
                [tuple(str(v) if hasattr(v, "isoformat") else v for v in r) for r in rows],
            )
    con.executescript(
        """CREATE INDEX links_entity ON links (entity, unit);
           CREATE INDEX dates_lo ON dates (lo, hi, unit);
           CREATE INDEX paths_path ON paths (path, unit);"""
    )
    con.commit()
    con.close()
    src.close()


# --- peers --------------------------------------------------------------------------------


def _fts5_build(folder: str, path: str) -> dict:
    rows = read_units(Path(folder))
    t = time.perf_counter()
    con = sqlite3.connect(path)
    con.execute("CREATE VIRTUAL TABLE u USING fts5(heading, text, tokenize='porter unicode61')")
    with con:
        con.executemany("INSERT INTO u(rowid, heading, text) VALUES (?, ?, ?)", rows)
    con.close()
    return {"seconds": round(time.perf_counter() - t, 1), "peak_mb": peak_mb()}


def _bm25s_build(folder: str, path: str) -> dict:
    import bm25s
    import Stemmer

    rows = read_units(Path(folder))
    t = time.perf_counter()
    tokens = bm25s.tokenize(
        [f"{h}\n{x}" for _, h, x in rows],
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        show_progress=False,
    )
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    retriever.save(path)
    return {"seconds": round(time.perf_counter() - t, 1), "peak_mb": peak_mb()}


def tantivy_schema():
    import tantivy

    b = tantivy.SchemaBuilder()
    b.add_integer_field("uid", stored=True, indexed=True, fast=True)
    b.add_text_field("heading", tokenizer_name="en_stem")
    b.add_text_field("text", tokenizer_name="en_stem")
    return b.build()


def _tantivy_build(folder: str, path: str) -> dict:
    import tantivy

    rows = read_units(Path(folder))
    t = time.perf_counter()
    index = tantivy.Index(tantivy_schema(), path=path)
    writer = index.writer(heap_size=256_000_000, num_threads=2)
    for uid, heading, text in rows:
        writer.add_document(tantivy.Document(uid=uid, heading=heading, text=text))
    writer.commit()
    writer.wait_merging_threads()
    return {"seconds": round(time.perf_counter() - t, 1), "peak_mb": peak_mb()}


PEER_BUILDS = {"FTS5": _fts5_build, "bm25s": _bm25s_build, "Tantivy": _tantivy_build}


def build_peer(name: str, folder: Path, path: Path) -> dict:
    """Build one peer's index at ``path`` from the exported units, in a child process."""
    if path.is_dir():
        shutil.rmtree(path)
    path.unlink(missing_ok=True)
    if name == "Tantivy":
        path.mkdir(parents=True)
    figures = in_child(PEER_BUILDS[name], str(folder), str(path))
    figures["mb"] = size_mb(path)
    return figures
