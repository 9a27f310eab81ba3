"""spaCy inside kbx against the model's own limit: words per second, side by side.

Three ways over the same units of a rule-built index (every ``--every``-th file of the
Node.js corpus, or any folder), the same pipeline with the same pipes (NER alone, as the
recognizer selects them), one process each:

- ``nlp.pipe``: the bare model over the texts the recognizer is shown, reading ``doc.ents``;
  the limit for this model on this machine;
- ``recognize_batch``: kbx's work around the model in one process (text shown, spans
  checked and trimmed, the rules for code and cells), no store;
- ``kbx pass``: ``annotate.run.recognize`` with one worker, as ``kbx index`` runs it after
  the index is searchable (process start, reading units, writing runs and mentions).

The three alternate ``--repeat`` times; medians, and the load, are reported.

    .venv/bin/python benchmarks/ner_limit.py [--eval ../shared/eval] [--every 8] [--write]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from common import DEFAULT_EVAL, REPO, table, write_section
from ner_pass import NER_ON, make_slice, ner_pass

SECTION = "## spaCy inside kbx against the bare model (issue 43)"
HEADER = "# Benchmarks\n"


def unit_rows(db: Path) -> list[tuple]:
    """The rows the pass reads, in its order: (hash, text, heading path, kind, code spans,
    breaks)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT unit_hash, text, heading_path, kind, code_spans, breaks FROM units "
            "ORDER BY unit_hash"
        ).fetchall()


def bare(nlp, texts: list[str], batch_size: int) -> float:
    started = time.perf_counter()
    n = 0
    for doc in nlp.pipe(texts, batch_size=batch_size):
        n += len(doc.ents)
    return time.perf_counter() - started


def in_kbx(r, rows: list[tuple], size: int) -> float:
    from kbx.annotate.run import recognize_batch

    started = time.perf_counter()
    for i in range(0, len(rows), size):
        recognize_batch(r, rows[i : i + size])
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--folder", type=Path, help="a folder to index instead of the Node.js slice")
    ap.add_argument("--every", type=int, default=8, help="take every Nth file of the corpus")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    from kbx.annotate.run import batch_units
    from kbx.indexing.ingest import index
    from kbx.recognizers.base import shown_text
    from kbx.recognizers.spacy_ner import SpacyRecognizer

    r = SpacyRecognizer()
    nlp = r.load()
    times: dict[str, list[float]] = {"nlp.pipe": [], "recognize_batch": [], "kbx pass": []}
    loads = []
    with tempfile.TemporaryDirectory(prefix="kbx-ner-limit-") as tmp:
        built = Path(tmp) / "built"
        if args.folder:
            shutil.copytree(args.folder, built)
            (built / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner"]\n')
        else:
            make_slice(args.eval / "corpora" / "nodejs", built, args.every)
        index(built, workers=2)
        rows = unit_rows(built / ".kbx" / "index.duckdb")
        shown = [row for row in rows if row[3] != "code"]  # what the recognizer is shown
        texts = [shown_text(r.info, row[1], row[5] or []) for row in shown]
        words = sum(len(t.split()) for t in texts)
        size = batch_units(r)
        for rep in range(args.repeat):
            loads.append(os.getloadavg()[0])
            times["nlp.pipe"].append(bare(nlp, texts, r.batch_size))
            times["recognize_batch"].append(in_kbx(r, rows, size))
            root = Path(tmp) / f"pass-{rep}"
            shutil.copytree(built, root)
            (root / "kbx.toml").write_text(NER_ON)
            times["kbx pass"].append(ner_pass(root, 1)["seconds"])
            shutil.rmtree(root)
            print({k: round(v[-1], 1) for k, v in times.items()}, file=sys.stderr)
    limit = statistics.median(times["nlp.pipe"])
    out = []
    for name, ts in times.items():
        m = statistics.median(ts)
        out.append(
            [name, f"{m:.1f}", ", ".join(f"{t:.1f}" for t in ts), f"{words / m:,.0f}",
             f"{limit / m:.2f}"]
        )  # fmt: skip
    source = str(args.folder) if args.folder else f"every {args.every}th Node.js file"
    command = shlex.join(["python", "benchmarks/ner_limit.py", *(argv or sys.argv[1:])])
    section = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`, {time.strftime('%Y-%m-%d %H:%M')} UTC, commit "
            f"{os.popen(f'git -C {REPO} rev-parse --short HEAD').read().strip()}; {source}: "
            f"{len(rows)} units, {len(texts)} shown to spaCy ({words:,} words); "
            f"`{r.model}` (NER only), batch {r.batch_size}; one process each; "
            f"{args.repeat} alternating runs; 1-minute load {min(loads):.1f}-{max(loads):.1f} "
            f"on {os.cpu_count()} cores.",
            "",
            table(["way", "median s", "runs s", "words/s", "of the limit"], out),
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(REPO / "docs" / "BENCHMARKS.md", SECTION, section, HEADER)


if __name__ == "__main__":
    main()
