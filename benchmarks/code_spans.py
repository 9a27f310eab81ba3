"""Mentions inside inline code and across table cells, before and after their rules (issue 13).

Each corpus of the eval folder is walked and extracted as ``kbx index`` would (the files
read in place; units kept once per hash, as the store keeps them), so its units carry the
inline code spans and cell breaks the parsers found. Every unit that is not a code unit
is then recognized twice by
``kbx.annotate.run.recognize_batch``, the function the workers run: once with the
recognizer's rules for inline code and cells switched off (``inline_code`` and
``cross_cells`` true: what versions before these rules stored) and once as declared.
A mention is counted

* **in code** when it lies wholly inside one inline code span (the rule drops these);
* **partly code** when it overlaps a span without lying inside one ("`30` seconds": kept);
* **across** when it holds a cell or row separator or a blank line (dropped);
* **new** when it is found only under the rules: a row break read as ``|`` splits one
  mention across two rows into what each row holds.

    .venv/bin/python benchmarks/code_spans.py [--eval ../shared/eval] [--ner] [--write]
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from pathlib import Path

from common import eval_arg, table, write_section

from kbx.annotate.run import recognize_batch
from kbx.errors import ExtractError
from kbx.extract import extract
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.source.walk import walk

CORPORA = {  # name -> folder under the eval folder
    "nodejs": "corpora/nodejs",
    "html-docs": "formats/html",
    "latex": "formats/latex",
}
DOC = Path(__file__).resolve().parents[1] / "docs" / "BENCHMARKS.md"
SECTION = "## Inline code and table cells (issue 13)"
_BLANK = re.compile(r"\n\s*\n")


class Unruled:
    """A recognizer with its rules for inline code and cells off: what ran before them."""

    def __init__(self, inner):
        self.inner = inner
        self.info = dataclasses.replace(inner.info, inline_code=True, cross_cells=True)

    def recognize(self, texts):
        return self.inner.recognize(texts)


def unit_rows(folder: Path) -> list[tuple]:
    """(hash, text, heading path, kind, code spans, breaks) of every distinct unit of
    ``folder``: the rows the recognizer workers read from the store."""
    rows: dict[str, tuple] = {}
    for found in walk(folder):
        if found.error:
            continue
        try:
            doc = extract(found.rel, (folder / found.rel).read_bytes())
        except ExtractError:
            continue
        for u in doc.units:
            spans = [list(c) for c in u.code_spans]
            rows.setdefault(u.hash, (u.hash, u.text, u.heading_path, u.kind, spans, u.breaks))
    return list(rows.values())


def where(row: tuple, start: int, end: int) -> str | None:
    """How a mention at ``[start, end)`` of this unit sits: in code, partly code, across."""
    text, spans, breaks = row[1], row[4] or [], row[5] or []
    if any(a <= start and end <= b for a, b in spans):
        return "in code"
    if any(x for x in breaks if start <= x < end) or _BLANK.search(text, start, end):
        return "across"
    if any(a < end and start < b for a, b in spans):
        return "partly code"
    return None


def measure(r, rows: list[tuple]) -> tuple[dict, Counter, float]:
    """Counts before and after the rules, the texts the rules dropped, and the seconds."""
    rows = [row for row in rows if row[3] != "code"]
    started = time.perf_counter()
    found = {}
    for label, rec in (("before", Unruled(r)), ("after", r)):
        found[label] = {
            (m[0], m[3], m[4]): m[6]
            for i in range(0, len(rows), 500)
            for m in recognize_batch(rec, rows[i : i + 500])[0]
        }
    by_hash = {row[0]: row for row in rows}
    counts: Counter = Counter()
    dropped: Counter = Counter()
    for label, ms in found.items():
        counts[label] = len(ms)
        for h, s, e in ms:
            counts[(label, where(by_hash[h], s, e))] += 1
    for key, text in found["before"].items():
        if key not in found["after"]:
            dropped[" ".join(text.split())[:30]] += 1
    counts["new"] = len(found["after"].keys() - found["before"].keys())
    return counts, dropped, time.perf_counter() - started


def recognizers(ner: bool) -> list:
    out = [DateRecognizer(), QuantityRecognizer(), IdentifierRecognizer()]
    if ner:
        from kbx.recognizers.spacy_ner import SpacyRecognizer

        out.append(SpacyRecognizer())
    return out


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--ner", action="store_true", help="spaCy too (slow: minutes)")
    p.add_argument("--write", action="store_true", help=f"record the tables in {DOC.name}")
    args = p.parse_args()
    eval_dir = args.eval.resolve()
    shape, counts_rows, examples = [], [], []
    for name, sub in CORPORA.items():
        rows = unit_rows(eval_dir / sub)
        prose = [row for row in rows if row[3] != "code"]
        shape.append(
            [
                name,
                len(rows),
                len(prose),
                sum(1 for row in prose if row[4]),
                sum(len(row[4] or []) for row in prose),
                sum(1 for row in prose if row[5]),
                sum(len(row[5] or []) for row in prose),
            ]
        )
        for r in recognizers(args.ner):
            c, dropped, seconds = measure(r, rows)
            counts_rows.append(
                [
                    name,
                    f"{r.info.name} {r.info.version}",
                    c["before"],
                    c[("before", "in code")],
                    c[("before", "across")],
                    c["after"],
                    c[("after", "in code")],
                    c[("after", "across")],
                    c["new"],
                    c[("after", "partly code")],
                ]
            )
            top = ", ".join(f"`{t}` {n}" for t, n in dropped.most_common(8))
            if top:
                examples.append(f"- {name}, {r.info.name}: {top}")
            print(counts_rows[-1], f"{seconds:.1f}s", flush=True)
    section = "\n\n".join(
        [
            SECTION,
            "`.venv/bin/python benchmarks/code_spans.py --eval ../shared/eval"
            + (" --ner" if args.ner else "")
            + "`. Units not of code; spans and breaks as the parsers found them:",
            table(
                [
                    "corpus",
                    "units",
                    "not code",
                    "with inline code",
                    "code spans",
                    "with cells",
                    "breaks",
                ],
                shape,
            ),
            "Mentions before the rules (inline code read, cells crossed) and after them:",
            table(
                [
                    "corpus",
                    "recognizer",
                    "before",
                    "in code",
                    "across",
                    "after",
                    "in code",
                    "across",
                    "new",
                    "partly code, kept",
                ],
                counts_rows,
                right=2,
            ),
            "What the rules dropped most often (the mention's text, then how many):",
            "\n".join(examples),
        ]
    )
    print(section)
    if args.write:
        write_section(DOC, SECTION, section + "\n", "# Benchmarks\n")


if __name__ == "__main__":
    main()
