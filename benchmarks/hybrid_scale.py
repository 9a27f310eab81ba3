"""What each ranking mode costs at scale (issue 17): ``kbx search`` by bm25, dense and
hybrid on the 200k-unit scale corpus, warm (a library call, as a server makes) and cold (a
``kbx search`` process), unfiltered and with the scale benchmark's three filters.

The corpus and kbx's index are scale.py's (built once and cached; see scale_corpus.py).
Embedding 200,000 units with the packaged model would take hours on two cores, so the
index is copied and given stand-in vectors: ``--windows`` random vectors a unit (Node.js
averages 2.6, SciFact 2.0), written under the packaged model's name and version exactly as
``kbx embed`` writes its own, and the matrix exported. The ranking's cost does not depend
on the numbers in the vectors, only on their count; the query's vector is the real model's.
The rankings themselves mean nothing here (docs/BENCHMARKS.md has the quality figures).

Warm: every query of both query sets (SciFact claims and 1-3 random words, as scale.py
draws them) in each mode and filter, ``--repeat`` passes after a warm-up, modes taking
turns; p50 and p90 over the queries of each one's median. Cold: ``--cold`` queries of each
set as fresh ``kbx search`` processes, each mode unfiltered and with the entity filter,
taking turns; medians of wall time.

    .venv/bin/python benchmarks/hybrid_scale.py [--eval ../shared/eval] [--cache /tmp/kbx-scale]
        [--size 200000] [--windows 2] [--queries 20] [--repeat 3] [--cold 5]
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import eval_arg, percentile, table
from scale import UNITS_PER_DOC, log, query_sets
from scale_build import kbx_index
from scale_corpus import ENTITY, GLOB, load_pool, write_corpus
from scale_systems import AFTER, BEFORE

from kbx import api
from kbx.indexing.ingest import refresh_mapped
from kbx.store import arrays
from kbx.vectors import matrix
from kbx.vectors.model import packaged

MODES = ("bm25", "dense", "hybrid")
FILTERS = {
    "none": (None, []),
    "entity": (api.Filters(entities=[ENTITY]), ["--entity", ENTITY]),
    "date": (api.Filters(after=AFTER, before=BEFORE), ["--after", AFTER, "--before", BEFORE]),
    "path": (api.Filters(path=GLOB), ["--path", GLOB]),
}
KBX = Path(sys.executable).with_name("kbx")


def embedded_copy(root: Path, db: Path, windows: int) -> tuple[Path, int]:
    """A copy of the index ``db`` with stand-in vectors of the packaged model (made once),
    its mapped files written as ``kbx index`` writes them; and its vector count."""
    enc = packaged()
    copy = db.with_name(f"{db.stem}-embedded-{windows}.duckdb")
    idx = api.Index.for_root(root, copy)
    if copy.exists():  # a run stopped before its vectors were in starts again
        with idx.reader() as con:
            if not con.execute("SELECT count(*) FROM vectors").fetchone()[0]:
                copy.unlink()
    if not copy.exists():
        tmp = copy.with_suffix(".tmp")
        shutil.copyfile(db, tmp)
        os.replace(tmp, copy)
        with idx.writer() as con:
            refresh_mapped(con, copy)
            con.execute(
                f"""INSERT INTO vectors SELECT u.unit_hash, ?, ?, list_transform(
                      range({enc.dim}), lambda x: (random() - 0.5)::FLOAT), now()
                    FROM (SELECT DISTINCT unit_hash FROM units) u, range({windows}) w""",
                [enc.name, enc.version],
            )
            matrix.bump(con)
            matrix.export(con, copy, enc.name, enc.version)
    with idx.reader() as con:
        (n,) = con.execute("SELECT count(*) FROM vectors").fetchone()
    return copy, n


def warm(idx: api.Index, sets: dict[str, list[str]], repeat: int) -> dict[tuple, tuple]:
    """``{(set, filter, mode): (p50, p90)}`` of warm library calls, in ms."""
    arrays.stay_warm()  # as a server: mapped files at any size, the model loaded optimized
    runs: dict[tuple, list[list[float]]] = {}
    for rep in range(repeat + 1):  # the first pass warms up
        for set_name, queries in sets.items():
            for f, (filters, _) in FILTERS.items():
                for mode in MODES[rep % 3 :] + MODES[: rep % 3]:
                    ms = []
                    for q in queries:
                        t = time.perf_counter()
                        api.search(idx, q, k=10, filters=filters, exact=0, mode=mode)
                        ms.append((time.perf_counter() - t) * 1000)
                    if rep:
                        runs.setdefault((set_name, f, mode), []).append(ms)
        log(f"warm pass {rep} of {repeat} done")
    out = {}
    for key, passes in runs.items():
        per_query = [statistics.median(col) for col in zip(*passes, strict=True)]
        out[key] = (percentile(per_query, 0.5), percentile(per_query, 0.9))
    return out


def cold(root: Path, db: Path, sets: dict[str, list[str]], n: int) -> dict[tuple, float]:
    """``{(filter, mode): median wall ms}`` of ``kbx search`` processes, and bare Python's."""
    times: dict[tuple, list[float]] = {}
    queries = [q for qs in sets.values() for q in qs[:n]]
    for i, q in enumerate(queries):
        for f in ("none", "entity"):
            for mode in MODES[i % 3 :] + MODES[: i % 3]:
                argv = [str(KBX), "search", q, "--db", str(db), "--mode", mode, *FILTERS[f][1]]
                t = time.perf_counter()
                subprocess.run(argv, cwd=root, stdout=subprocess.DEVNULL, check=True)
                times.setdefault((f, mode), []).append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.setdefault(("python -c pass", ""), []).append((time.perf_counter() - t) * 1000)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=Path("/tmp/kbx-scale"))
    p.add_argument("--size", type=int, default=200_000, help="target units")
    p.add_argument("--windows", type=int, default=2, help="stand-in vectors a unit")
    p.add_argument("--queries", type=int, default=20, help="queries per set")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cold", type=int, default=5, help="cold processes per set, mode, filter")
    args = p.parse_args()
    eval_dir, cache = args.eval.resolve(), args.cache.resolve()
    pool = load_pool(eval_dir, cache)
    sets = query_sets(eval_dir, pool, args.queries)
    n_docs = math.ceil(args.size / UNITS_PER_DOC / 50) * 50
    root = cache / f"corpus-{n_docs}"
    write_corpus(root, n_docs, pool)
    built = kbx_index(root, cache / f"kbx-{n_docs}.duckdb", False)
    db, vectors = embedded_copy(root, cache / f"kbx-{n_docs}.duckdb", args.windows)
    log(f"{built['units']:,} units, {vectors:,} vectors; cold runs ...")
    load = os.getloadavg()[0]
    cold_ms = cold(root, db, sets, args.cold)  # each loads the model's optimized copy
    log("warm runs ...")
    warm_ms = warm(api.Index.for_root(root, db), sets, args.repeat)
    print(
        f"`.venv/bin/python benchmarks/hybrid_scale.py --size {args.size} --windows "
        f"{args.windows} --queries {args.queries} --repeat {args.repeat} --cold {args.cold}`. "
        f"Date: {time.strftime('%Y-%m-%d')}; {built['units']:,} units, {vectors:,} stand-in "
        f"vectors; 1-minute load average {load:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end.\n"
    )
    rows = [
        [set_name, f, *(f"{warm_ms[(set_name, f, m)][i]:.1f}" for i in (0, 1) for m in MODES)]
        for set_name in sets
        for f in FILTERS
    ]
    heads = [f"{m} p{p}" for p in (50, 90) for m in MODES]
    print("Warm (a library call; ms):\n")
    print(table(["query set", "filter", *heads], rows))
    bare = cold_ms.pop(("python -c pass", ""))
    print(f"\nCold (a `kbx search` process; median wall ms; bare Python {bare:.0f}):\n")
    print(
        table(
            ["filter", *MODES],
            [[f, *(f"{cold_ms[(f, m)]:.0f}" for m in MODES)] for f in ("none", "entity")],
        )
    )


if __name__ == "__main__":
    main()
