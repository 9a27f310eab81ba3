"""Where a first index spends its time: py-spy samples of one ``index()`` call, by stage.

Each run indexes a corpus into a fresh file in a child process, with the recognizers a
``kbx.toml`` of ``[recognizers] disable = ["spacy", "gliner", "acronyms"]`` leaves (the
rule-based ones and the index's gazetteer), under ``py-spy record --subprocesses --idle``.
Every sample of a main thread is put in one stage by its innermost frame that names one
(a text-map call made by a parser counts as offset maps, not parsing), and the samples are
summed per process role: the writer (the process that called ``index()``) and its
workers. Idle samples count too, as "wait": a writer waiting on its workers, or a worker
waiting for its next file. Figures are seconds of a process's wall time (100 samples a
second), so on a shared machine they grow with the load; compare rows of one run.

``--kbx DIR`` profiles another checkout (DIR holds its ``kbx`` package folder), so a
"before" table can be made beside the current code. py-spy is on PyPI
(``pip install py-spy``); ``--py-spy PATH`` names its binary when it is not on the path.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from common import table, write_section
from ingest import DEFAULT_EVAL, DOC, HEADER, REPO, materialized

RATE = 100  # py-spy samples per second
RULE_BASED_OFF = ("spacy", "gliner", "acronyms")

CHILD = """
import json, sys, time
if sys.argv[4]:
    sys.path.insert(0, sys.argv[4])
from kbx.annotate.setup import registry_for
from kbx.config import Config
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
root, db, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
off = frozenset(sys.argv[5].split(","))
registry = registry_for(Index.for_root(root, db), Registry.load(Config(off)))
started = time.perf_counter()
index(root, db=db, workers=workers, registry=registry)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""

# A leaf frame that waits: a lock, a condition, a pipe or a sleep.
WAIT = re.compile(
    r"^(?:[\w<>]+\.)*(wait|acquire|select|poll|_poll|_recv|_recv_bytes|recv|recv_bytes|get|"
    r"sleep|__enter__|_wait_for_tstate_lock) \((threading|selectors|multiprocessing/|queue|"
    r"concurrent/futures/)"
)
# Stages by the frame's file, checked from the innermost frame outward; first match wins.
STAGES = [
    ("offset maps", ("extract/textmap.py",)),
    (
        "parse",
        (
            "extract/formats/",
            "markdown_it/",
            "markdown_it_pyrs",
            "html/parser",
            "pylatexenc",
            "pypdfium2",
            "_markupbase",
            "yaml/",
            "extract/decode.py",
            "charset_normalizer",
        ),
    ),
    ("units", ("extract/units.py", "extract/model.py", "extract/document.py")),
    ("analysis", ("analysis.py",)),
    ("recognizers", ("recognizers/", "gazetteer/", "dateparser", "pint/", "stdnum", "ahocorasick")),
    ("open/close index", ("store/db.py:2", "store/schema.py")),
    ("entities+context", ("entities/", "annotate/context.py")),
    ("store writes", ("store/", "annotate/run.py", "indexing/")),
    ("ipc", ("multiprocessing/", "concurrent/futures/", "pickle", "copyreg")),
]
COLUMNS = ["wait", "read+hash", *[s for s, _ in STAGES], "other"]  # read+hash: READING below
# indexing/ingest.py frames that are the worker's own reading, not a store write
READING = re.compile(r"^(_?read_one|_read_inside|_opened_path|timed) ")


@dataclass
class Profile:
    """One profiled run: its wall seconds and the seconds per (role, stage)."""

    corpus: str
    workers: int
    seconds: float
    by_role: dict[str, collections.Counter]


def stage_of(frames: list[str]) -> str:
    """The stage one sample is spent in."""
    if not frames or WAIT.match(frames[-1]):
        return "wait"
    for frame in reversed(frames):
        if READING.match(frame):
            return "read+hash"
        for name, keys in STAGES:
            if any(k in frame for k in keys):
                return name
    return "other"


def summarize(raw: Path) -> dict[str, collections.Counter]:
    """Seconds per stage for the writer and for its workers together, main threads only."""
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        frames = stack.split(";")
        if any("Thread._bootstrap" in f for f in frames):
            continue  # a helper thread (the pool's queue feeder and manager)
        procs = sum(f.startswith("process ") for f in frames)
        role = "writer" if procs <= 1 else "workers"
        stage = stage_of([f for f in frames if not f.startswith("process ")])
        out[role][stage] += int(n) / RATE
    return out


def profile(spy: str, corpus: str, root: Path, workers: int, kbx: str) -> Profile:
    """Index ``root`` once under py-spy; its wall time and where it went."""
    with tempfile.TemporaryDirectory(prefix="kbx-profile-") as tmp:
        raw = Path(tmp) / "samples.txt"
        db = Path(tmp) / "index.duckdb"
        script = Path(tmp) / "child.py"  # a file, not -c: py-spy prints the command line
        script.write_text(CHILD, encoding="utf-8")
        child = [sys.executable, str(script), str(root), str(db), str(workers), kbx]
        cmd = [spy, "record", "--subprocesses", "--idle", "--nonblocking", "-r", str(RATE)]
        cmd += ["-f", "raw", "-o", str(raw), "--", *child, ",".join(RULE_BASED_OFF)]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        if done.returncode:
            raise SystemExit(f"profiled run failed:\n{done.stderr[-2000:]}")
        line = next(x for x in done.stdout.splitlines() if x.startswith('{"seconds"'))
        return Profile(corpus, workers, json.loads(line)["seconds"], summarize(raw))


def profile_table(profiles: list[Profile]) -> str:
    """One row per run and process role; seconds per stage and the share of the role."""
    header = ["corpus", "workers", "wall s", "process", "total s", *[f"{c} s" for c in COLUMNS]]
    rows = []
    for p in profiles:
        for role in ("writer", "workers"):
            spent = p.by_role.get(role)
            if not spent:
                continue
            total = sum(spent.values())
            cells = [
                f"{spent[c]:.1f} ({spent[c] / total:.0%})" if spent[c] else "-" for c in COLUMNS
            ]
            rows.append(
                [p.corpus, str(p.workers), f"{p.seconds:.1f}", role, f"{total:.1f}", *cells]
            )
    return table(header, rows)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL, help="evaluation data folder")
    ap.add_argument(
        "--corpus", action="append", help="nodejs, scifact-text, formats (default: the first two)"
    )
    ap.add_argument("--workers", type=int, action="append", help="repeatable (default: 1 and 2)")
    ap.add_argument("--py-spy", default=shutil.which("py-spy") or "py-spy", help="its binary")
    ap.add_argument("--kbx", default="", help="a folder holding another checkout's kbx package")
    ap.add_argument("--label", default="now", help="names the section written")
    ap.add_argument("--write", action="store_true", help="write the section to docs/BENCHMARKS.md")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    profiles = []
    with tempfile.TemporaryDirectory(prefix="kbx-profile-corpora-") as tmp:
        for name in args.corpus or ["nodejs", "scifact-text"]:
            root = materialized(args.eval, name, Path(tmp))
            for workers in args.workers or [1, 2]:
                print(f"profiling {name}, workers={workers} ...", file=sys.stderr)
                profiles.append(profile(args.py_spy, name, root, workers, args.kbx))
    command = shlex.join(["python", "benchmarks/ingest_profile.py", *sys.argv[1:]])
    title = f"## Ingest profile ({args.label})"
    section = "\n".join(
        [
            title,
            "",
            f"Command: `{command}`. Seconds of each process role's wall time by stage "
            "(py-spy samples; see the script's docstring), one run each.",
            "",
            profile_table(profiles),
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(DOC, title, section, HEADER)
        print(f"wrote {DOC.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
