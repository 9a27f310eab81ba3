"""Reprocessing after a recognizer upgrade, beside a full re-index, on the Node.js corpus.

Indexes ``corpora/nodejs`` with the built-in recognizers, then bumps the date
recognizer's version and runs ``reprocess`` with 1 and 2 workers (alternating,
three rounds, medians quoted), and times a full re-index into a fresh file in the
same run. After each pass it counts, per recognizer, the runs rewritten and the
mentions added and removed: only the bumped recognizer should appear.

    .venv/bin/python benchmarks/reprocess.py [--eval ../shared/eval] [--rounds 3]
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from common import eval_arg, table

from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index


def registry(date_version: str) -> Registry:
    """The built-ins, with the date recognizer under the given version."""
    dates = DateRecognizer()
    dates.info = dataclasses.replace(dates.info, version=date_version)
    return Registry([IdentifierRecognizer(), dates, QuantityRecognizer()])


def touched(idx: Index, since: datetime) -> dict[str, int]:
    """Runs written since ``since``, per recognizer."""
    with idx.reader() as con:
        rows = con.execute(
            "SELECT recognizer, count(*) FROM runs WHERE ran_at >= ? GROUP BY 1", [since]
        ).fetchall()
    return dict(rows)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    corpus = args.eval.resolve() / "corpora" / "nodejs"
    times: dict[str, list[float]] = {"full re-index": [], "1 worker": [], "2 workers": []}
    phase: dict[int, list[float]] = {1: [], 2: []}  # the recognize-and-write loop alone
    counts = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "nodejs.duckdb"
        index(corpus, db=db, workers=2, registry=registry("1"))
        idx = Index.find(db)
        with idx.reader() as con:
            n_units = con.execute("SELECT count(*) FROM units").fetchone()[0]
        bump = 1
        for round_ in range(args.rounds):
            fresh = Path(tmp) / f"full{round_}.duckdb"
            started = time.perf_counter()
            index(corpus, db=fresh, workers=2, registry=registry("1"))
            times["full re-index"].append(time.perf_counter() - started)
            fresh.unlink()
            for workers in (1, 2):
                bump += 1
                since = datetime.now()
                started = time.perf_counter()
                report = reprocess(idx, registry(str(bump)), workers=workers)
                times["1 worker" if workers == 1 else "2 workers"].append(
                    time.perf_counter() - started
                )
                phase[workers].append(sum(d.seconds for d in report.done))
                runs = touched(idx, since)
                counts = [[d.name, runs.get(d.name, 0), d.mentions, d.removed] for d in report.done]
    full = statistics.median(times["full re-index"])
    rows = [
        [name, f"{statistics.median(ts):.2f}", f"{full / statistics.median(ts):.1f}x"]
        for name, ts in times.items()
    ]
    one, two = statistics.median(times["1 worker"]), statistics.median(times["2 workers"])
    print(f"### Reprocess after a date-recognizer bump, Node.js ({n_units:,} units)\n")
    print(table(["pass", "median s", "faster than full re-index"], rows))
    loop1, loop2 = statistics.median(phase[1]), statistics.median(phase[2])
    print(
        f"\n2 workers vs 1: {one / two:.2f}x end to end; {loop1 / loop2:.2f}x in the "
        f"recognize-and-write loop alone ({loop1:.2f} s vs {loop2:.2f} s; the rest is planning, "
        "opening the file and the document context refresh, which do not parallelize).\n"
    )
    print(table(["recognizer", "runs rewritten", "mentions added", "mentions removed"], counts))


if __name__ == "__main__":
    main()
