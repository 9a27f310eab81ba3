"""Agent cost: bytes an agent reads to answer the Node.js questions, kbx beside ripgrep.

What is compared, and why: an agent pays for every byte a tool prints into its context. For
each of the 40 probe questions:

* **route A (kbx)** - the stdout of the real CLI ``kbx search QUESTION -k 5``, then of
  ``kbx read PATH:START-END`` for the best hit, widened by 10 lines on each side (START
  clamped to 1). The route *found* the answer when that read overlaps the answer lines in
  the answer file (or an alternative file), or when any of the 5 hits cites them.
* **route B (grep and open)** - what an agent does without an index: ripgrep for up to four
  keywords of the question (its four longest words outside a 100-word stopword list),
  ``rg -i -c`` to count matching lines per file (its output lists the files, so it stands
  for ``rg -l`` too), then the three files with the most matching lines read whole. The
  route found the answer when one of those files is the answer file or an alternative.
* **route B' (a more careful grep)** - ``rg -i -c`` once per keyword (all four outputs
  counted), files holding the most keywords first, ties broken by matching lines per KB,
  then the top three read whole. Route B rewards long changelogs (most matching lines);
  B' is the kinder baseline, so kbx's advantage is not an artefact of a naive grep.

Bytes are UTF-8 bytes of what the commands print (and of the files opened). The table gives
the median and interquartile range per question, the ratio of medians and how often each
route read the answer. A script, not a test.

    .venv/bin/python benchmarks/agent_cost.py [--eval ../shared/eval]
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import (
    KBX_BIN,
    NODEJS,
    Question,
    build_kbx,
    eval_arg,
    load_questions,
    percentile,
    table,
)

from kbx.analysis import QUERY_STOPWORDS
from kbx.search.search import search
from kbx.store.db import Index

CONTEXT_LINES = 10
KEYWORDS = 4
OPEN_FILES = 3


@dataclass
class Route:
    """What one route printed for one question, and whether it reached the answer."""

    bytes_search: int
    bytes_read: int
    found: bool
    detail: str

    @property
    def total(self) -> int:
        return self.bytes_search + self.bytes_read


def run(cmd: list[str], cwd: Path | None = None) -> bytes:
    """A command's stdout; a non-zero exit other than grep's "no match" is an error."""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} failed ({p.returncode}): {p.stderr.decode()[:300]}")
    return p.stdout


# --- route A: kbx ----------------------------------------------------------------------------


def route_kbx(q: Question, idx: Index, db: Path) -> Route:
    """``kbx search -k 5`` then ``kbx read`` of the best hit with context."""
    printed = run([str(KBX_BIN), "search", q.text, "-k", "5", "--db", str(db)])
    hits = search(idx, q.text, k=5).hits  # the same call the CLI made, for the hit locations
    if not hits:
        return Route(len(printed), 0, False, "no hits")
    best = hits[0]
    first_cited = f"{best.start_line}-{best.end_line}"
    if best.path not in printed.decode() or first_cited not in printed.decode():
        raise RuntimeError(f"{q.id}: CLI output does not show the best hit {best.path}")
    start, end = max(1, best.start_line - CONTEXT_LINES), best.end_line + CONTEXT_LINES
    read = run([str(KBX_BIN), "read", f"{best.path}:{start}-{end}", "--db", str(db)])
    n_read = len(read.decode().split("\n")) - 1
    found_read = q.is_hit(best.path, start, start + n_read - 1)
    found_hits = any(q.is_hit(h.path, h.start_line, h.end_line) for h in hits)
    where = "read" if found_read else "hits" if found_hits else "-"
    return Route(len(printed), len(read), found_read or found_hits, where)


# --- route B: ripgrep and open ---------------------------------------------------------------


def keywords(text: str, n: int = KEYWORDS) -> list[str]:
    """The ``n`` longest distinct words outside the stopword list (earlier first on ties)."""
    words = list(
        dict.fromkeys(w for w in re.findall(r"\w+", text) if w.lower() not in QUERY_STOPWORDS)
    )
    return sorted(words, key=lambda w: -len(w))[:n]


def rg_counts(words: list[str], root: Path) -> tuple[int, dict[str, int]]:
    """``rg -i -c`` for any of ``words``: bytes printed and matching lines per file."""
    out = run(["rg", "-i", "-c", "--sort", "path", *(a for w in words for a in ("-e", w))], root)
    counts = {}
    for line in out.decode().splitlines():
        path, _, n = line.rpartition(":")
        counts[path] = int(n)
    return len(out), counts


def route_rg(q: Question, root: Path) -> Route:
    """As specified: one ``rg -i -c`` on the keywords; the files with most matching lines."""
    printed, counts = rg_counts(keywords(q.text), root)
    top = sorted(counts, key=lambda p: (-counts[p], p))[:OPEN_FILES]
    return opened(q, root, printed, top)


def route_rg_keywords(q: Question, root: Path) -> Route:
    """A more careful agent: ``rg -i -c`` per keyword; files holding the most keywords first,
    ties broken by matching lines per KB (so a long changelog does not win on size)."""
    printed, per_file = 0, {}
    for w in keywords(q.text):
        n, counts = rg_counts([w], root)
        printed += n
        for path, lines in counts.items():
            kw, total = per_file.get(path, (0, 0))
            per_file[path] = (kw + 1, total + lines)

    def key(path: str) -> tuple:
        kw, lines = per_file[path]
        return (-kw, -lines / max(1, (root / path).stat().st_size), path)

    return opened(q, root, printed, sorted(per_file, key=key)[:OPEN_FILES])


def opened(q: Question, root: Path, printed: int, top: list[str]) -> Route:
    """The route's bytes once ``top`` files are read whole, and whether one answers ``q``."""
    size = sum((root / p).stat().st_size for p in top)
    return Route(printed, size, any(p in q.paths for p in top), ", ".join(top[:1]))


# --- report ----------------------------------------------------------------------------------


def summary(name: str, routes: list[Route]) -> list:
    totals = [r.total for r in routes]
    return [
        name,
        f"{statistics.median(totals) / 1024:.1f}",
        f"{percentile(totals, 0.25) / 1024:.1f}-{percentile(totals, 0.75) / 1024:.1f}",
        f"{statistics.median(r.bytes_search for r in routes) / 1024:.1f}",
        f"{statistics.median(r.bytes_read for r in routes) / 1024:.1f}",
        f"{sum(totals) / 1024:.0f}",
        f"{sum(r.found for r in routes)}/{len(routes)}",
    ]


def report(questions: list[Question], a: list[Route], b: list[Route], c: list[Route]) -> str:
    med_a = statistics.median(r.total for r in a)
    ratio_b = statistics.median(r.total for r in b) / med_a
    ratio_c = statistics.median(r.total for r in c) / med_a
    heads = ["route", "median KB", "IQR KB", "search KB", "read KB", "total KB", "found answer"]
    rows = [
        summary("A: kbx search -k 5 + kbx read ±10", a),
        summary("B: rg -c, open 3 with most matching lines", b),
        summary("B': rg -c per keyword, open 3 with most keywords", c),
    ]
    kinds = []
    for kind in ("lexical", "paraphrase"):
        sel = [i for i, q in enumerate(questions) if q.kind == kind]
        kinds.append(
            [
                kind,
                f"{sum(a[i].found for i in sel)}/{len(sel)}",
                f"{sum(b[i].found for i in sel)}/{len(sel)}",
                f"{sum(c[i].found for i in sel)}/{len(sel)}",
            ]
        )
    per_q = [
        [q.id, q.kind, kb(x), x.detail, kb(y), yes(y), kb(z), yes(z), " ".join(keywords(q.text))]
        for q, x, y, z in zip(questions, a, b, c, strict=True)
    ]
    return "\n".join(
        [
            f"### Agent cost, Node.js questions ({len(questions)})\n",
            table(heads, rows),
            "",
            f"Ratio of medians: B / A {ratio_b:.1f}x, B' / A {ratio_c:.1f}x.",
            "",
            table(["kind", "A found", "B found", "B' found"], kinds),
            "",
            "Per question (A found: where kbx reached the answer lines, - if not):\n",
            table(
                [
                    "id",
                    "kind",
                    "A KB",
                    "A found",
                    "B KB",
                    "B found",
                    "B' KB",
                    "B' found",
                    "rg keywords",
                ],
                per_q,
                right=2,
            ),
        ]
    )


def kb(r: Route) -> str:
    return f"{r.total / 1024:.1f}"


def yes(r: Route) -> str:
    return "yes" if r.found else "no"


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    args = p.parse_args()
    if not shutil.which("rg"):
        sys.exit("ripgrep (rg) is needed: apt-get install -y ripgrep")
    root = args.eval.resolve() / NODEJS
    questions = load_questions(args.eval.resolve())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kbx-agent-") as tmp:
        db = Path(tmp) / "nodejs.duckdb"
        print(f"kbx index {build_kbx(root, db, 'snowball'):.1f} s", file=sys.stderr)
        idx = Index.find(db)
        a = [route_kbx(q, idx, db) for q in questions]
        b = [route_rg(q, root) for q in questions]
        c = [route_rg_keywords(q, root) for q in questions]
    print(report(questions, a, b, c))
    print(f"\nTotal run time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
