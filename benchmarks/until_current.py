"""Time until every recognizer is current: a first ``kbx index`` of a whole corpus with
spaCy on, from nothing to searchable and on to the last recognizer's run (issue 43 item 7).

What is measured: each corpus is copied whole into a fresh folder with a ``kbx.toml`` that
leaves spaCy on (GLiNER and the acronym recognizer off: the first has no model here, the
second is not a model), then ``index(root, workers=2)`` runs as ``kbx index`` does. The
report gives when the folder became searchable (the rule recognizers in), when every
recognizer was current (the spaCy pass after it), the units spaCy read and their words, and
the pass's words per second beside the bare model's ``nlp.pipe`` limit that ``ner_limit``
measures on the same machine (its last figure is quoted, not rerun: a run of the limit over
a whole corpus doubles the time). One run per corpus: minutes each, on a shared machine
whose load is printed.

    .venv/bin/python benchmarks/until_current.py [--eval ../shared/eval] [--corpus nodejs]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from common import table, write_section

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "## Until every recognizer is current (issue 43)"
NER_ON = '[recognizers]\ndisable = ["gliner", "acronyms"]\n'
CORPORA = {"nodejs": "corpora/nodejs", "rfcs_dev": "corpora/rfcs_dev"}


def words_of(db: Path) -> tuple[int, int]:
    """(units, words) of an index: words as whitespace-separated tokens of the units' text."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT count(*), sum(len(string_split_regex(trim(text), '\\s+'))) FROM units"
        ).fetchone()


def run(src: Path, tmp: Path) -> dict:
    root = tmp / src.name
    shutil.copytree(src, root)
    (root / "kbx.toml").write_text(NER_ON)
    from kbx.indexing.ingest import index

    load = os.getloadavg()[0]
    started = time.perf_counter()
    report = index(root, workers=2)
    total = time.perf_counter() - started
    spacy = next((r for r in report.recognizers if r.name == "spacy"), None)
    if spacy is None or not spacy.units:
        raise SystemExit(f"spaCy did not run on {src}: {report.unavailable}")
    units, words = words_of(root / ".kbx" / "index.duckdb")
    return {
        "searchable": report.searchable_s or 0.0,
        "current": total,
        "units": units,
        "words": words,
        "spacy_units": spacy.units,
        "load": (load, os.getloadavg()[0]),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--corpus", action="append", choices=sorted(CORPORA))
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kbx-until-current-") as tmp:
        for name in args.corpus or sorted(CORPORA):
            r = run(args.eval / CORPORA[name], Path(tmp))
            print(name, r, file=sys.stderr)
            after = r["current"] - r["searchable"]
            rows.append(
                [
                    name,
                    f"{r['units']:,}",
                    f"{r['words']:,}",
                    f"{r['searchable']:.1f}",
                    f"{r['current']:.1f}",
                    f"{r['words'] / after:,.0f}" if after > 0 else "-",
                    f"{r['load'][0]:.1f}-{r['load'][1]:.1f}",
                ]
            )
    heads = [
        "corpus",
        "units",
        "words",
        "searchable, s",
        "every recognizer current, s",
        "words/s after searchable",
        "load",
    ]
    section = "\n".join(
        [
            SECTION,
            "",
            "A first `index(root, workers=2)` with spaCy on (GLiNER and acronyms off), the "
            "whole corpus, one run each; the words/s column is the corpus's words over the "
            "time from searchable to current (the spaCy pass, its start-up included). The "
            "bare model's `nlp.pipe` on one process: see \"spaCy inside kbx against the bare "
            'model".',
            "",
            table(heads, rows),
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, "# Benchmarks\n")


if __name__ == "__main__":
    main()
