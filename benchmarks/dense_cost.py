"""What dense retrieval costs (issue 17): the exact-cosine scan at scale, with and without
a filter, the extra index size per 1,000 units, and the model's cold start.

An index of ``--units`` synthetic units (random 384-dimension vectors, as the packaged
model writes them: FLOAT[] lists in the ``vectors`` table) is built in a temporary
folder through kbx's own schema; ``kbx.vectors.rank.dense_rank`` then ranks the top 100
for ``--queries`` random query vectors, over every unit and over a 1% allowed set (a
filter's ``unit_id IN (…)``). The cold start is a fresh process loading the packaged
model and embedding one query, as a ``kbx search`` process would.

    .venv/bin/python benchmarks/dense_cost.py [--units 200000] [--queries 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kbx.store.db import Index
from kbx.vectors import matrix
from kbx.vectors.rank import dense_rank

DIM = 384
COLD = """
import time; t = time.perf_counter()
from kbx.vectors.model import packaged
enc = packaged(); loaded = time.perf_counter() - t
enc.query("how do I upgrade npm on Windows"); print(loaded, time.perf_counter() - t)
"""


class Synthetic:
    """Stands in for an Encoder: a name and version to select vectors by."""

    name, version, dim = "synthetic", "1", DIM


def build(root: Path, n: int) -> Index:
    idx = Index.for_root(root)
    with idx.writer() as con:
        size_before = idx.db.stat().st_size
        con.execute(
            "INSERT INTO units SELECT i, md5(i::VARCHAR), [], '', 0, 'prose', 0, NULL, NULL "
            f"FROM range({n}) t(i)"
        )
        con.execute("CHECKPOINT")
        size_units = idx.db.stat().st_size
        con.execute(
            "INSERT INTO vectors SELECT md5(i::VARCHAR), 'synthetic', '1', "
            f"list_transform(range({DIM}), lambda x: (random() - 0.5)::FLOAT), now() "
            f"FROM range({n}) t(i)"
        )
        con.execute("CHECKPOINT")
        size_vectors = idx.db.stat().st_size
        t = time.perf_counter()
        path = matrix.export(con, idx.db, Synthetic.name, Synthetic.version)
        took = time.perf_counter() - t
    per_1000 = (size_vectors - size_units) / n * 1000 / 1e6
    print(
        f"index file: {size_before / 1e6:.1f} MB empty, +{per_1000:.2f} MB per 1,000 vectors; "
        f"matrix file +{path.stat().st_size / n * 1000 / 1e6:.2f} MB per 1,000 "
        f"(exported in {took:.1f} s)"
    )
    return idx


def timed(idx: Index, queries: np.ndarray, allowed: str | None, mapped: bool) -> list[float]:
    out = []
    with idx.reader() as con:
        for q in queries:
            t = time.perf_counter()
            dense_rank(con, Synthetic(), q, allowed, (), 100, idx.db if mapped else None)
            out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--units", type=int, default=200_000)
    p.add_argument("--queries", type=int, default=10)
    p.add_argument("--skip-cold", action="store_true")
    a = p.parse_args()
    rng = np.random.default_rng(0)
    queries = rng.normal(size=(a.queries, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        idx = build(Path(tmp), a.units)
        print(f"built {a.units:,} units in {time.perf_counter() - t:.1f} s")
        for name, allowed in (
            ("every unit", None),
            ("1% allowed", "SELECT unit_id FROM units WHERE unit_id % 100 = 0"),
        ):
            for how, mapped in (("SQL list_inner_product", False), ("mapped matrix", True)):
                ms = timed(idx, queries, allowed, mapped)
                p90 = statistics.quantiles(ms, n=10)[-1] if len(ms) > 1 else ms[0]
                print(
                    f"dense_rank top 100, {name}, {how}: p50 {statistics.median(ms):.0f} ms, "
                    f"p90 {p90:.0f} ms"
                )
    if not a.skip_cold:
        runs = [
            [float(x) for x in subprocess.check_output([sys.executable, "-c", COLD]).split()]
            for _ in range(3)
        ]
        load = statistics.median(r[0] for r in runs)
        first = statistics.median(r[1] for r in runs)
        print(f"cold process: model loaded {load:.2f} s, first query vector {first:.2f} s")


if __name__ == "__main__":
    main()
