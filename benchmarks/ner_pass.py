"""The NER pass of ``kbx index`` on one core and on two: units per second, side by side.

What is measured: a folder is indexed once with the rule-based recognizers only (the part
of a first index that makes it searchable); then, on copies of that index, the pass that
``kbx index`` runs next (``annotate.run.recognize`` with spaCy, as ``kbx reprocess`` runs it)
with ``--workers 1`` and ``--workers N``, alternating, ``--repeat`` times each. The files
are a deterministic slice of the Node.js corpus (every ``--every``-th file, so a run takes
tens of seconds, not minutes). The ratio of the medians says how far the second core pays;
the machine is shared, so the runs alternate and the load is printed with them.

Also checked on the way: the pass resumes. One more copy is killed (SIGKILL) halfway
through its pass and then run again; the units done then plus those done before must be
every unit, each with one run.
"""

from __future__ import annotations

import argparse
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
from common import table, write_section

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "## NER pass after searchable"
HEADER = "# Benchmarks\n"
RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
NER_ON = '[recognizers]\ndisable = ["gliner", "acronyms"]\n'

PASS = """
import json, sys, time
from kbx.annotate.run import recognize
from kbx.annotate.setup import registry_for
from kbx.store.db import Index
idx = Index.for_root(sys.argv[1])
registry = registry_for(idx)
started = time.perf_counter()
done = recognize(idx, registry, ["spacy"], workers=int(sys.argv[2]),
                 progress=lambda name, n, total: print(n, total, flush=True))
print(json.dumps({"seconds": time.perf_counter() - started, "units": done[0].units}))
"""


def make_slice(src: Path, dest: Path, every: int) -> Path:
    """Every ``every``-th file of ``src`` (sorted), copied under ``dest`` with a kbx.toml."""
    files = sorted(p for p in src.rglob("*") if p.is_file())
    for p in files[::every]:
        target = dest / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, target)
    (dest / "kbx.toml").write_text(RULES_ONLY)
    return dest


def ner_pass(root: Path, workers: int, kill_after: int | None = None) -> dict:
    """One NER pass on ``root``'s index in a child process; with ``kill_after``, SIGKILL
    it once that many units are done."""
    child = subprocess.Popen(
        [sys.executable, "-c", PASS, str(root), str(workers)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    last = "{}"
    for line in child.stdout:
        last = line
        if kill_after is not None and line[0].isdigit() and int(line.split()[0]) >= kill_after:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return {"killed_at": int(line.split()[0])}
    child.wait()
    if child.returncode:
        raise RuntimeError(f"NER pass failed ({child.returncode})")
    return json.loads(last)


def runs_of(root: Path) -> tuple[int, int]:
    """(units, units with one spaCy run each)."""
    with duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True) as con:
        units = con.execute("SELECT count(*) FROM units").fetchone()[0]
        once = con.execute(
            "SELECT count(*) FROM (SELECT unit_hash FROM runs WHERE recognizer = 'spacy' "
            "GROUP BY unit_hash HAVING count(*) = 1)"
        ).fetchone()[0]
    return units, once


def copy_index(built: Path, dest: Path) -> Path:
    shutil.copytree(built, dest)
    (dest / "kbx.toml").write_text(NER_ON)
    return dest


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--every", type=int, default=8, help="take every Nth file of the corpus")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    from kbx.indexing.ingest import index

    times: dict[int, list[float]] = {1: [], args.workers: []}
    loads = []
    with tempfile.TemporaryDirectory(prefix="kbx-ner-pass-") as tmp:
        built = make_slice(args.eval / "corpora" / "nodejs", Path(tmp) / "built", args.every)
        index(built, workers=2)
        files = sum(1 for p in built.rglob("*.md*") if ".kbx" not in p.parts)
        units = runs_of(built)[0]
        for rep in range(args.repeat):
            for w in (1, args.workers):
                root = copy_index(built, Path(tmp) / f"w{w}-{rep}")
                loads.append(os.getloadavg()[0])
                r = ner_pass(root, w)
                times[w].append(r["seconds"])
                print(f"workers={w}: {r['seconds']:.1f} s, {r['units']} units", file=sys.stderr)
                shutil.rmtree(root)
        root = copy_index(built, Path(tmp) / "killed")
        ner_pass(root, args.workers, kill_after=units // 2)
        resumed = ner_pass(root, args.workers)["units"]
        total, once = runs_of(root)
        killed = units - resumed  # what the killed pass had committed
    one, many = statistics.median(times[1]), statistics.median(times[args.workers])
    rows = [
        [
            str(w),
            f"{statistics.median(times[w]):.1f}",
            ", ".join(f"{t:.1f}" for t in times[w]),
            f"{units / statistics.median(times[w]):.1f}",
            f"{one / statistics.median(times[w]):.2f}x",
        ]
        for w in (1, args.workers)
    ]
    command = shlex.join(["python", "benchmarks/ner_pass.py", *(argv or sys.argv[1:])])
    section = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d')}. {files} files "
            f"(every {args.every}th of the Node.js corpus), {units} units; spaCy "
            f"(`en_core_web_sm`, NER only) over units the rule-based index already holds; "
            f"{args.repeat} alternating runs each; 1-minute load average "
            f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores.",
            "",
            table(["workers", "median s", "runs s", "units/s", "speed-up"], rows),
            "",
            f"{args.workers} processes do the pass {one / many:.2f}x as fast as one. Killed "
            f"with SIGKILL halfway, a pass had committed {killed} of {units} units; the "
            f"next did the {resumed} others, and {once} of {total} units have exactly one "
            "spaCy run.",
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)


if __name__ == "__main__":
    main()
