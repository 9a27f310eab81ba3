"""Throughput of each built-in recognizer on the Node.js corpus's units, beside plain
``dateparser.search_dates`` on the same units (the date recognizer's peer).

Units come from a fresh kbx index of ``corpora/nodejs``. Each recognizer runs over all
units in batches of 500, three times; medians are quoted. search_dates is slow, so it
runs once over a fixed sample of units and its rate is scaled per unit and per character.

    .venv/bin/python benchmarks/recognizers.py [--eval ../shared/eval] [--sample 600]
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from common import build_kbx, eval_arg, table

from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.store.db import Index


def units(eval_dir: Path, tmp: Path) -> list[str]:
    db = tmp / "nodejs.duckdb"
    build_kbx(eval_dir / "corpora" / "nodejs", db, "snowball")
    with Index.for_root(eval_dir / "corpora" / "nodejs", db).reader() as con:
        return [t for (t,) in con.execute("SELECT text FROM units ORDER BY unit_id").fetchall()]


def timed(recognizer, texts: list[str], repeats: int = 3) -> tuple[float, int]:
    """Median seconds over all texts, and the mentions found."""
    times, found = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        found = sum(
            len(ms)
            for i in range(0, len(texts), 500)
            for ms in recognizer.recognize(texts[i : i + 500])
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times), found


def search_dates_rate(texts: list[str]) -> tuple[float, int]:
    """Seconds per character of plain search_dates, and its finds, on ``texts``."""
    from dateparser.search import search_dates

    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    found = sum(len(search_dates(t, languages=["en"]) or []) for t in texts)
    return (time.perf_counter() - started) / sum(map(len, texts)), found


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, default=600, help="units for search_dates")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        texts = units(args.eval.resolve(), Path(tmp))
    chars = sum(map(len, texts))
    rows = []
    date_seconds = 0.0
    for r in (IdentifierRecognizer(), DateRecognizer(), QuantityRecognizer()):
        seconds, found = timed(r, texts)
        date_seconds = seconds if r.info.name == "dates" else date_seconds
        rows.append(
            [
                f"{r.info.name} {r.info.version}",
                len(texts),
                f"{seconds:.2f}",
                f"{len(texts) / seconds:,.0f}",
                f"{chars / seconds / 1e6:.2f}",
                found,
            ]
        )
    sample = random.Random(7).sample(texts, min(args.sample, len(texts)))
    per_char, found = search_dates_rate(sample)
    seconds = per_char * chars
    rows.append(
        [
            f"dateparser.search_dates ({len(sample)}-unit sample, scaled)",
            len(texts),
            f"{seconds:.1f}",
            f"{len(texts) / seconds:,.0f}",
            f"{chars / seconds / 1e6:.2f}",
            f"{found} in the sample",
        ]
    )
    print(
        f"### Recognizer throughput, Node.js units ({len(texts):,} units, {chars / 1e6:.1f} "
        "M characters; one process)\n"
    )
    print(table(["recognizer", "units", "median s", "units/s", "M chars/s", "mentions"], rows))
    print(f"\nDate recognizer vs search_dates: {seconds / date_seconds:.0f}x the throughput.")


if __name__ == "__main__":
    main()
