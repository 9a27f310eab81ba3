"""Search at scale: kbx beside SQLite FTS5, bm25s and Tantivy on the same 20k to 200k units.

What is compared, per corpus size, in one run (see scale_corpus.py for how the corpus is
remixed from real text, scale_build.py for the builds, scale_systems.py for the queries):

* **Build**: seconds, index size and peak RSS of each system's build, each in a child
  process. kbx's is its first ``index()`` of the corpus (rule-based recognizers, 2
  workers), made once and kept in the cache folder with its figures (so its date may be
  older than the run's); the peers are built in every run from the units kbx extracted.
* **Query latency**: p50 and p90 over queries, in ms, of each system's top 10, unfiltered
  and with three filters: an entity in about 1% of units, a date range, a path glob. Two
  query sets: SciFact claims and random 1-3 word queries from the pool's vocabulary. Each
  system runs in its own process; systems take turns on each query set, in a rotating
  order, ``--repeat`` times after a warm-up pass, and a query's latency is its median.
* **Growth**: each figure at every size, and its ratio from the smallest to the largest.

A script, not a test: it asserts nothing about speed. The cache folder (outside the
repository) keeps the sentence pool, the corpora and kbx's indexes between runs.

    .venv/bin/python benchmarks/scale.py [--eval ../shared/eval] [--cache /tmp/kbx-scale]
        [--sizes 20000,63000,200000] [--queries 50] [--repeat 3] [--write]
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import duckdb
from common import eval_arg, percentile, table, write_section
from scale_build import build_peer, export, filter_tables, kbx_index
from scale_corpus import load_pool, write_corpus
from scale_systems import FILTER_SQL, FILTERS, SYSTEMS, Paths, Worker

from kbx.analysis import QUERY_STOPWORDS

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "### Search at scale, figures"  # under the hand-written ## Search at scale
UNITS_PER_DOC = 4.71  # measured on the first 5,000 documents
SEED = 20261201


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def words(text: str) -> str:
    """The words every system is given: lower case, no function words, no punctuation."""
    return " ".join(w for w in re.findall(r"[^\W_]+", text.lower()) if w not in QUERY_STOPWORDS)


def query_sets(eval_dir: Path, pool: dict, n: int) -> dict[str, list[str]]:
    rng = random.Random(SEED)
    with open(eval_dir / "beir_scifact" / "queries.jsonl", encoding="utf-8") as f:
        claims = [words(json.loads(line)["text"]) for line in f]
    df: dict[str, int] = {}
    for docs in pool["sources"].values():
        for d in docs:
            for w in set(re.findall(r"[a-z]{3,}", " ".join(d).lower())):
                df[w] = df.get(w, 0) + 1
    vocab = sorted(w for w, c in df.items() if c >= 2 and w not in QUERY_STOPWORDS)
    return {
        f"claims ({n})": rng.sample([c for c in claims if c], n),
        f"1-3 words ({n})": [" ".join(rng.sample(vocab, rng.randint(1, 3))) for _ in range(n)],
    }


def prepare(size: int, args, pool: dict) -> tuple[Paths, dict]:
    """The corpus, kbx's index (cached) and the peers' indexes for one size; build figures."""
    cache = args.cache
    n_docs = math.ceil(size / UNITS_PER_DOC / 50) * 50  # 4,250, 13,400 and 42,500 documents
    root = cache / f"corpus-{n_docs}"
    write_corpus(root, n_docs, pool)
    log(f"{size}: corpus of {n_docs} documents; kbx index ...")
    built = {"kbx": kbx_index(root, cache / f"kbx-{n_docs}.duckdb", args.rebuild)}
    work = cache / f"run-{n_docs}"
    export(cache / f"kbx-{n_docs}.duckdb", work)
    paths = Paths(
        root,
        cache / f"kbx-{n_docs}.duckdb",
        work / "fts5.sqlite",
        work / "bm25s",
        work / "tantivy",
        work / "filters.sqlite",
        work / "units.parquet",
    )
    filter_tables(work, paths.filters)
    for name, path in (("FTS5", paths.fts5), ("bm25s", paths.bm25s), ("Tantivy", paths.tantivy)):
        log(f"{size}: {name} build ...")
        built[name] = build_peer(name, work, path)
    return paths, built


def selectivity(paths: Paths, units: int) -> dict[str, str]:
    """How many units each filter keeps, read from the peers' filter tables."""
    con = sqlite3.connect(":memory:")
    con.execute("ATTACH ? AS f", [str(paths.filters)])
    out = {"none": f"{units:,} (100%)"}
    for name, (sql, params) in FILTER_SQL.items():
        n = con.execute(f"SELECT count(DISTINCT unit) FROM ({sql})", params).fetchone()[0]
        out[name] = f"{n:,} ({100 * n / units:.1f}%)"
    return out


def latencies(paths: Paths, sets: dict[str, list[str]], repeat: int) -> tuple[dict, dict]:
    """``{(system, set, filter): (p50, p90)}`` and each query worker's peak RSS."""
    workers = {name: Worker(name, paths) for name in SYSTEMS}
    runs: dict[tuple, list[list[float]]] = {}
    names = list(workers)
    for rep in range(repeat + 1):  # the first pass warms up
        for f in FILTERS:
            for set_name, queries in sets.items():
                turn = names[rep % len(names) :] + names[: rep % len(names)]
                for name in turn:
                    ms = workers[name].run(queries, f)
                    if rep:
                        runs.setdefault((name, set_name, f), []).append(ms)
        log(f"  pass {rep} of {repeat} done")
    peaks = {name: w.stop() for name, w in workers.items()}
    out = {}
    for key, passes in runs.items():
        per_query = [statistics.median(col) for col in zip(*passes, strict=True)]
        out[key] = (percentile(per_query, 0.5), percentile(per_query, 0.9))
    return out, peaks


def size_tables(size: int, units: int, built: dict, lat: dict, peaks: dict, sets, sel) -> str:
    """The build and latency tables of one size."""
    fts = built["FTS5"]["seconds"]
    rows = [
        (
            name,
            f"{b['seconds']:.1f}",
            f"{b['seconds'] / fts:.1f}x",
            f"{b['mb']:.0f}",
            f"{b['peak_mb']:.0f}",
        )
        for name, b in built.items()
    ]
    out = [f"#### {units:,} units (target {size:,})\n"]
    out.append(
        table(["build", "seconds", "x FTS5", "index MB", "peak RSS MB"], rows)
        + f"\n\nkbx's index was built {built['kbx'].get('built_at', '?')} "
        f"(cached; {built['kbx'].get('postings', 0):,} postings).\n"
    )
    out.append("Units each filter keeps: " + "; ".join(f"{k} {v}" for k, v in sel.items()) + ".\n")
    for set_name in sets:
        heads = ["system"] + [f"{f} p50" for f in FILTERS] + [f"{f} p90" for f in FILTERS]
        body = []
        for name in SYSTEMS:
            p = [lat[(name, set_name, f)] for f in FILTERS]
            body.append([name] + [f"{a:.1f}" for a, _ in p] + [f"{b:.1f}" for _, b in p])
        ratio = ["kbx rank / FTS5"] + [
            f"{lat[('kbx rank (open index)', set_name, f)][i] / lat[('FTS5', set_name, f)][i]:.2f}"
            for i in (0, 1)
            for f in FILTERS
        ]
        out.append(f"Query latency, {set_name}, ms:\n\n" + table(heads, [*body, ratio]) + "\n")
    out.append(
        "Peak RSS of each query process, MB: "
        + "; ".join(f"{n} {v:.0f}" for n, v in peaks.items())
        + ".\n"
    )
    return "\n".join(out)


def growth_table(results: list[dict], sets) -> str:
    """Each figure at every size, and how it grew from the first size to the last."""
    heads = ["figure"] + [f"{r['units']:,} units" for r in results] + ["growth"]
    rows = []

    def add(label: str, values: list[float], fmt: str = "{:.1f}") -> None:
        growth = values[-1] / values[0] if values[0] else float("nan")
        rows.append([label, *(fmt.format(v) for v in values), f"{growth:.1f}x"])

    for name in results[0]["built"]:
        add(f"{name} build s", [r["built"][name]["seconds"] for r in results])
        add(f"{name} index MB", [r["built"][name]["mb"] for r in results], "{:.0f}")
        add(f"{name} build peak RSS MB", [r["built"][name]["peak_mb"] for r in results], "{:.0f}")
    set_name = next(iter(sets))
    for name in SYSTEMS:
        for f in FILTERS:
            add(
                f"{name}, {f}, p50 ms ({set_name})",
                [r["lat"][(name, set_name, f)][0] for r in results],
            )
    return table(heads, rows)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=Path("/tmp/kbx-scale"))
    p.add_argument("--sizes", default="20000,63000,200000", help="target units, comma-separated")
    p.add_argument("--queries", type=int, default=50, help="queries per set")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rebuild", action="store_true", help="build kbx's indexes again")
    p.add_argument("--write", action="store_true", help=f"write the section to {DOC.name}")
    args = p.parse_args()
    args.cache = args.cache.resolve()
    if REPO in (args.cache, *args.cache.parents):
        p.error("--cache must be outside the repository")
    started = time.perf_counter()
    load = os.getloadavg()[0]
    eval_dir = args.eval.resolve()
    pool = load_pool(eval_dir, args.cache)
    sets = query_sets(eval_dir, pool, args.queries)
    results, sections = [], []
    for size in map(int, args.sizes.split(",")):
        paths, built = prepare(size, args, pool)
        units = built["kbx"]["units"]
        log(f"{size}: queries ...")
        lat, peaks = latencies(paths, sets, args.repeat)
        sel = selectivity(paths, units)
        results.append({"units": units, "built": built, "lat": lat})
        sections.append(size_tables(size, units, built, lat, peaks, sets, sel))
    took = time.perf_counter() - started
    text = "\n".join(
        [
            f"{SECTION}\n",
            f"Command: `.venv/bin/python benchmarks/scale.py --sizes {args.sizes} "
            f"--queries {args.queries} --repeat {args.repeat}`. Date: {time.strftime('%Y-%m-%d')}. "
            f"DuckDB {duckdb.__version__}, SQLite {sqlite3.sqlite_version}; 1-minute load "
            f"average {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (a shared "
            f"2-core machine: read the ratios, not the milliseconds); {took:.0f} s.\n",
            *sections,
            "#### Growth\n",
            growth_table(results, sets),
        ]
    )
    print(text)
    if args.write:
        write_section(DOC, SECTION, text + "\n", "# Benchmarks\n")


if __name__ == "__main__":
    main()
