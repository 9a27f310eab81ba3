"""Search speed on the Node.js corpus: kbx beside SQLite FTS5 and bm25s, building and querying.

What is compared, and why:

* **Build** - kbx's first index of the corpus (walk, extract, analyze, write DuckDB; a fresh
  file per repetition) beside an FTS5 build (``porter unicode61``, one transaction, a fresh
  SQLite file) and a bm25s build (English stopwords, Snowball stemmer: tokenize and index)
  of the same unit texts read back from the kbx index. The peers get extracted text for
  free, so the ratio is an upper bound on what kbx's extraction and bookkeeping cost.
* **Query latency** - over the 40 probe questions and 100 random 1-3 word queries drawn
  (fixed seed) from the corpus vocabulary: kbx ``search(k=8, exact=0)`` end to end (opening
  the index, ranking, materializing cited passages with snippets), kbx ``rank`` alone on an
  open connection (analysis and BM25, top 10), FTS5 top 10 (``ORDER BY rank LIMIT 10``, the
  query an OR of quoted tokens), and bm25s ``retrieve(k=10)`` (query tokenizing included).
* **Filtered** - the same queries restricted to ``blog/vulnerability/*``: kbx ``rank`` with
  the path filter as ``kbx search --path`` compiles it, FTS5 with the path in an UNINDEXED
  column (one row per placement) and ``AND path GLOB ...``.

Every system gets one warm-up pass over a query set; then the whole set runs ``--repeat``
times, each query's latency is the median of its runs, and the table gives the p50 and p90
over queries, in milliseconds. A script, not a test: it asserts nothing about speed.

    .venv/bin/python benchmarks/search_speed.py [--eval ../shared/eval] [--repeat 3]
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bm25s
import duckdb
import Stemmer
from common import (
    NODEJS,
    build_kbx,
    eval_arg,
    fts5_or_query,
    load_questions,
    percentile,
    table,
    timed,
)

from kbx.search.bm25 import rank
from kbx.search.filters import Filters, compile_filters
from kbx.search.search import search
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

GLOB = "blog/vulnerability/*"
SEED = 20261130
N_RANDOM = 100
Query = Callable[[str], object]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def mb(path: Path) -> float:
    return path.stat().st_size / 1e6


# --- builds ----------------------------------------------------------------------------------


def fts5_build(path: Path, texts: list[str]) -> float:
    """Seconds to build an on-disk FTS5 table of ``texts`` in one transaction."""
    path.unlink(missing_ok=True)
    t = time.perf_counter()
    con = sqlite3.connect(path)
    con.execute("CREATE VIRTUAL TABLE u USING fts5(text, tokenize='porter unicode61')")
    with con:
        con.executemany("INSERT INTO u(text) VALUES (?)", ((x,) for x in texts))
    con.close()
    return time.perf_counter() - t


def bm25s_build(texts: list[str]) -> tuple[bm25s.BM25, float]:
    """A bm25s retriever of ``texts`` (tokenized as its README does) and the seconds taken."""
    t = time.perf_counter()
    tokens = bm25s.tokenize(
        texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
    )
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    return retriever, time.perf_counter() - t


def builds(root: Path, tmp: Path, repeat: int) -> tuple[str, Path, list[str], bm25s.BM25]:
    """The build table, the kbx index to query, its unit texts, and a bm25s retriever."""
    kbx_s = []
    for i in range(repeat):
        db = tmp / f"kbx{i}.duckdb"
        kbx_s.append(build_kbx(root, db, "snowball"))
        log(f"build: kbx {kbx_s[-1]:.1f} s")
    with Index.for_root(root, db).reader() as con:
        rows = con.execute("SELECT unit_id, text FROM units ORDER BY unit_id").fetchall()
        texts = [r[1] for r in rows]
    fts_path = tmp / "fts5.sqlite"
    fts_s = [fts5_build(fts_path, texts) for _ in range(repeat)]
    retriever, bm_s = None, []
    for _ in range(repeat):
        retriever, s = bm25s_build(texts)
        bm_s.append(s)
    fts = statistics.median(fts_s)
    rows = [
        ("kbx index (first, workers=2)", statistics.median(kbx_s), f"{mb(db):.1f}"),
        ("FTS5 build, same unit texts", fts, f"{mb(fts_path):.1f}"),
        ("bm25s tokenize + index, same texts", statistics.median(bm_s), "-"),
    ]
    out = table(
        ["system", "seconds", "index MB", "x FTS5"],
        [(n, f"{s:.2f}", size, f"{s / fts:.1f}x") for n, s, size in rows],
    )
    head = f"Build ({len(texts):,} units; median of {repeat}):\n\n"
    return head + out, db, texts, retriever


# --- queries ---------------------------------------------------------------------------------


def random_queries(texts: list[str], n: int = N_RANDOM, seed: int = SEED) -> list[str]:
    """``n`` queries of 1-3 words drawn uniformly from the corpus vocabulary (alphabetic
    words of 3+ letters found in at least two units)."""
    df: dict[str, int] = {}
    for t in texts:
        for w in set(re.findall(r"[a-z]{3,}", t.lower())):
            df[w] = df.get(w, 0) + 1
    vocab = sorted(w for w, c in df.items() if c >= 2)
    rng = random.Random(seed)
    return [" ".join(rng.sample(vocab, rng.randint(1, 3))) for _ in range(n)]


def latencies(fn: Query, queries: list[str], repeat: int) -> list[float]:
    """Per-query median milliseconds over ``repeat`` passes, after one warm-up pass."""
    for q in queries:
        fn(q)
    runs = [[timed(lambda q=q: fn(q)) * 1000 for q in queries] for _ in range(repeat)]
    return [statistics.median(col) for col in zip(*runs, strict=True)]


def fts5_query_table(path: Path, idx: Index) -> sqlite3.Connection:
    """An on-disk FTS5 table with one row per placement (unit text and document path), so
    that a path restriction is exact; opened for querying."""
    with idx.reader() as kcon:
        rows = kcon.execute(
            "SELECT u.text, d.path FROM placements pl JOIN units u USING (unit_id) "
            "JOIN documents d USING (doc_id)"
        ).fetchall()
    con = sqlite3.connect(path)
    con.execute(
        "CREATE VIRTUAL TABLE up USING fts5(text, path UNINDEXED, tokenize='porter unicode61')"
    )
    with con:
        con.executemany("INSERT INTO up VALUES (?, ?)", rows)
    return con


def systems(
    idx: Index, kcon: duckdb.DuckDBPyConnection, fts: sqlite3.Connection, bm: bm25s.BM25
) -> dict[str, Query]:
    """The timed query functions, by name."""
    an = analyzer_of(kcon)
    only = compile_filters(kcon, Filters(path=GLOB))
    stemmer = Stemmer.Stemmer("english")

    def fts5(q: str, where: str = "") -> list:
        m = fts5_or_query(q)
        sql = f"SELECT rowid FROM up WHERE up MATCH ? {where} ORDER BY rank LIMIT 10"
        return fts.execute(sql, [m]).fetchall() if m else []

    def bm25s_top(q: str) -> object:
        tokens = bm25s.tokenize(
            [q], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )
        if not tokens[0]:
            return None
        return bm.retrieve(tokens, k=10, show_progress=False)

    return {
        "kbx search (k=8, exact=0), end to end": lambda q: search(idx, q, k=8, exact=0),
        "kbx rank, top 10": lambda q: rank(kcon, an.query(q), limit=10),
        "FTS5 top 10": fts5,
        "bm25s retrieve k=10": bm25s_top,
        f"kbx rank, top 10, path {GLOB}": lambda q: rank(kcon, an.query(q), only, limit=10),
        f"FTS5 top 10, path {GLOB}": lambda q: fts5(q, f"AND path GLOB '{GLOB}'"),
    }


def latency_table(fns: dict[str, Query], sets: dict[str, list[str]], repeat: int) -> str:
    rows = []
    for name, fn in fns.items():
        row: list = [name]
        for qs in sets.values():
            ms = latencies(fn, qs, repeat)
            row += [f"{percentile(ms, 0.5):.2f}", f"{percentile(ms, 0.9):.2f}"]
        rows.append(row)
        log(f"query: {name}")
    heads = ["system"] + [f"{s} {p} ms" for s in sets for p in ("p50", "p90")]
    return table(heads, rows)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="repetitions (builds and query sets)")
    args = p.parse_args()
    root = args.eval.resolve() / NODEJS
    started, load = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kbx-speed-") as tmp:
        build_md, db, texts, bm = builds(root, Path(tmp), args.repeat)
        questions = [q.text for q in load_questions(args.eval.resolve())]
        sets = {
            f"questions ({len(questions)})": questions,
            f"random 1-3 words ({N_RANDOM})": random_queries(texts),
        }
        idx = Index.for_root(root, db)
        fts = fts5_query_table(Path(tmp) / "fts5_paths.sqlite", idx)
        with idx.reader() as kcon:
            lat_md = latency_table(systems(idx, kcon, fts, bm), sets, args.repeat)
        fts.close()
    print("### Search speed, Node.js corpus\n")
    print(build_md)
    print(f"\nQuery latency (per-query median of {args.repeat} passes after a warm-up):\n")
    print(lat_md)
    print(
        f"\nTotal run time: {time.perf_counter() - started:.0f} s; 1-minute load average "
        f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (2 cores)"
    )


if __name__ == "__main__":
    main()
