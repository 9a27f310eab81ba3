"""Agent cost: bytes an agent reads to answer the Node.js questions, kbx beside ripgrep.

What is compared, and why: an agent pays for every byte a tool prints into its context. For
each of the 40 probe questions:

* **route A (kbx)** - the stdout of the real CLI ``kbx search QUESTION`` (its defaults),
  then of ``kbx read PATH:START-END`` for the best hit's first cited lines (its focus: the
  lines of its densest matches, ``Hit.focus_lines``), widened by 10 lines on each side
  (START clamped to 1). The route *found* the answer when that read overlaps the answer
  lines in the answer file (or an alternative file), or when any of the hits' passages
  (the whole lines each also cites) holds them.
* **route A2 (kbx, stopping early)** - route A, except that the agent reads nothing more
  when the search output already shows the answer (the probe's answer string, marks and
  case aside, is in it); it found the answer then too.
* **route B (grep and open)** - what an agent does without an index: ripgrep for up to four
  keywords of the question (its four longest words outside a 100-word stopword list),
  ``rg -i -c`` to count matching lines per file (its output lists the files, so it stands
  for ``rg -l`` too), then the three files with the most matching lines read whole. The
  route found the answer when one of those files is the answer file or an alternative.
* **route B' (a more careful grep)** - ``rg -i -c`` once per keyword (all four outputs
  counted), files holding the most keywords first, ties broken by matching lines per KB,
  then the top three read whole. Route B rewards long changelogs (most matching lines);
  B' is the kinder baseline, so kbx's advantage is not an artefact of a naive grep.

How kbx search should print (passages ``-k``, ``--snippet`` characters, ``--exact`` phrase
lines) is measured in the same run: each question is searched once at the largest variant
and printed by the CLI's own renderer as each variant would print it (the real command is
checked to print exactly the default's text). The questions are sentences, which never
occur verbatim, so the exact-phrase block is measured on the filter probes' keyword
queries too.

The RFC dev questions (``corpora/rfcs_dev``: long plain text, where the focus is a few
wrapped lines) are run through route A too, the read of the best hit's focus beside that of
its whole passage (route A before hits cited a focus), to show no answer is lost there.

Bytes are UTF-8 bytes of what the commands print (and of the files opened). The tables give
the median and interquartile range per question, the ratio of medians and how often each
route read the answer. A script, not a test.

``--compare DIR`` adds route A as the kbx at DIR/kbx prints ``kbx search QUESTION -k 5`` (an
older commit, e.g. ``git archive OLD | tar -x -C DIR/kbx``), beside this one.

    .venv/bin/python benchmarks/agent_cost.py [--eval ../shared/eval] [--work DIR] [--compare DIR]
"""

from __future__ import annotations

import csv
import dataclasses
import os
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
    QUESTIONS,
    RFC_QUESTIONS,
    RFCS_DEV,
    Question,
    build_kbx,
    eval_arg,
    load_questions,
    percentile,
    table,
)

from kbx.analysis import QUERY_STOPWORDS
from kbx.api_json import to_json
from kbx.present import EXACT_TEXT, K_TEXT, MARK, SNIPPET_TEXT
from kbx.present import search as render
from kbx.search.search import SearchResult, search
from kbx.store.db import Index

FILTERS = Path("probes") / "nodejs_filters.tsv"
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


def run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> bytes:
    """A command's stdout; a non-zero exit other than grep's "no match" is an error."""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=env)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} failed ({p.returncode}): {p.stderr.decode()[:300]}")
    return p.stdout


# --- route A: kbx ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One way ``kbx search`` could print: passages, snippet characters, exact-match lines."""

    k: int
    snippet: int
    exact: int


DEFAULT = Variant(K_TEXT, SNIPPET_TEXT, EXACT_TEXT)
VARIANTS = [Variant(k, n, DEFAULT.exact) for k in (3, 4, 5, 8) for n in (0, 80, 120, 160, 200, 240)]
EXACTS = (0, 1, 3)  # exact-match lines, measured on the keyword queries


@dataclass
class Searched:
    """One query searched once at the largest variant, and the best hit read as cited."""

    result: SearchResult
    bytes_read: int = 0
    found_read: bool = False


def search_once(q: Question, idx: Index, root: Path) -> Searched:
    """The library's answer at the largest k (each variant prints a prefix of it), and
    ``kbx read`` of the best hit's focus widened by 10 lines on each side."""
    r = search(idx, q.text, k=max(v.k for v in VARIANTS), exact=max(EXACTS))
    if not r.hits:
        return Searched(r)
    best = r.hits[0]
    first, last = best.focus_lines
    start, end = max(1, first - CONTEXT_LINES), last + CONTEXT_LINES
    read = run([str(KBX_BIN), "read", f"{best.path}:{start}-{end}"], root)
    n_read = len(read.decode().split("\n")) - 1
    return Searched(r, len(read), q.is_hit(best.path, start, start + n_read - 1))


def printed(s: Searched, v: Variant) -> bytes:
    """The text ``kbx search`` prints with ``v``: the CLI's own renderer over the first
    ``v.k`` hits and ``v.exact`` exact matches, as the library returns for those."""
    hits = s.result.hits[: v.k]
    r = dataclasses.replace(
        s.result,
        hits=hits,
        left_out=max(0, s.result.total - len(hits)),
        exact=s.result.exact[: v.exact],
    )
    lines = render(to_json("search", r) | {"facets": None}, v.snippet, v.exact)
    return "".join(f"{line}\n" for line in lines).encode()


def shows(text: bytes, answer: str) -> bool:
    """Whether printed ``text`` holds ``answer`` (marks, case and spacing aside)."""

    def flat(t: str) -> str:
        return " ".join(MARK.sub(r"\1", t).lower().split())

    return flat(answer) in flat(text.decode())


def route_kbx(q: Question, s: Searched, v: Variant, answer: str = "") -> Route:
    """``kbx search`` printed as ``v``, then ``kbx read`` of the best hit with context; with
    ``answer``, no read when the output already shows it (route A2)."""
    out = printed(s, v)
    if answer and shows(out, answer):
        return Route(len(out), 0, True, "shown")
    found_hits = any(q.is_hit(h.path, h.start_line, h.end_line) for h in s.result.hits[: v.k])
    where = "read" if s.found_read else "hits" if found_hits else "-"
    return Route(len(out), s.bytes_read, s.found_read or found_hits, where)


def passage_read(q: Question, s: Searched, root: Path) -> tuple[int, bool]:
    """Bytes of ``kbx read`` of the best hit's whole passage widened by 10 lines on each
    side (route A before hits cited a focus), and whether it reaches the answer lines."""
    best = s.result.hits[0]
    start, end = max(1, best.start_line - CONTEXT_LINES), best.end_line + CONTEXT_LINES
    read = run([str(KBX_BIN), "read", f"{best.path}:{start}-{end}"], root)
    n_read = len(read.decode().split("\n")) - 1
    return len(read), q.is_hit(best.path, start, start + n_read - 1)


def rfc_table(eval_dir: Path, base: Path) -> str:
    """Route A on the RFC dev questions (long plain-text documents, lines wrapped at 72
    characters): the read of the best hit's focus against that of its whole passage."""
    questions = load_questions(eval_dir, RFC_QUESTIONS)
    root = base / "rfcs_dev"
    shutil.copytree(eval_dir / RFCS_DEV, root, dirs_exist_ok=True)
    print(f"kbx index rfcs {build_kbx(root, root / '.kbx' / 'index.duckdb', 'snowball'):.1f} s",
          file=sys.stderr)  # fmt: skip
    idx = Index.for_root(root)
    runs = [search_once(q, idx, root) for q in questions]
    whole = [passage_read(q, s, root) for q, s in zip(questions, runs, strict=True)]
    rows = []
    for kind in ("lexical", "paraphrase", None):
        sel = [i for i, q in enumerate(questions) if kind in (None, q.kind)]
        out = [len(printed(runs[i], DEFAULT)) for i in sel]
        hits = [
            any(questions[i].is_hit(h.path, h.start_line, h.end_line) for h in
                runs[i].result.hits[: DEFAULT.k])
            for i in sel
        ]  # fmt: skip
        for name, reads in (
            ("focus ±10 (now)", [(runs[i].bytes_read, runs[i].found_read) for i in sel]),
            ("whole passage ±10 (before)", [whole[i] for i in sel]),
        ):
            total = [o + n for o, (n, _) in zip(out, reads, strict=True)]
            rows.append(
                [
                    kind or "all",
                    name,
                    f"{statistics.median(total) / 1024:.2f}",
                    f"{statistics.median(n for n, _ in reads) / 1024:.2f}",
                    f"{sum(f for _, f in reads)}/{len(sel)}",
                    f"{sum(f or h for (_, f), h in zip(reads, hits, strict=True))}/{len(sel)}",
                ]
            )
    heads = ["questions", "route A reads", "median KB", "read KB", "by the read", "found"]
    return table(heads, rows)


def check_cli(text: str, s: Searched, root: Path) -> None:
    """The real ``kbx search TEXT`` prints exactly the default variant's text."""
    if run([str(KBX_BIN), "search", text], root) != printed(s, DEFAULT):
        raise RuntimeError(f"kbx search {text!r} printed other text than its default variant")


def route_older(q: Question, s: Searched, root: Path, older: Path) -> Route:
    """Route A with the ``kbx search QUESTION -k 5`` of the kbx at ``older``/kbx (the route
    as this benchmark ran before the text was made lean)."""
    env = os.environ | {"PYTHONPATH": str(older.resolve())}
    out = run([str(KBX_BIN), "search", q.text, "-k", "5"], root, env)
    found_hits = any(q.is_hit(h.path, h.start_line, h.end_line) for h in s.result.hits[:5])
    return Route(len(out), s.bytes_read, s.found_read or found_hits, "")


def answers(eval_dir: Path) -> dict[str, str]:
    """Each question's answer string, by id."""
    with open(eval_dir / QUESTIONS, newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {row["id"]: row["answer"] for row in rows}


def keyword_queries(eval_dir: Path) -> list[str]:
    """The filter probes' query terms: short keyword queries, as agents also type."""
    with open(eval_dir / FILTERS, newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [row["query_terms"] for row in rows]


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


def report(
    questions: list[Question],
    said: dict[str, str],
    runs: list[Searched],
    b: list[Route],
    c: list[Route],
    keyword_runs: list[Searched],
    older: tuple[str, list[Route]] | None = None,
    rfcs: str = "",
) -> str:
    pairs = list(zip(questions, runs, strict=True))
    a = [route_kbx(q, s, DEFAULT) for q, s in pairs]
    a2 = [route_kbx(q, s, DEFAULT, said[q.id]) for q, s in pairs]
    med_a, med_a2 = (statistics.median(r.total for r in x) for x in (a, a2))
    med_b, med_c = (statistics.median(r.total for r in x) for x in (b, c))
    heads = ["route", "median KB", "IQR KB", "search KB", "read KB", "total KB", "found answer"]
    rows = [
        summary("A: kbx search + kbx read ±10", a),
        summary("A2: the same, no read when the output shows the answer", a2),
        *([summary(f"A with {older[0]}'s kbx search -k 5", older[1])] if older else []),
        summary("B: rg -c, open 3 with most matching lines", b),
        summary("B': rg -c per keyword, open 3 with most keywords", c),
    ]
    halves = []
    for name, sel in (
        ("tune (the 1st, 3rd, … question)", range(0, len(questions), 2)),
        ("check (the 2nd, 4th, …)", range(1, len(questions), 2)),
        ("all", range(len(questions))),
    ):
        ma, mc = (statistics.median(x[i].total for i in sel) for x in (a, c))
        halves.append(
            [
                name,
                f"{ma / 1024:.2f}",
                f"{mc / 1024:.1f}",
                f"{mc / ma:.1f}x",
                f"{sum(a[i].found for i in sel)}/{len(sel)}",
                f"{sum(a[i].detail == 'read' for i in sel)}/{len(sel)}",
            ]
        )
    kinds = []
    for kind in ("lexical", "paraphrase"):
        sel = [i for i, q in enumerate(questions) if q.kind == kind]
        kinds.append([kind, *(f"{sum(x[i].found for i in sel)}/{len(sel)}" for x in (a, a2, b, c))])
    per_q = [
        [q.id, q.kind, kb(x), x.detail, kb(x2), kb(y), yes(y), kb(z), yes(z)]
        + [" ".join(keywords(q.text))]
        for q, x, x2, y, z in zip(questions, a, a2, b, c, strict=True)
    ]
    return "\n".join(
        [
            f"### Agent cost, Node.js questions ({len(questions)}), kbx search's defaults "
            f"(-k {DEFAULT.k} --snippet {DEFAULT.snippet} --exact {DEFAULT.exact})\n",
            table(heads, rows),
            "",
            f"Ratio of medians: B / A {med_b / med_a:.1f}x, B' / A {med_c / med_a:.1f}x; "
            f"B / A2 {med_b / med_a2:.1f}x, B' / A2 {med_c / med_a2:.1f}x.",
            "",
            table(["kind", "A found", "A2 found", "B found", "B' found"], kinds),
            "",
            "Route A on each half of the questions (the focus and the defaults were chosen "
            "on the tune half; by the read: the read itself reached the answer lines, the "
            "rest of A's finds are a hit's passage holding them):\n",
            table(
                ["questions", "A median KB", "B' median KB", "B' / A", "A found", "by the read"],
                halves,
            ),
            "",
            "Route A and A2 as each variant would print (median KB per question; shown: the "
            "output itself holds the answer string):\n",
            variants_table(questions, said, runs),
            "",
            f"The exact-phrase block, on the {len(keyword_runs)} keyword queries of the filter "
            f"probes (-k {DEFAULT.k} --snippet {DEFAULT.snippet}; none of the 40 questions "
            "occurs verbatim, so there it never shows):\n",
            exact_table(keyword_runs),
            "",
            *(
                [
                    "The RFC dev questions (50, over 160 RFCs: plain text wrapped at 72 "
                    "characters), where a hit's focus is a few short lines; found: by the read "
                    f"or by one of the {DEFAULT.k} hits' passages:\n",
                    rfcs,
                    "",
                ]
                if rfcs
                else []
            ),
            "Per question, the defaults (A found: where kbx reached the answer lines, - if not):\n",
            table(
                ["id", "kind", "A KB", "A found", "A2 KB", "B KB", "B found", "B' KB", "B' found"]
                + ["rg keywords"],
                per_q,
                right=2,
            ),
        ]
    )


def variants_table(questions: list[Question], said: dict[str, str], runs: list[Searched]) -> str:
    """One row per variant: search KB, route A's and A2's KB and finds, answers shown."""
    rows = []
    for v in VARIANTS:
        pairs = list(zip(questions, runs, strict=True))
        a = [route_kbx(q, s, v) for q, s in pairs]
        a2 = [route_kbx(q, s, v, said[q.id]) for q, s in pairs]
        rows.append(
            [
                f"{v.k}{' (default)' if v == DEFAULT else ''}",
                v.snippet,
                f"{statistics.median(r.bytes_search for r in a) / 1024:.2f}",
                f"{statistics.median(r.total for r in a) / 1024:.2f}",
                f"{sum(r.found for r in a)}/{len(a)}",
                f"{sum(r.detail == 'shown' for r in a2)}/{len(a2)}",
                f"{statistics.median(r.total for r in a2) / 1024:.2f}",
                f"{sum(r.found for r in a2)}/{len(a2)}",
            ]
        )
    heads = ["k", "snippet", "search KB", "A KB", "A found", "shown", "A2 KB", "A2 found"]
    return table(heads, rows)


def exact_table(runs: list[Searched]) -> str:
    """Search KB of the keyword queries for each number of exact-match lines."""
    rows = []
    for e in EXACTS:
        out = [printed(s, Variant(DEFAULT.k, DEFAULT.snippet, e)) for s in runs]
        rows.append(
            [
                f"{e}{' (default)' if e == DEFAULT.exact else ''}",
                f"{statistics.median(map(len, out)) / 1024:.2f}",
                f"{sum(map(len, out)) / 1024:.1f}",
                f"{sum(bool(s.result.exact) for s in runs)}/{len(runs)}",
            ]
        )
    return table(["exact lines", "median search KB", "total KB", "queries with a block"], rows)


def kb(r: Route) -> str:
    return f"{r.total / 1024:.1f}"


def yes(r: Route) -> str:
    return "yes" if r.found else "no"


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument(
        "--work",
        type=Path,
        help="keep the corpus copy and its index here between runs (refreshed incrementally)",
    )
    p.add_argument("--compare", type=Path, help="also print route A with the kbx at DIR/kbx")
    args = p.parse_args()
    if not shutil.which("rg"):
        sys.exit("ripgrep (rg) is needed: apt-get install -y ripgrep")
    eval_dir = args.eval.resolve()
    questions, said = load_questions(eval_dir), answers(eval_dir)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kbx-agent-") as tmp:
        root = (args.work or Path(tmp)) / "nodejs"  # kbx reads only under its index's root
        shutil.copytree(eval_dir / NODEJS, root, dirs_exist_ok=True)
        seconds = build_kbx(root, root / ".kbx" / "index.duckdb", "snowball")
        print(f"kbx index {seconds:.1f} s", file=sys.stderr)
        idx = Index.for_root(root)
        runs = [search_once(q, idx, root) for q in questions]
        queries = keyword_queries(eval_dir)
        keyword_runs = [Searched(search(idx, t, k=DEFAULT.k, exact=max(EXACTS))) for t in queries]
        texts = [q.text for q in questions] + queries
        for text, s in zip(texts, runs + keyword_runs, strict=True):
            check_cli(text, s, root)
        older = None
        if args.compare:
            pairs = zip(questions, runs, strict=True)
            older = (args.compare.name, [route_older(q, s, root, args.compare) for q, s in pairs])
        b = [route_rg(q, root) for q in questions]
        c = [route_rg_keywords(q, root) for q in questions]
        rfcs = rfc_table(eval_dir, args.work or Path(tmp))
    print(report(questions, said, runs, b, c, keyword_runs, older, rfcs))
    print(f"\nTotal run time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
