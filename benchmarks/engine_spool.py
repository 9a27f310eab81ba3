"""The dask engine's two ways of shipping a batch, side by side (issue 20): its unit rows
in the task, through the scheduler (in band), or as an Arrow file in a spool folder every
worker reads (``[engine] spool``), the task carrying only the path.

On a deterministic slice of the Node.js corpus (every ``--every``-th file) indexed once with
the rule-based recognizers, each run is one pass in a fresh child process on a fresh copy
of the index, on a fresh cluster (a ``dask scheduler`` process and ``dask worker
--nworkers 2 --nthreads 1``, started for the run, so the scheduler's peak memory is the
run's), the two routes alternating: the identifiers recognizer (cheap: shipping is most of
its cost) and spaCy, at each batch size. Measured: units/s, the task's pickled arguments
per batch (the task's graph as the client serializes it for the scheduler, which hands it
on to a worker), the spool file per batch, the batch's two result tables (they come back
through the scheduler by either route), and the scheduler's resident memory before the
pass and at its peak during it (``VmHWM``, reset as the pass starts). Every run of a
recognizer must find the same mentions (a digest of its mentions).

The machine is shared: the load average is printed with the figures; read ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from common import rule_registry, table, write_section
from ner_pass import copy_index, make_slice, runs_of

from kbx.annotate.run import CHUNK_UNITS

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
SECTION = "## Distributed reprocess: batches in files beside batches in band (issue 20)"
HEADER = "# Benchmarks\n"
DASK = str(Path(sys.executable).parent / "dask")

PASS = """
import json, os, sys, time
from datetime import datetime
import distributed
from distributed.client import nbytes
import kbx.annotate.dask_engine as dask_engine
import kbx.annotate.run as run
import kbx.annotate.spool as spool
from kbx.annotate.engine import connect
from kbx.annotate.setup import registry_for
from kbx.config import EngineConfig
from kbx.store.db import Index
root, address, batch, name, folder = sys.argv[1:6]
run.SLOW_BATCH_UNITS = run.BATCH_UNITS = int(batch)
graphs, files, results = [], [], []
real_send, real_write, real_rows = (
    distributed.Client._send_to_scheduler, spool.Spool.write, dask_engine.rows)
def send(self, msg):  # a task's graph, as the client serialized it for the scheduler
    if msg.get("op") == "update-graph":
        graphs.append(sum(map(nbytes, [msg["expr_ser"].header] + msg["expr_ser"].frames)))
    return real_send(self, msg)
def write(self, batch):
    path = real_write(self, batch)
    files.append(os.path.getsize(path))
    return path
def rows(table):  # a batch's two result tables, as they come back
    results.append(table.nbytes)
    return real_rows(table)
distributed.Client._send_to_scheduler, spool.Spool.write, dask_engine.rows = send, write, rows
idx = Index.for_root(root)
registry = registry_for(idx)
engine = connect(EngineConfig("dask", address, spool=None if folder == "-" else folder))
redo = {name: datetime.now()} if name == "identifiers" else None  # its runs exist: redo them
started = time.perf_counter()
done = run.recognize(idx, registry, [name], workers=2, engine=engine, redo_from=redo)
seconds = time.perf_counter() - started
engine.close()
print(json.dumps({"seconds": seconds, "units": done[0].units, "mentions": done[0].mentions,
                  "batches": len(graphs), "task_bytes": graphs,
                  "file_bytes": files,
                  "result_bytes": [a + b for a, b in zip(results[::2], results[1::2])]}))
"""


def _warm(name: str) -> str:
    """On a worker: import what a batch needs (kbx, and spaCy's stack for the spaCy pass),
    so a pass's time is its batches and the model's load, not the imports."""
    import kbx.annotate.dask_engine  # noqa: F401

    if name == "spacy":
        import spacy  # noqa: F401
    return name


class Cluster:
    """A scheduler process and two single-threaded workers, for one run."""

    def __init__(self, folder: Path, warm: str):
        from distributed import Client

        folder.mkdir(parents=True)
        self.file = folder / "scheduler.json"
        log = open(folder / "log", "wb")  # noqa: SIM115 (closed with the processes)
        common = {"stdout": log, "stderr": log, "start_new_session": True}
        self.log = log
        self.scheduler = subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--scheduler-file", str(self.file)],
            **common,
        )
        self.workers: subprocess.Popen | None = None
        try:
            while not self.file.exists():
                time.sleep(0.1)
            self.workers = subprocess.Popen(
                [DASK, "worker", "--scheduler-file", str(self.file), "--nworkers", "2"]
                + ["--nthreads", "1", "--no-dashboard"],
                **common,
            )
            with Client(scheduler_file=str(self.file)) as c:
                c.wait_for_workers(2, timeout=120)
                c.run(_warm, warm)
                self.address = c.scheduler.address
        except BaseException:
            self.close()
            raise

    def proc(self, name: str) -> dict[str, int]:
        """The numeric fields of the scheduler's /proc/PID/NAME file."""
        found = {}
        for line in Path(f"/proc/{self.scheduler.pid}/{name}").read_text().splitlines():
            key, _, value = line.partition(":")
            if value.split() and value.split()[0].isdigit():
                found[key] = int(value.split()[0])
        return found

    def reset_peak(self) -> None:
        """Start the scheduler's peak resident memory (VmHWM) again from its present size."""
        Path(f"/proc/{self.scheduler.pid}/clear_refs").write_text("5")

    def close(self) -> None:
        for p in (self.workers, self.scheduler):  # the workers (and their nannies) first
            if p is None:
                continue
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.log.close()


def digest(root: Path, name: str) -> str:
    """The recognizer's mentions, in one order, as a short digest."""
    with duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT * EXCLUDE (version) FROM mentions WHERE recognizer = ? ORDER BY ALL", [name]
        ).fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:12]


def one_run(built: Path, tmp: Path, name: str, batch: int, route: str) -> dict:
    """One pass on a fresh copy and a fresh cluster; the child's figures and the
    scheduler's."""
    root = copy_index(built, tmp / "index")
    spool = tmp / "spool"
    cluster = Cluster(tmp / "cluster", name)
    try:
        status = cluster.proc("status")
        cluster.reset_peak()
        load = os.getloadavg()[0]
        out = subprocess.run(
            [sys.executable, "-c", PASS, str(root), cluster.address, str(batch), name]
            + [str(spool) if route == "files" else "-"],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode:
            raise RuntimeError(f"pass failed ({out.returncode}): {out.stderr[-2000:]}")
        found = json.loads(out.stdout.strip().splitlines()[-1])
        found.update(
            load=load,
            rss_mb=status["VmRSS"] / 1024,
            peak_mb=cluster.proc("status")["VmHWM"] / 1024,
            digest=digest(root, name),
            left=sorted(p.name for p in spool.glob("*")) if spool.exists() else [],
        )
    finally:
        cluster.close()
        shutil.rmtree(tmp)
    return found


def in_flight(cluster: Cluster, on, r, chunk: list[tuple], n: int) -> tuple[float, float]:
    """A whole chunk's batches submitted at once, as a pass submits them, and waited for:
    (seconds, the scheduler's peak resident memory over its size before, in MB)."""
    before = cluster.proc("status")["VmRSS"]
    cluster.reset_peak()
    t = time.perf_counter()
    for b in [on.submit(r, chunk[i : i + n]) for i in range(0, len(chunk), n)]:
        b.result()
    seconds = time.perf_counter() - t
    return seconds, (cluster.proc("status")["VmHWM"] - before) / 1024


def round_trips(built: Path, tmp: Path, sizes: list[int], repeat: int, chunk_batch: int) -> dict:
    """A batch's round trip through the cluster (the identifiers recognizer, so recognizing
    it is a small part), in band and through a spool file, alternating: median seconds per
    (units, route); then a pass's whole chunk (``CHUNK_UNITS``) in flight at once, twice
    per route: (seconds, scheduler MB) per run. The pass around it (plugin, connection) is
    set up once; a batch larger than the slice takes its units again from the first."""
    from kbx.annotate.dask_engine import DaskEngine
    from kbx.config import EngineConfig
    from kbx.recognizers.identifiers import IdentifierRecognizer
    from kbx.store.db import Index

    with Index.for_root(built).reader() as con:
        rows = con.execute(
            "SELECT unit_hash, text, heading_path, kind, code_spans, breaks FROM units "
            "ORDER BY unit_id"
        ).fetchall()
    batches = {n: list(itertools.islice(itertools.cycle(rows), n)) for n in sizes}
    r, cluster, found = IdentifierRecognizer(), Cluster(tmp / "cluster", "identifiers"), {}
    try:
        specs = {
            "band": EngineConfig("dask", cluster.address),
            "files": EngineConfig("dask", cluster.address, spool=str(tmp / "spool")),
        }
        engines = {route: DaskEngine.connect(spec) for route, spec in specs.items()}
        passes = {route: e.start([r]) for route, e in engines.items()}
        for on in passes.values():
            on.submit(r, rows[:8]).result()  # warm: the plugin's recognizer on both workers
        for n in sizes:
            times: dict[str, list[float]] = {"band": [], "files": []}
            for i in range(repeat):
                for route in ("band", "files") if i % 2 == 0 else ("files", "band"):
                    t = time.perf_counter()
                    passes[route].submit(r, batches[n]).result()
                    times[route].append(time.perf_counter() - t)
            found.update({(n, route): statistics.median(ts) for route, ts in times.items()})
        chunk = list(itertools.islice(itertools.cycle(rows), CHUNK_UNITS))
        for route in ("files", "band", "band", "files"):
            found.setdefault(("chunk", route), []).append(
                in_flight(cluster, passes[route], r, chunk, chunk_batch)
            )
        for route, on in passes.items():
            on.shutdown()
            engines[route].close()
    finally:
        cluster.close()
        shutil.rmtree(tmp)
    return found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--every", type=int, default=24, help="take every Nth file of the corpus")
    ap.add_argument("--repeat", type=int, default=2, help="alternating runs of each route")
    ap.add_argument("--batches", default="64,256", help="units per batch to compare")
    ap.add_argument("--recognizers", default="identifiers,spacy")
    ap.add_argument("--trips", default="1,64,256,1024", help="batch sizes for the round trip")
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    from kbx.indexing.ingest import index

    tmp = Path(tempfile.mkdtemp(prefix="kbx-spool-"))
    built = make_slice(args.eval / "corpora" / "nodejs", tmp / "built", args.every)
    index(built, workers=2, registry=rule_registry())
    files = sum(1 for p in built.rglob("*.md*") if ".kbx" not in p.parts)
    units = runs_of(built)[0]
    names, sizes = args.recognizers.split(","), [int(x) for x in args.batches.split(",")]
    results: dict[tuple, list[dict]] = {}
    for rep in range(args.repeat):
        for name in names:
            for n in sizes:
                routes = ("band", "files") if rep % 2 == 0 else ("files", "band")
                for route in routes:
                    r = one_run(built, tmp / "run", name, n, route)
                    results.setdefault((name, n, route), []).append(r)
                    shown = {k: v for k, v in r.items() if not k.endswith("_bytes")}
                    print(f"{name} {n} {route}: {shown}", file=sys.stderr)
    load = os.getloadavg()[0]
    trips = round_trips(built, tmp / "trips", [int(x) for x in args.trips.split(",")], 9, 64)
    shutil.rmtree(tmp)
    section = report(args, argv, files, units, results, trips, load)
    print(section)
    if args.write:
        write_section(REPO / "docs" / "BENCHMARKS.md", SECTION, section, HEADER)


def _median_s(runs: list[tuple[float, float]]) -> float:
    return statistics.median(sec for sec, _ in runs)


def _kb(values: list[float]) -> str:
    return f"{statistics.median(values) / 1024:,.1f}" if values else "-"


def report(args, argv, files, units, results: dict[tuple, list[dict]], trips, load) -> str:
    """The section for docs/BENCHMARKS.md."""
    rows, same = [], {}
    for (name, n, route), rs in results.items():
        same.setdefault(name, set()).update(r["digest"] for r in rs)
        med = statistics.median(r["seconds"] for r in rs)
        batches = rs[0]["batches"]
        rows.append(
            [
                name,
                str(n),
                route,
                str(batches),
                f"{med:.1f}",
                ", ".join(f"{r['seconds']:.1f}" for r in rs),
                f"{units / med:.1f}",
                _kb([b for r in rs for b in r["task_bytes"]]),
                _kb([b for r in rs for b in r["file_bytes"]]),
                _kb([b for r in rs for b in r["result_bytes"]]),
                f"{statistics.median(r['rss_mb'] for r in rs):.0f}",
                f"{statistics.median(r['peak_mb'] for r in rs):.0f}",
            ]
        )
    loads = [r["load"] for rs in results.values() for r in rs]
    mentions = {name: rs[0]["mentions"] for (name, _, _), rs in results.items()}
    left = sorted({x for rs in results.values() for r in rs for x in r["left"]})
    command = shlex.join(["python", "benchmarks/engine_spool.py", *(argv or sys.argv[1:])])
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d')}. {files} files (every "
            f"{args.every}th of the Node.js corpus), {units} units, indexed rules-only; each "
            f"pass in a fresh process on a fresh copy of the index and a fresh cluster (a "
            f"scheduler process and 2 single-threaded workers, kbx and spaCy imported on them "
            f"before the pass; the spaCy model loads at each worker's first batch, inside the "
            f"time), the routes alternating, {args.repeat} runs each; the spool folder on this "
            f"machine's local disk (no shared storage here); 1-minute load average at the "
            f"start of a pass {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores "
            f"(shared). Mentions: "
            + ", ".join(f"{k} {v:,}" for k, v in mentions.items())
            + "; every run of a recognizer found the same mentions: "
            + ("yes" if all(len(d) == 1 for d in same.values()) else f"NO ({same})")
            + f"; spool folders left after the runs: {len(left)}.",
            "",
            table(
                [
                    "recognizer",
                    "units per batch",
                    "route",
                    "batches",
                    "median s",
                    "runs s",
                    "units/s",
                    "task KB per batch",
                    "file KB per batch",
                    "result KB per batch",
                    "scheduler MB before",
                    "scheduler MB peak",
                ],
                rows,
            ),
            "",
            f"A batch's round trip through the cluster, identifiers recognizer, the two routes "
            f"alternating (medians of 9; load average {load:.1f}):",
            "",
            table(
                ["units", "in band ms", "through a file ms", "files / band"],
                [
                    [
                        str(n),
                        f"{trips[n, 'band'] * 1e3:.1f}",
                        f"{trips[n, 'files'] * 1e3:.1f}",
                        f"{trips[n, 'files'] / trips[n, 'band']:.2f}",
                    ]
                    for n in sorted({n for n, _ in trips if n != "chunk"})
                ],
            ),
            "",
            f"A pass's whole chunk in flight: {CHUNK_UNITS:,} units (the slice's, taken again "
            f"and again) in batches of 64, every batch submitted at once as a pass submits a "
            f"chunk, identifiers recognizer, the routes alternating (files, band, band, "
            f"files); the scheduler's peak resident memory over its size before each run:",
            "",
            table(
                ["route", "s (runs)", "units/s (median)", "scheduler MB over before (runs)"],
                [
                    [
                        route,
                        ", ".join(f"{sec:.1f}" for sec, _ in trips["chunk", route]),
                        f"{CHUNK_UNITS / _median_s(trips['chunk', route]):,.0f}",
                        ", ".join(f"{mb:.1f}" for _, mb in trips["chunk", route]),
                    ]
                    for route in ("band", "files")
                ],
            ),
            "",
        ]
    )


if __name__ == "__main__":
    main()
