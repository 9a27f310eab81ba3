"""Identifier recognizer against a plain regex-plus-checksum scan of real files, and speed.

``../shared/eval/identifiers/identifiers.tsv`` lists what a simple scanner finds in the
files under ``sources/`` (it is not gold). We run kbx's identifier recognizer over the
same files line by line and compare, per type, the (file, line, normalized value) sets:
agreement, and each side's extra finds, printed so they can be checked by hand against
the source line. Throughput is measured with the other recognizers in recognizers.py.

    .venv/bin/python benchmarks/identifiers.py [--eval ../shared/eval] [--show 8]
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

from common import eval_arg, table
from stdnum import isbn

from kbx.recognizers.identifiers import IdentifierRecognizer

TYPES = {
    "arxiv": "ARXIV",
    "doi": "DOI",
    "isbn10": "ISBN",
    "isbn13": "ISBN",
    "issn": "ISSN",
    "orcid": "ORCID",
}
Key = tuple[str, int, str]  # file, line, normalized value


def scanner(folder: Path) -> tuple[dict[str, set[Key]], dict[Key, str]]:
    """The scanner's finds per type (valid check digits only) and their context lines."""
    found: dict[str, set[Key]] = defaultdict(set)
    context: dict[Key, str] = {}
    csv.field_size_limit(sys.maxsize)
    with (folder / "identifiers.tsv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row["checksum"] == "bad-checksum":
                continue
            kind = TYPES[row["type"]]
            value = row["normalized"].lower()
            if kind == "ISBN":
                value = isbn.to_isbn13(isbn.compact(value))
            file = f"{row['repo'].replace('/', '__')}/{row['path']}"
            key = (file, int(row["line"]), value.lower())
            found[kind].add(key)
            context[key] = row["context"]
    return found, context


def ours(folder: Path) -> tuple[dict[str, set[Key]], dict[Key, str]]:
    """kbx's finds over every source file, whole, each placed at its line."""
    found: dict[str, set[Key]] = defaultdict(set)
    context: dict[Key, str] = {}
    rec = IdentifierRecognizer()
    for path in sorted((folder / "sources").rglob("*")):
        if not path.is_file():
            continue
        file = path.relative_to(folder / "sources").as_posix()
        text = path.read_text("utf-8", "replace")
        lines = text.split("\n")
        (ms,) = rec.recognize([text])
        for m in ms:
            n = text.count("\n", 0, m.start) + 1
            key = (file, n, (m.value or "").lower())
            found[m.type].add(key)
            context[key] = lines[n - 1].strip()[:160]
    return found, context


def comparison(folder: Path, show: int) -> str:
    theirs, their_ctx = scanner(folder)
    mine, my_ctx = ours(folder)
    rows, examples = [], []
    for kind in sorted(set(theirs) | set(mine)):
        a, b = theirs[kind], mine[kind]
        both = a & b
        rows.append(
            [
                kind,
                len(a),
                len(b),
                len(both),
                len(a - b),
                len(b - a),
                f"{len(both) / len(b):.3f}" if b else "-",
                f"{len(both) / len(a):.3f}" if a else "-",
            ]
        )
        for label, keys, ctx in (("scanner only", a - b, their_ctx), ("kbx only", b - a, my_ctx)):
            for key in sorted(keys)[:show]:
                examples.append([kind, label, f"{key[0]}:{key[1]}", key[2][:60], ctx[key][:90]])
    head = table(
        [
            "type",
            "scanner",
            "kbx",
            "both",
            "scanner only",
            "kbx only",
            "kbx agreeing",
            "scanner agreeing",
        ],
        rows,
    )
    ex = table(["type", "side", "where", "value", "line"], examples)
    return f"{head}\n\nDisagreements (first {show} per side and type):\n\n{ex}"


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--show", type=int, default=8, help="disagreements to print per type")
    args = p.parse_args()
    folder = args.eval.resolve() / "identifiers"
    print("### Identifiers against a plain scanner\n")
    print(comparison(folder, args.show))


if __name__ == "__main__":
    main()
