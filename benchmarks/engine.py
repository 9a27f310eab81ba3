"""The spaCy pass on the local engine (1 and 2 processes) beside the dask engine (a cluster of
2 single-threaded worker processes on this machine), side by side (issue 20).

What is measured, on a deterministic slice of the Node.js corpus (every ``--every``-th file,
as benchmarks/ner_pass.py takes it) indexed once with the rule-based recognizers:

- the pass ``kbx index`` runs next and ``kbx reprocess`` runs after an upgrade
  (``annotate.run.recognize`` with spaCy), each in a fresh child process on a fresh copy of
  the index, the engines alternating, ``--repeat`` times each: units/s, and the writer's
  commit time (every ``_write`` timed: mentions/s and units/s it commits);
- the dask engine's overhead per batch: a batch's round trip through the cluster (rows out,
  Arrow tables back) minus recognizing the same batch in this process, for several batch
  sizes, with the identifiers recognizer (cheap, so the overhead is what shows);
- the dask pass at a few batch sizes (``--batches``), to see the overhead amortized;
- the cluster's start-up and a client's connection.

The machine is shared: the load average is printed with every figure; read ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import rule_registry, table, write_section
from ner_pass import copy_index, make_slice, runs_of

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
DOCS = REPO / "docs"
SECTION = "## Distributed reprocess (issue 20)"
MEMORY = "## Distributed reprocess: a Dask worker's memory (issue 20)"
WRITER = "## Distributed reprocess: the single writer's commit rate (issue 20)"
STARTUP = "## Distributed reprocess: Dask beside Ray, start-up (issue 20)"
HEADER = "# Benchmarks\n"

PASS = """
import json, sys, time
import kbx.annotate.run as run
from kbx.annotate.engine import connect
from kbx.annotate.setup import registry_for
from kbx.config import EngineConfig
from kbx.store.db import Index
root, workers, address, batch = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
run.SLOW_BATCH_UNITS = batch
writes, real = [], run._write
def timed(con, name, mentions, runs):
    t = time.perf_counter()
    removed = real(con, name, mentions, runs)
    writes.append((time.perf_counter() - t, len(mentions), len(runs)))
    return removed
run._write = timed
idx = Index.for_root(root)
registry = registry_for(idx)
t = time.perf_counter()
engine = connect(EngineConfig("dask", address)) if address != "-" else None
connect_s = time.perf_counter() - t
started = time.perf_counter()
done = run.recognize(idx, registry, ["spacy"], workers=workers, engine=engine)
seconds = time.perf_counter() - started
if engine:
    engine.close()
print(json.dumps({"seconds": seconds, "units": done[0].units, "mentions": done[0].mentions,
                  "connect_s": connect_s, "write_s": sum(w[0] for w in writes),
                  "batches": len(writes)}))
"""


def one_pass(root: Path, workers: int, address: str = "-", batch: int = 64) -> dict:
    """The spaCy pass on ``root``'s index in a child process (a fresh interpreter, as a
    ``kbx reprocess`` is)."""
    out = subprocess.run(
        [sys.executable, "-c", PASS, str(root), str(workers), address, str(batch)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise RuntimeError(f"pass failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def overhead(client_address: str, root: Path, sizes: list[int], repeat: int) -> list[dict]:
    """Per batch size: the round trip of one batch through the cluster, the same batch
    recognized here, and their difference (medians of ``repeat``)."""
    from kbx.annotate.dask_engine import DaskEngine
    from kbx.annotate.run import recognize_batch
    from kbx.config import EngineConfig
    from kbx.recognizers.identifiers import IdentifierRecognizer
    from kbx.store.db import Index

    r = IdentifierRecognizer()
    with Index.for_root(root).reader() as con:
        rows = con.execute(
            "SELECT unit_hash, text, heading_path, kind, code_spans, breaks FROM units "
            "ORDER BY unit_id LIMIT ?",
            [max(sizes)],
        ).fetchall()
    sizes = [n for n in sizes if n <= len(rows)]
    found = []
    with DaskEngine.connect(EngineConfig("dask", client_address)) as engine:
        on = engine.start([r])
        on.submit(r, rows[:8]).result()  # warm: the workers import kbx and the recognizer
        for n in sizes:
            batch = rows[:n]
            here, there = [], []
            for _ in range(repeat):
                t = time.perf_counter()
                recognize_batch(r, batch)
                here.append(time.perf_counter() - t)
                t = time.perf_counter()
                on.submit(r, batch).result()
                there.append(time.perf_counter() - t)
            local, remote = statistics.median(here), statistics.median(there)
            found.append(
                {
                    "units": n,
                    "local_ms": local * 1e3,
                    "dask_ms": remote * 1e3,
                    "overhead_ms": (remote - local) * 1e3,
                }
            )
        on.shutdown()
    return found


def _rss_mb() -> float:
    """This process's resident memory (run on each worker)."""
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kb / 1024


def worker_memory(root: Path) -> list[tuple[str, float, float]]:
    """Each step of a worker's life, with its resident memory (median of the workers) and
    how long the step took: started, kbx loaded (a rule-based batch), spaCy loaded."""
    from distributed import LocalCluster

    from kbx.annotate.dask_engine import DaskEngine
    from kbx.annotate.setup import registry_for
    from kbx.config import EngineConfig
    from kbx.store.db import Index

    idx = Index.for_root(root)
    registry = registry_for(idx)
    with idx.reader() as con:
        rows = con.execute(
            "SELECT unit_hash, text, heading_path, kind, code_spans, breaks FROM units "
            "ORDER BY unit_id LIMIT 64"
        ).fetchall()
    steps = []
    t = time.perf_counter()
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as c:
        started = time.perf_counter() - t
        with DaskEngine.connect(EngineConfig("dask", c.scheduler_address)) as engine:
            rss = lambda: statistics.median(engine.client.run(_rss_mb).values())  # noqa: E731
            steps.append(("started (distributed imported)", rss(), started))
            ids, spacy = registry.get("identifiers"), registry.get("spacy")
            t = time.perf_counter()
            on = engine.start([ids, spacy])
            for b in [on.submit(ids, rows[:8]) for _ in range(4)]:
                b.result()
            steps.append(("kbx loaded (identifiers batches)", rss(), time.perf_counter() - t))
            t = time.perf_counter()
            for b in [on.submit(spacy, rows) for _ in range(2)]:
                b.result()
            steps.append(("spaCy loaded (a 64-unit batch each)", rss(), time.perf_counter() - t))
            on.shutdown()
    return steps


def writer_rate(root: Path, sizes: list[int], per_unit: int) -> list[tuple[int, int, float]]:
    """The writer alone: every unit's runs and ``per_unit`` mentions committed with the pass's
    own ``_write``, ``n`` units per transaction, for each ``n`` of ``sizes``; returns
    (units per commit, commits, seconds). The mentions are made up (spans of each unit's
    first characters, spaCy's shape: a type, the text, a surface value): what a commit costs
    depends on how many rows it swaps, not on what they say."""
    from datetime import datetime

    from kbx.annotate.run import _write
    from kbx.store.db import Index

    idx = Index.for_root(root)
    with idx.writer() as con:
        units = con.execute("SELECT unit_hash, text FROM units ORDER BY unit_id").fetchall()
        found = []
        for n in sizes:
            started, commits = time.perf_counter(), 0
            for i in range(0, len(units), n):
                now = datetime.now()
                mentions = [
                    (h, "spacy", "bench", k, k + 1, "ORG", t[k], t[k], 1.0, None)
                    for h, t in units[i : i + n]
                    for k in range(min(per_unit, len(t)))
                ]
                runs = [(h, "spacy", "bench", per_unit, None, now) for h, _ in units[i : i + n]]
                _write(con, "spacy", mentions, runs)
                commits += 1
            found.append((n, commits, time.perf_counter() - started))
    return found


def _descendants_mb() -> float:
    """Resident memory of every process this one started (a cluster's), in MB."""
    import psutil

    total = 0
    for p in psutil.Process().children(recursive=True):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total / 1024**2


def _one(x: int) -> int:
    return x + 1


def startup(repeat: int) -> dict[str, list[tuple[float, float, float, float]]]:
    """Dask and Ray side by side, alternating: a 2-worker local cluster's start, its first two
    tasks (the workers' first work), a trivial task's round trip (median of 20), and the
    resident memory of the processes the cluster started. Ray is optional: pip install ray."""
    from distributed import Client, LocalCluster

    found: dict[str, list] = {"dask": [], "ray": []}
    for _ in range(repeat):
        t = time.perf_counter()
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        start = time.perf_counter() - t
        t = time.perf_counter()
        client.gather(client.map(_one, range(2), pure=False))
        first = time.perf_counter() - t
        trips = []
        for i in range(20):
            t = time.perf_counter()
            client.submit(_one, i, pure=False).result()
            trips.append(time.perf_counter() - t)
        found["dask"].append((start, first, statistics.median(trips), _descendants_mb()))
        client.close()
        cluster.close()
        import ray

        t = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        start = time.perf_counter() - t
        one = ray.remote(_one)
        t = time.perf_counter()
        ray.get([one.remote(i) for i in range(2)])
        first = time.perf_counter() - t
        trips = []
        for i in range(20):
            t = time.perf_counter()
            ray.get(one.remote(i))
            trips.append(time.perf_counter() - t)
        found["ray"].append((start, first, statistics.median(trips), _descendants_mb()))
        ray.shutdown()
    return found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--every", type=int, default=16, help="take every Nth file of the corpus")
    ap.add_argument("--repeat", type=int, default=2, help="alternating runs of each engine")
    ap.add_argument("--batches", default="16,64,256", help="dask pass batch sizes to compare")
    ap.add_argument("--sizes", default="1,8,64,256,1024", help="batch sizes for the overhead")
    ap.add_argument("--memory", action="store_true", help="only a worker's memory, by step")
    ap.add_argument("--startup", action="store_true", help="only Dask beside Ray: start-up")
    ap.add_argument("--writer", default="", help="only the writer: units per commit, e.g. 64,512")
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    from distributed import LocalCluster

    from kbx.indexing.ingest import index

    if args.startup:
        load = os.getloadavg()[0]
        found = startup(args.repeat)
        rows = [
            [
                name,
                *(
                    f"{statistics.median(r[i] for r in runs) * k:.{d}f}"
                    for i, k, d in ((0, 1, 1), (1, 1, 1), (2, 1e3, 1), (3, 1, 0))
                ),
            ]
            for name, runs in found.items()
        ]
        command = shlex.join(["python", "benchmarks/engine.py", *(argv or sys.argv[1:])])
        section = "\n".join(
            [
                STARTUP,
                "",
                f"Command: `{command}` (with `pip install ray`: Ray is not a kbx dependency). "
                f"Date: {time.strftime('%Y-%m-%d')}. A local cluster of 2 worker processes "
                f"each, started and stopped {args.repeat} times, alternating (medians); load "
                f"average {load:.1f} on {os.cpu_count()} cores.",
                "",
                table(
                    [
                        "engine",
                        "start s",
                        "first 2 tasks s",
                        "round trip ms",
                        "processes it started, MB",
                    ],
                    rows,
                ),
                "",
            ]
        )
        print(section)
        if args.write:
            write_section(DOCS / "BENCHMARKS.md", STARTUP, section, HEADER)
        return
    tmp = Path(tempfile.mkdtemp(prefix="kbx-engine-"))
    built = make_slice(args.eval / "corpora" / "nodejs", tmp / "built", args.every)
    index(built, workers=2, registry=rule_registry())
    files = sum(1 for p in built.rglob("*.md*") if ".kbx" not in p.parts)
    units = runs_of(built)[0]
    if args.writer:
        load = os.getloadavg()[0]
        per_unit = 14  # the spaCy pass's mentions per Node.js unit, measured above (13.8)
        sizes = [int(x) for x in args.writer.split(",")]
        found = writer_rate(built, sizes, per_unit)
        shutil.rmtree(tmp)
        command = shlex.join(["python", "benchmarks/engine.py", *(argv or sys.argv[1:])])
        section = "\n".join(
            [
                WRITER,
                "",
                f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d')}. {units} units "
                f"(every {args.every}th file of the Node.js corpus), each with its run and "
                f"{per_unit} mentions committed by the pass's own `_write`, so many units per "
                f"transaction; load average {load:.1f} on {os.cpu_count()} cores.",
                "",
                table(
                    ["units per commit", "commits", "s", "ms per commit", "units/s", "mentions/s"],
                    [
                        [
                            str(n),
                            str(c),
                            f"{sec:.2f}",
                            f"{sec / c * 1e3:.0f}",
                            f"{units / sec:,.0f}",
                            f"{units * per_unit / sec:,.0f}",
                        ]
                        for n, c, sec in found
                    ],
                ),
                "",
            ]
        )
        print(section)
        if args.write:
            write_section(DOCS / "BENCHMARKS.md", WRITER, section, HEADER)
        return
    if args.memory:
        load = os.getloadavg()[0]
        steps = worker_memory(copy_index(built, tmp / "memory"))
        shutil.rmtree(tmp)
        command = shlex.join(["python", "benchmarks/engine.py", *(argv or sys.argv[1:])])
        section = "\n".join(
            [
                MEMORY,
                "",
                f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d')}. A LocalCluster of 2 "
                f"single-threaded worker processes; resident memory per worker (median of the "
                f"two) after each step; load average {load:.1f} on {os.cpu_count()} cores.",
                "",
                table(
                    ["step", "RSS MB", "step s"],
                    [[n, f"{mb:.0f}", f"{sec:.1f}"] for n, mb, sec in steps],
                ),
                "",
            ]
        )
        print(section)
        if args.write:
            write_section(DOCS / "BENCHMARKS.md", MEMORY, section, HEADER)
        return
    t = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    start_s = time.perf_counter() - t
    address = cluster.scheduler_address
    configs = [
        ("local, 1 process", 1, "-"),
        ("local, 2 processes", 2, "-"),
        ("dask, 2 workers", 2, address),
    ]
    results: dict[str, list[dict]] = {name: [] for name, _, _ in configs}
    loads = []
    for rep in range(args.repeat):
        for name, workers, addr in configs:
            root = copy_index(built, tmp / f"pass-{rep}-{workers}-{addr != '-'}")
            loads.append(os.getloadavg()[0])
            r = one_pass(root, workers, addr)
            results[name].append(r)
            print(f"{name}: {r}", file=sys.stderr)
            shutil.rmtree(root)
    batch_runs = []
    for n in [int(x) for x in args.batches.split(",")]:
        root = copy_index(built, tmp / f"batch-{n}")
        loads.append(os.getloadavg()[0])
        batch_runs.append((n, one_pass(root, 2, address, n)))
        print(f"dask batch {n}: {batch_runs[-1][1]}", file=sys.stderr)
        shutil.rmtree(root)
    loads.append(os.getloadavg()[0])
    costs = overhead(address, built, [int(x) for x in args.sizes.split(",")], 5)
    cluster.close()
    shutil.rmtree(tmp)
    section = report(args, argv, files, units, start_s, results, batch_runs, costs, loads)
    print(section)
    if args.write:
        write_section(DOCS / "BENCHMARKS.md", SECTION, section, HEADER)


def report(args, argv, files, units, start_s, results, batch_runs, costs, loads) -> str:
    """The section for docs/BENCHMARKS.md."""
    med = {name: statistics.median(r["seconds"] for r in rs) for name, rs in results.items()}
    one = med["local, 1 process"]
    rows = [
        [
            name,
            f"{med[name]:.1f}",
            ", ".join(f"{r['seconds']:.1f}" for r in rs),
            f"{units / med[name]:.1f}",
            f"{one / med[name]:.2f}x",
            f"{statistics.median(r['write_s'] for r in rs):.2f}",
            f"{statistics.median(r['mentions'] / r['write_s'] for r in rs):,.0f}",
            f"{statistics.median(r['units'] / r['write_s'] for r in rs):,.0f}",
        ]
        for name, rs in results.items()
    ]
    connects = [r["connect_s"] for r in results["dask, 2 workers"]]
    brow = [
        [str(n), str(r["batches"]), f"{r['seconds']:.1f}", f"{units / r['seconds']:.1f}"]
        for n, r in batch_runs
    ]
    crow = [
        [str(c["units"]), f"{c['local_ms']:.1f}", f"{c['dask_ms']:.1f}", f"{c['overhead_ms']:.1f}"]
        for c in costs
    ]
    mentions = results["local, 1 process"][0]["mentions"]
    command = shlex.join(["python", "benchmarks/engine.py", *(argv or sys.argv[1:])])
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d')}. {files} files (every "
            f"{args.every}th of the Node.js corpus), {units} units, indexed rules-only; the "
            f"spaCy pass (`en_core_web_sm`, NER only; {mentions} mentions) in a fresh process "
            f"on a fresh copy of the index each time, engines alternating, {args.repeat} runs "
            f"each; 1-minute load average {min(loads):.1f}-{max(loads):.1f} on "
            f"{os.cpu_count()} cores (shared). No GPU in this task: no GPU figure.",
            "",
            "### The pass (batches of 64 units, the model recognizers' default)",
            "",
            table(
                [
                    "engine",
                    "median s",
                    "runs s",
                    "units/s",
                    "vs 1 process",
                    "commit s",
                    "mentions/s committed",
                    "units/s committed",
                ],
                rows,
            ),
            "",
            f"The dask cluster (2 worker processes, 1 thread each) started in {start_s:.1f} s; "
            f"a client connected in {statistics.median(connects) * 1e3:.0f} ms (median). "
            "The pass's time includes the model load (in the parent before forking, for the "
            "local engine; on each worker at its first batch, for dask). 'commit s' is the "
            "writer's time inside the commit transactions (every `_write`), the whole pass's.",
            "",
            "### Overhead per batch (identifiers recognizer; medians of 5)",
            "",
            table(["units", "here ms", "through dask ms", "overhead ms"], crow),
            "",
            "### The dask pass by batch size",
            "",
            table(["units per batch", "batches", "s", "units/s"], brow),
            "",
        ]
    )


if __name__ == "__main__":
    main()
