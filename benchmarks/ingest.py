"""Side-by-side indexing benchmark: ``kbx index`` beside a SQLite FTS5 build of the same text.

What is compared, per corpus, in one run (repetitions alternate between the systems, so
a busy spell of the shared machine falls on all of them):

* **kbx first index** - ``index(root, db=..., workers=N)`` into a fresh DuckDB file, in a
  child process (timed inside it, imports excluded): walk, read, hash, extract clean text,
  analyze terms, run the rule-based recognizers (what a ``kbx.toml`` of ``[recognizers]
  disable = ["spacy", "gliner", "acronyms"]`` leaves: dates, identifiers, quantities,
  references and the index's gazetteer), write documents, units, postings, placements,
  mentions, and rebuild the entity layer. This is the part of ``kbx index`` that makes a
  folder searchable; NER runs after it (see ``ner_pass.py``).
* **no-change re-run** - ``index()`` again on the same file with nothing changed; this is
  what an agent pays every time it refreshes before searching.
* **FTS5 build** - the same clean text (``SELECT text FROM units`` read back from the kbx
  index) inserted into ``fts5(text, tokenize='porter unicode61')`` in one transaction, in a
  fresh SQLite file on disk. FTS5 is handed text that is already extracted, so the ratio is
  deliberately unkind to kbx.
* **workers=1** - the same first index in one worker process.
* **baseline** (``--kbx DIR``) - the first index of another checkout (DIR holds its ``kbx``
  package folder), timed the same way in the same rounds: before and after in one run.
* **peak memory** - the first index in a child process, sampled with psutil, on one
  corpus and on that corpus copied ten times into subfolders of a temporary folder:
  byte-identical copies (units dedupe, so only documents and placements grow) and copies
  whose text files each gain a distinct last line (so every copy adds units). The
  writer's peak RSS is exact (VmHWM, read in the child); workers' and the tree's total RSS
  are sampled.

Corpora: folders of ``EVAL/corpora`` (default ``nodejs``), ``formats``, and
``scifact-text``, a plain-text corpus written to a temporary folder from SciFact's
abstracts (see ``scifact_text``). Timings are medians with the files in the page cache.
This is a script, not a test: it measures and reports, and asserts nothing about speed.
Where the time goes inside a run: ``ingest_profile.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import psutil
from common import table, write_section

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "## Ingest"
HEADER = (
    "# Benchmarks\n\nAll figures from this machine (2 cores, 24 GiB); medians of N runs; "
    "each section names the command that produced it.\n"
)
FTS5_DDL = "CREATE VIRTUAL TABLE u USING fts5(text, tokenize='porter unicode61')"
TEXT_SUFFIXES = (".md", ".mdx", ".markdown", ".txt")
MB = 1024 * 1024
SAMPLE_SECONDS = 0.1
CONTENTION_WARN = 0.1  # cores used by other processes worth a warning
RULE_BASED_OFF = "spacy,gliner,acronyms"

# One kbx run in a child process: a first index (and, asked, a no-change re-run) of ROOT
# into DB with the rule-based recognizers; prints seconds, the CPU seconds of the first
# index (writer and workers, user and system) and the peak RSS of this process.
# VmHWM, not ru_maxrss: ru_maxrss survives exec, so a child forked from this (large)
# benchmark process would report at least the parent's RSS.
CHILD = """
import json, resource, sys, time
root, db, workers, kbx, rerun, off = sys.argv[1:7]
if kbx:
    sys.path.insert(0, kbx)
from kbx.annotate.setup import registry_for
from kbx.config import Config
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
def registry():
    return registry_for(Index.for_root(root, db), Registry.load(Config(frozenset(off.split(",")))))
def cpu():
    return sum(
        u.ru_utime + u.ru_stime
        for u in (resource.getrusage(resource.RUSAGE_SELF),
                  resource.getrusage(resource.RUSAGE_CHILDREN))
    )
reg = registry()
started, cpu_started = time.perf_counter(), cpu()
r = index(root, db=db, workers=int(workers), registry=reg)
first = time.perf_counter() - started
first_cpu = cpu() - cpu_started  # this process and its workers (reaped when index returns)
again = None
if rerun == "1":
    reg = registry()
    started = time.perf_counter()
    index(root, db=db, workers=int(workers), registry=reg)
    again = time.perf_counter() - started
peak_kb = 0
with open("/proc/self/status") as f:
    peak_kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
failures = [f["path"] + ": " + f["error"] for f in r.failures]
print(json.dumps({"first": first, "first_cpu": first_cpu, "rerun": again, "self_kb": peak_kb,
                  "failures": failures}))
"""


@dataclass
class Corpus:
    """A folder to index, with the name the tables use."""

    name: str
    root: Path


@dataclass
class Contents:
    """What kbx's first index of a corpus holds (read back from its DuckDB file)."""

    files: int
    bytes: int
    units: int
    placements: int
    failed: int
    db_bytes: int


@dataclass
class SpeedResult:
    """Timings of one corpus, one list entry per repetition."""

    corpus: str
    workers: int
    contents: Contents
    first: list[float] = field(default_factory=list)
    first_cpu: list[float] = field(default_factory=list)
    rerun: list[float] = field(default_factory=list)
    fts5: list[float] = field(default_factory=list)
    fts5_cpu: list[float] = field(default_factory=list)
    single: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    baseline_cpu: list[float] = field(default_factory=list)


@dataclass
class MemoryResult:
    """One child-process index run and its memory peaks."""

    label: str
    contents: Contents
    seconds: float
    writer_mb: float
    worker_mb: float
    tree_mb: float


# ---------------------------------------------------------------- helpers


class Contention:
    """How much CPU other processes take while the benchmark runs (a context manager).

    Once a second, every process outside this benchmark's own tree is charged the CPU
    time it used since the last look (or since it started, if it started during the run);
    on a shared two-core machine this says how far to trust the wall-clock figures.
    """

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.load_at_start = os.getloadavg()[0]
        self.other_cpu = 0.0
        self.wall = 0.0
        self._seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = time.time()

    def __enter__(self) -> Contention:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.wall = time.time() - self._started

    @property
    def cores(self) -> float:
        """Average number of cores other processes kept busy."""
        return self.other_cpu / self.wall if self.wall else 0.0

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        me = psutil.Process()
        ours = {me.pid, *(c.pid for c in me.children(recursive=True))}
        for p in psutil.process_iter(["cpu_times", "create_time"]):
            times = p.info["cpu_times"]
            if times is None:
                continue
            total = times.user + times.system
            prev = self._seen.get(p.pid)
            if prev is None and (p.info["create_time"] or 0) > self._started:
                prev = 0.0
            self._seen[p.pid] = total
            if prev is not None and p.pid not in ours:
                self.other_cpu += max(0.0, total - prev)


def median(values: list[float]) -> float:
    """The median, or NaN for no values."""
    return statistics.median(values) if values else float("nan")


def warm_cache(root: Path) -> None:
    """Read every file once so each repetition starts from the page cache."""
    for path in root.rglob("*"):
        if path.is_file():
            path.read_bytes()


def contents_of(db: Path) -> Contents:
    """Files, bytes, units and placements a kbx index holds."""
    with duckdb.connect(str(db), read_only=True) as con:
        files, size, failed = con.execute(
            "SELECT count(*), coalesce(sum(size), 0), count(*) FILTER (status <> 'ok') "
            "FROM documents"
        ).fetchone()
        units = con.execute("SELECT count(*) FROM units").fetchone()[0]
        placements = con.execute("SELECT count(*) FROM placements").fetchone()[0]
    return Contents(files, size, units, placements, failed, db.stat().st_size)


def unit_texts(db: Path) -> list[str]:
    """The clean text of every unit in a kbx index."""
    with duckdb.connect(str(db), read_only=True) as con:
        return [row[0] for row in con.execute("SELECT text FROM units").fetchall()]


def fts5_build(texts: list[str], path: Path) -> tuple[float, float]:
    """Seconds and CPU seconds to build an FTS5 table of ``texts`` in a new SQLite file,
    committed."""
    start, cpu_start = time.perf_counter(), time.process_time()
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute(FTS5_DDL)
        con.execute("BEGIN")
        con.executemany("INSERT INTO u(text) VALUES (?)", ((t,) for t in texts))
        con.execute("COMMIT")
    finally:
        con.close()
    return time.perf_counter() - start, time.process_time() - cpu_start


def kbx_child(
    root: Path, db: Path, workers: int, kbx: str = "", rerun: bool = False
) -> subprocess.Popen:
    """A child process running ``CHILD``."""
    args = [str(root), str(db), str(workers), kbx, "1" if rerun else "0", RULE_BASED_OFF]
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, text=True, cwd=db.parent
    )


def kbx_run(root: Path, db: Path, workers: int, kbx: str = "", rerun: bool = False) -> dict:
    """One kbx first index (and re-run) in a child process; its JSON report."""
    child = kbx_child(root, db, workers, kbx, rerun)
    out, _ = child.communicate()
    if child.returncode:
        raise RuntimeError(f"indexing {root} in a child process failed ({child.returncode})")
    report = json.loads(out.strip().splitlines()[-1])
    for failure in report["failures"]:
        print(f"  {root.name}: {failure}", file=sys.stderr)
    return report


# ---------------------------------------------------------------- speed


def bench_speed(
    corpus: Corpus, workers: int, repeat: int, single: bool, baseline: str
) -> SpeedResult:
    """First index, no-change re-run, FTS5 build (workers=1, a baseline) for one corpus."""
    warm_cache(corpus.root)
    result: SpeedResult | None = None
    texts: list[str] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="kbx-bench-") as tmp:
            db = Path(tmp) / "index.duckdb"
            r = kbx_run(corpus.root, db, workers, rerun=True)
            if result is None:
                result = SpeedResult(corpus.name, workers, contents_of(db))
                texts = unit_texts(db)
            result.first.append(r["first"])
            result.first_cpu.append(r["first_cpu"])
            result.rerun.append(r["rerun"])
            fts5, fts5_cpu = fts5_build(texts, Path(tmp) / "fts5.sqlite")
            result.fts5.append(fts5)
            result.fts5_cpu.append(fts5_cpu)
            if single:
                one = kbx_run(corpus.root, Path(tmp) / "single.duckdb", 1)
                result.single.append(one["first"])
            if baseline:
                before = kbx_run(corpus.root, Path(tmp) / "baseline.duckdb", workers, baseline)
                result.baseline.append(before["first"])
                result.baseline_cpu.append(before["first_cpu"])
    assert result is not None
    return result


# ---------------------------------------------------------------- memory


def make_copies(src: Path, dest: Path, copies: int, distinct: bool) -> None:
    """``copies`` copies of ``src`` as dest/copy0..; ``distinct`` gives text files a last line."""
    for k in range(copies):
        target = dest / f"copy{k}"
        shutil.copytree(src, target)
        if not distinct:
            continue
        for path in target.rglob("*"):
            if path.suffix.lower() in TEXT_SUFFIXES and path.is_file():
                with path.open("a", encoding="utf-8") as f:
                    f.write(f"\nThis is benchmark copy {k} of this file.\n")


def tree_sample(proc: psutil.Process) -> tuple[float, float]:
    """(sum of RSS over the process tree, largest descendant RSS) in bytes, now.

    RSS, not PSS: reading PSS walks every mapping and, sampled often on a two-core
    machine, slows the run it measures. Shared pages count once per process.
    """
    total, worker = 0.0, 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            rss = p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        total += rss
        if p.pid != proc.pid:
            worker = max(worker, rss)
    return total, worker


def memory_run(label: str, root: Path, workers: int) -> MemoryResult:
    """One child-process first index of ``root`` into a fresh file, sampled."""
    with tempfile.TemporaryDirectory(prefix="kbx-bench-mem-") as tmp:
        db = Path(tmp) / "index.duckdb"
        child = kbx_child(root, db, workers)
        proc = psutil.Process(child.pid)
        peak_tree, peak_worker = 0.0, 0.0
        while child.poll() is None:
            tree, worker = tree_sample(proc)
            peak_tree, peak_worker = max(peak_tree, tree), max(peak_worker, worker)
            time.sleep(SAMPLE_SECONDS)
        out, _ = child.communicate()
        if child.returncode:
            raise RuntimeError(f"indexing {root} in a child process failed ({child.returncode})")
        report = json.loads(out.strip().splitlines()[-1])
        contents = contents_of(db)
    return MemoryResult(
        label, contents, report["first"], report["self_kb"] / 1024, peak_worker / MB, peak_tree / MB
    )


def bench_memory(corpus: Corpus, workers: int, copies: int) -> list[MemoryResult]:
    """Peak memory on the corpus, and on ``copies`` identical and distinct copies of it."""
    warm_cache(corpus.root)
    results = [memory_run(f"{corpus.name} x1", corpus.root, workers)]
    for distinct in (False, True):
        with tempfile.TemporaryDirectory(prefix="kbx-bench-copies-") as tmp:
            make_copies(corpus.root, Path(tmp), copies, distinct)
            kind = "distinct last line" if distinct else "identical"
            results.append(memory_run(f"{corpus.name} x{copies}, {kind}", Path(tmp), workers))
    return results


# ---------------------------------------------------------------- tables


def speed_table(results: list[SpeedResult]) -> str:
    """Throughput, re-run and FTS5 ratio, one row per corpus."""
    header = [
        "corpus",
        "files",
        "MB",
        "units",
        "workers",
        "first index s",
        "files/s",
        "MB/s",
        "no-change re-run s",
        "re-run / first",
        "FTS5 build s",
        "kbx / FTS5",
        "first index CPU s",
        "FTS5 CPU s",
        "kbx / FTS5 CPU",
        "workers=1 s",
    ]
    rows = []
    for r in results:
        c, first, fts = r.contents, median(r.first), median(r.fts5)
        cpu, fts_cpu = min(r.first_cpu), min(r.fts5_cpu)
        rows.append(
            [
                r.corpus,
                f"{c.files:,}",
                f"{c.bytes / MB:.1f}",
                f"{c.units:,}",
                str(r.workers),
                f"{first:.2f}",
                f"{c.files / first:.0f}",
                f"{c.bytes / MB / first:.2f}",
                f"{median(r.rerun):.3f}",
                f"{median(r.rerun) / first:.1%}",
                f"{fts:.3f}",
                f"{first / fts:.1f}x",
                f"{cpu:.2f}",
                f"{fts_cpu:.3f}",
                f"{cpu / fts_cpu:.1f}x",
                f"{median(r.single):.2f}" if r.single else "-",
            ]
        )
    return table(header, rows)


def baseline_table(results: list[SpeedResult], baseline: str) -> str:
    """The baseline checkout's first index beside this one's, per corpus: wall seconds
    (median) and CPU seconds (minimum: other processes only ever add to it)."""
    header = ["corpus", "baseline s", "this kbx s", "speed-up", "baseline / FTS5"]
    header += ["baseline CPU s", "this kbx CPU s", "CPU change", "CPU runs"]
    rows = []
    for r in results:
        before, now, fts = median(r.baseline), median(r.first), median(r.fts5)
        cpu_before, cpu_now = min(r.baseline_cpu), min(r.first_cpu)
        runs = "; ".join(
            f"{b:.1f} vs {a:.1f}" for b, a in zip(r.baseline_cpu, r.first_cpu, strict=True)
        )
        rows.append(
            [
                r.corpus,
                f"{before:.2f}",
                f"{now:.2f}",
                f"{before / now:.2f}x",
                f"{before / fts:.1f}x",
                f"{cpu_before:.2f}",
                f"{cpu_now:.2f}",
                f"{cpu_now / cpu_before - 1:+.0%}",
                runs,
            ]
        )
    return f"Beside the baseline `{baseline}` in the same rounds:\n\n" + table(header, rows)


def memory_table(results: list[MemoryResult]) -> str:
    """Peak memory per corpus size."""
    header = [
        "corpus",
        "files",
        "MB",
        "units",
        "placements",
        "DB MB",
        "index s",
        "writer peak RSS MB",
        "largest worker RSS MB",
        "tree peak RSS MB",
    ]
    rows = [
        [
            m.label,
            f"{m.contents.files:,}",
            f"{m.contents.bytes / MB:.0f}",
            f"{m.contents.units:,}",
            f"{m.contents.placements:,}",
            f"{m.contents.db_bytes / MB:.0f}",
            f"{m.seconds:.1f}",
            f"{m.writer_mb:.0f}",
            f"{m.worker_mb:.0f}",
            f"{m.tree_mb:.0f}",
        ]
        for m in results
    ]
    return table(header, rows)


def interpretation(
    speed: list[SpeedResult], memory: list[MemoryResult], contention: Contention
) -> str:
    """A few sentences against the aims: 6x (3x) FTS5, re-run < 2% of a first index, flat
    memory."""
    ratios = ", ".join(
        f"{r.corpus} {median(r.first) / median(r.fts5):.1f}x wall, "
        f"{min(r.first_cpu) / min(r.fts5_cpu):.1f}x CPU"
        for r in speed
    )
    parts = [f"First index against the FTS5 build of the same text (aim: 6x, 3x): {ratios}."]
    reruns = ", ".join(f"{r.corpus} {median(r.rerun) / median(r.first):.1%}" for r in speed)
    parts.append(f"No-change re-run as a share of the first index (aim: under 2%): {reruns}.")
    if len(memory) > 1:
        base, top = memory[0], max(memory[1:], key=lambda m: m.writer_mb)
        parts.append(
            f"Peak memory of the writing process goes from {base.writer_mb:.0f} MB at x1 to "
            f"at most {top.writer_mb:.0f} MB ({top.label}, {top.writer_mb / base.writer_mb:.1f}x) "
            f"while the indexed bytes grow {top.contents.bytes / base.contents.bytes:.0f}x; "
            f"workers stay at or under {max(m.worker_mb for m in memory):.0f} MB each."
        )
    if contention.cores > CONTENTION_WARN:
        parts.append(
            f"Other processes kept {contention.cores:.2f} of the {os.cpu_count()} cores busy "
            "during this run, so the wall-clock figures are pessimistic; the ratios, from "
            "alternating runs, less so."
        )
    return " ".join(parts)


def machine_note(contention: Contention) -> str:
    """CPU count, memory, the versions that matter and how busy the machine was."""
    return (
        f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 1024**3:.0f} GiB, "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, "
        f"DuckDB {duckdb.__version__}, SQLite {sqlite3.sqlite_version}; "
        f"1-minute load average at start {contention.load_at_start:.2f}; other processes kept "
        f"at least {contention.cores:.2f} cores busy on average during the run "
        "(sampled each second)"
    )


def report(
    args: argparse.Namespace,
    contention: Contention,
    speed: list[SpeedResult],
    memory: list[MemoryResult],
) -> str:
    """The whole ``## Ingest`` section."""
    command = shlex.join(["python", "benchmarks/ingest.py", *sys.argv[1:]])
    parts = [
        SECTION,
        "",
        f"Command: `{command}`  ",
        f"Date: {dt.date.today().isoformat()}  ",
        f"Machine: {machine_note(contention)}  ",
        f"Timings: median of {args.repeat} run(s) (CPU seconds: the minimum, of the first "
        "index's writer and workers), files in the page cache, the systems "
        f"alternating; memory runs: 1 run each, in a child process, sampled every "
        f"{SAMPLE_SECONDS * 1000:.0f} ms. Recognizers: the rule-based ones (see "
        "benchmarks/ingest.py).",
        "",
        speed_table(speed),
        "",
    ]
    if args.kbx:
        parts += [baseline_table(speed, args.kbx_label or args.kbx), ""]
    if memory:
        parts += ["Peak memory of the first index:", "", memory_table(memory), ""]
    parts += [interpretation(speed, memory, contention), ""]
    return "\n".join(parts)


SCIFACT_PER_FILE = 40  # abstracts per text file: ~60 KB files, like a folder of reports


def scifact_text(eval_dir: Path, dest: Path) -> Path:
    """A plain-text corpus made from SciFact's 5,183 abstracts (written under ``dest``,
    never into the repository): files of ``SCIFACT_PER_FILE`` abstracts, each a title
    line, a blank line and the abstract, so files are the size of long reports."""
    root = dest / "scifact-text"
    root.mkdir(parents=True, exist_ok=True)
    with open(eval_dir / "beir_scifact" / "corpus.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    for i in range(0, len(docs), SCIFACT_PER_FILE):
        chunk = docs[i : i + SCIFACT_PER_FILE]
        body = "".join(f"{d.get('title', '')}\n\n{d.get('text', '')}\n\n" for d in chunk)
        (root / f"abstracts-{i // SCIFACT_PER_FILE:04d}.txt").write_text(body, encoding="utf-8")
    return root


def materialized(eval_dir: Path, name: str, tmp: Path) -> Path:
    """The folder of a corpus: in place in the eval data, or written under ``tmp``."""
    if name == "scifact-text":
        return scifact_text(eval_dir, tmp)
    root = eval_dir / "formats" if name == "formats" else eval_dir / "corpora" / name
    if not root.is_dir():
        raise SystemExit(f"no corpus {name!r} at {root}")
    return root


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--eval",
        type=Path,
        default=DEFAULT_EVAL,
        help="evaluation data folder (default: ../shared/eval from the repo root)",
    )
    ap.add_argument(
        "--corpus",
        action="append",
        help="a folder in EVAL/corpora, 'formats' or 'scifact-text' (repeatable; default: "
        "nodejs and scifact-text)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="repetitions per timing")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-single", action="store_true", help="skip the workers=1 runs")
    ap.add_argument("--kbx", default="", help="a folder holding a baseline checkout's kbx package")
    ap.add_argument("--kbx-label", default="", help="what to call the baseline in the table")
    ap.add_argument(
        "--memory-corpus", default="nodejs", help="corpus for the memory runs ('' to skip them)"
    )
    ap.add_argument("--copies", type=int, default=10, help="copies for the grown memory runs")
    ap.add_argument(
        "--write", action="store_true", help=f"update the '{SECTION}' section of docs/BENCHMARKS.md"
    )
    args = ap.parse_args(argv)
    if not args.eval.is_dir():
        ap.error(f"no evaluation data at {args.eval}; pass --eval PATH")
    return args


def main(argv: list[str] | None = None) -> None:
    """Run every benchmark, print the section, and write it when asked."""
    args = parse_args(argv)
    speed = []
    memory: list[MemoryResult] = []
    with Contention() as contention, tempfile.TemporaryDirectory(prefix="kbx-corpora-") as tmp:
        for name in args.corpus or ["nodejs", "scifact-text"]:
            corpus = Corpus(name, materialized(args.eval, name, Path(tmp)))
            print(f"timing {name} ...", file=sys.stderr)
            speed.append(
                bench_speed(corpus, args.workers, args.repeat, not args.no_single, args.kbx)
            )
        if args.memory_corpus:
            target = Corpus(
                args.memory_corpus, materialized(args.eval, args.memory_corpus, Path(tmp))
            )
            print(f"memory on {target.name} x1 and x{args.copies} ...", file=sys.stderr)
            memory = bench_memory(target, args.workers, args.copies)
    section = report(args, contention, speed, memory)
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)
        print(f"wrote {DOC.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
