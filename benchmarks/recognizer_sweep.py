"""Every rule recognizer (all installed but the models) over every text under
``../shared/eval``: any exception, misaligned span, or value off the calendar or the floats
is listed (issue 40: one "359,000 Week Ago" in a Reuters table stopped a whole ``kbx
index``).

Each file is read three ways where it can be: as kbx reads it (extracted into units, each
shown to a recognizer as the pass shows it, under its rules for inline code and cells), as
plain text (what decodes, in blocks of lines, any extension), and for the token-per-line
NER files (CoNLL) and TimeML, as the documents they hold (tokens joined, tags dropped,
TimeML's creation time as the document's date). Each date mention is resolved against the
document's date and the calendar's ends; each quantity's value read back as a filter reads
it. A script, not a test: it reports.

    .venv/bin/python benchmarks/recognizer_sweep.py [--eval ../shared/eval] [--json OUT]
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from common import eval_arg

from kbx.annotate.context import document_date
from kbx.errors import KbxError
from kbx.extract import extract, format_of
from kbx.extract.decode import decode, looks_binary
from kbx.recognizers.base import check_spans, shown_text, within_rules
from kbx.recognizers.quantity_filter import stored
from kbx.recognizers.registry import Registry
from kbx.timex import interval

RULES = [r for r in Registry.load() if not r.info.slow]  # every installed rule recognizer
BLOCK_LINES = 60  # plain text is shown in blocks of this many lines (a unit's size or so)
DAYS = (date(1996, 12, 6), date.min, date.max)  # besides the document's own
SLOW_S = 2.0  # a text one recognizer takes longer than this on is listed too


class Text:
    """One text to recognize in: where it came from, its day, its unit layout."""

    def __init__(self, where, text, day=None, heading=(), code_spans=(), breaks=(), kind="prose"):
        self.where, self.text, self.day = where, text, day
        self.heading, self.code_spans, self.breaks, self.kind = heading, code_spans, breaks, kind


def as_kbx_reads(path: Path, rel: str) -> Iterator[Text]:
    if format_of(rel) is None:
        return
    try:
        doc = extract(rel, path.read_bytes())
    except KbxError:  # an extraction failure is the ingest's to report, not ours
        return
    day = document_date(doc.meta.date) if doc.meta.date else None
    for i, u in enumerate(doc.units):
        yield Text(
            f"{rel} unit {i} (line {u.segments[0][1] if u.segments else '?'})",
            u.text,
            day,
            u.heading_path,
            [list(s) for s in u.code_spans],
            list(u.breaks),
            u.kind,
        )


def as_plain_text(path: Path, rel: str) -> Iterator[Text]:
    data = path.read_bytes()
    if looks_binary(data[:8192]):
        return
    lines = decode(data)[0].split("\n")
    for i in range(0, len(lines), BLOCK_LINES):
        yield Text(f"{rel} lines {i + 1}-", "\n".join(lines[i : i + BLOCK_LINES]))


_TAG = re.compile(r"<[^>]+>")
_DCT = re.compile(r'functionInDocument="CREATION_TIME">(\d{4}-\d\d-\d\d)')


def as_documents(path: Path, rel: str) -> Iterator[Text]:
    """The documents a CoNLL file's token lines or a TimeML file's markup hold."""
    if rel.endswith(".tml"):
        raw = path.read_text(encoding="utf-8", errors="replace")
        dct = _DCT.search(raw)
        yield Text(f"{rel} (TimeML text)", _TAG.sub("", raw), document_date(dct and dct[1]))
        return
    if not (rel.endswith(".conll") or "conll" in rel):
        return
    doc, sentence, n = [], [], 0
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n") + ["-DOCSTART-"]:
        token = line.split()[0] if line.split() else ""
        if token == "-DOCSTART-" or not token:
            if sentence:
                doc.append(" ".join(sentence))
                sentence = []
            if token and doc:
                n += 1
                yield Text(f"{rel} document {n}", "\n".join(doc))
                doc = []
        else:
            sentence.append(token)
    if doc:
        yield Text(f"{rel} document {n + 1}", "\n".join(doc))


def check(r, t: Text) -> list[str]:
    """What is wrong with one recognizer on one text: exceptions and bad values."""
    shown = shown_text(r.info, t.text, t.breaks)
    if t.kind == "code" and not r.info.code:
        return []
    if r.info.headings:
        found = r.recognize([shown], headings=[tuple(t.heading)])[0]
    else:
        found = r.recognize([shown])[0]
    found = check_spans(shown, found, r.info.name)
    found = within_rules(r.info, t.text, found, t.code_spans, t.breaks)
    wrong = []
    for m in found:
        if m.type in ("QUANTITY", "MONEY"):
            q = stored(m.type, m.value)
            if q is None or not all(map(math.isfinite, q[2:])):
                wrong.append(f"{m.text!r}: value {m.value!r} is no number a filter reads")
        if r.info.needs_context:
            for day in (t.day, *DAYS):
                _calendar(r.resolve(m.value, day), f"{m.text!r} from {day}", wrong)
            _calendar(m.value, repr(m.text), wrong)
    return wrong


def _calendar(value: str | None, what: str, wrong: list[str]) -> None:
    days = interval(value)
    if value is not None and (value.startswith("-") or (days and not days[0] < days[1])):
        wrong.append(f"{what}: value {value!r} is off the calendar")


def main() -> None:
    p = eval_arg(__doc__.split("\n")[0])
    p.add_argument("--json", type=Path, help="write the findings here too")
    args = p.parse_args()
    for r in RULES:
        if hasattr(r, "load"):
            r.load()
    files = sorted(f for f in args.eval.rglob("*") if f.is_file())
    found, counts, took = [], Counter(), Counter()
    started = time.monotonic()
    for n, f in enumerate(files, 1):
        rel = f.relative_to(args.eval).as_posix()
        for way, texts in (
            ("kbx", as_kbx_reads),
            ("plain", as_plain_text),
            ("document", as_documents),
        ):
            try:
                texts = list(texts(f, rel))
            except Exception as e:  # noqa: BLE001 - a file the sweep cannot read is said
                found.append({"where": rel, "way": way, "recognizer": None, "error": repr(e)})
                continue
            counts[f"{way} texts"] += len(texts)
            counts[f"{way} chars"] += sum(len(t.text) for t in texts)
            for t in texts:
                for r in RULES:
                    began = time.monotonic()
                    try:
                        wrong = check(r, t)
                    except Exception as e:  # noqa: BLE001 - what this sweep looks for
                        tb = traceback.extract_tb(e.__traceback__)[-1]
                        wrong = [f"{type(e).__name__}: {e} at {tb.filename}:{tb.lineno}"]
                    spent = time.monotonic() - began
                    took[r.info.name] += spent
                    if spent > SLOW_S:
                        wrong.append(f"slow: {spent:.1f} s on {len(t.text)} characters")
                    found += [
                        {"where": t.where, "way": way, "recognizer": r.info.name, "error": w}
                        for w in wrong
                    ]
        if n % 200 == 0:
            print(f"{n}/{len(files)} files, {len(found)} findings", file=sys.stderr)
    print(f"{len(files)} files in {time.monotonic() - started:.0f} s under {args.eval}")
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v:,}")
    for name, s in took.items():
        print(f"  {name}: {s:.1f} s")
    print(f"{len(found)} findings")
    for x in found:
        print(f"  {x['recognizer']} ({x['way']}) {x['where']}: {x['error']}")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
