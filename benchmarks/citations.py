"""Cited lines cover their passage: every unit's first and last words lie in its lines.

Each file of each real corpus in the eval folder is extracted with ``kbx.extract.extract``
(no index). For every unit, its first and last words (runs of letters and digits) are
looked for in the original source lines ``start_line..end_line`` that the unit cites. A
word the source does not hold verbatim anywhere (a decoded entity or accent) cannot be
checked; the nearest word inward that it does hold is used instead. Also counted: units
that start or end inside a whitespace-free token of the source (a window cut through an
identifier), found by the characters next to the unit's ends in its source lines.

    .venv/bin/python benchmarks/citations.py [EVAL_DIR] [--show 5]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from common import DEFAULT_EVAL, table

from kbx.errors import ExtractError
from kbx.extract import extract, source_text
from kbx.extract.document import format_of
from kbx.extract.model import Unit
from kbx.extract.textmap import locate

CORPORA = {
    "nodejs (Markdown/MDX)": "corpora/nodejs",
    "formats/html": "formats/html",
    "formats/latex": "formats/latex",
    "formats/pdf": "formats/pdf",
    "formats/misc": "formats/misc",
    "identifiers/sources": "identifiers/sources",
}
WORD = re.compile(r"[^\W_]+")
INSIDE = re.compile(r"[^\W_]|[./:-][^\W_]")  # a letter or digit, or one after . / : -


def outside(unit: Unit, lines: list[str], whole: str) -> list[str]:
    """The unit's first and last checkable words that its cited lines do not hold."""
    start, end = unit.lines
    window = "\n".join(lines[start - 1 : end])
    words = [w for w in WORD.findall(unit.text) if w in whole]
    return [w for w in {words[0], words[-1]} if w not in window] if words else []


def cuts_token(unit: Unit, lines: list[str], encoding: str) -> bool:
    """Whether the unit starts or ends inside a whitespace-free token of its source: next
    to a verbatim first or last character, the source goes on with a letter or digit."""
    text = unit.text
    a, b = len(text) - len(text.lstrip()), len(text.rstrip()) - 1
    p, q = (locate(unit.segments, text, i, encoding) for i in (a, b))
    first, last = lines[p.line - 1], lines[q.line - 1]
    before = first[max(p.col - 2, 0) : p.col][::-1] if first[p.col : p.col + 1] == text[a] else ""
    after = last[q.col + 1 : q.col + 3] if last[q.col : q.col + 1] == text[b] else ""
    return bool(INSIDE.match(before) or INSIDE.match(after))


def check(root: Path, show: int) -> tuple[int, int, int, int, int]:
    """Files, units, units with a word outside their lines, units cutting a token, and
    files that failed."""
    files = units = bad = cut = failed = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file() and format_of(p.name)):
        data = path.read_bytes()
        try:
            doc = extract(path.name, data)
            whole = source_text(path.name, data)[0].replace("\r\n", "\n")
        except ExtractError:
            failed += 1
            continue
        files += 1
        lines = whole.split("\n")
        for u in doc.units:
            units += 1
            cut += cuts_token(u, lines, doc.encoding)
            missing = outside(u, lines, whole)
            if missing:
                bad += 1
                if show > 0:
                    show -= 1
                    print(f"  {path.relative_to(root)}:{u.lines[0]}-{u.lines[1]} {missing}")
    return files, units, bad, cut, failed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("eval_dir", nargs="?", type=Path, default=DEFAULT_EVAL)
    p.add_argument("--show", type=int, default=0, help="print N bad units per corpus")
    args = p.parse_args()
    rows = []
    t = time.perf_counter()
    for name, sub in CORPORA.items():
        if (args.eval_dir / sub).is_dir():
            print(name, file=sys.stderr)
            f, n, bad, cut, failed = check(args.eval_dir / sub, args.show)
            rows.append((name, f, failed, n, bad, f"{bad / max(n, 1):.2%}", cut))
    headers = ["corpus", "files", "not extracted", "units", "a word outside its lines", "share"]
    headers.append("starting or ending inside a token")
    print(table(headers, rows))
    print(f"\n{time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
