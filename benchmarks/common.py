"""Shared pieces of the search benchmarks: data loading, the hit rule, baselines, tables.

Used by ``search_quality.py``, ``search_speed.py`` and ``agent_cost.py``. The evaluation
data is read in place (default ``../shared/eval`` from the repository root) and never copied.
"""

from __future__ import annotations

import argparse
import csv
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kbx.indexing.ingest import index
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry

REPO = Path(__file__).resolve().parents[1]
DEFAULT_EVAL = (REPO / ".." / "shared" / "eval").resolve()
NODEJS = Path("corpora") / "nodejs"
QUESTIONS = Path("probes") / "nodejs_questions.tsv"
RFCS_DEV = Path("corpora") / "rfcs_dev"
RFC_QUESTIONS = Path("probes") / "rfc_dev_questions.tsv"
KBX_BIN = REPO / ".venv" / "bin" / "kbx"


def eval_arg(description: str) -> argparse.ArgumentParser:
    """An argument parser with the shared ``--eval`` option."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--eval",
        type=Path,
        default=DEFAULT_EVAL,
        help="evaluation data folder (default: ../shared/eval from the repository root)",
    )
    return p


# --- Node.js questions and the hit rule ------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One probe question with its verified answer location."""

    id: str
    kind: str
    text: str
    answer_path: str
    answer_lines: tuple[int, int]
    alt_paths: tuple[str, ...] = ()

    @property
    def paths(self) -> frozenset[str]:
        return frozenset((self.answer_path, *self.alt_paths))

    def is_hit(self, path: str, start: int, end: int) -> bool:
        """The probes' rule: a passage from an answer file overlapping the answer lines."""
        a, b = self.answer_lines
        return path in self.paths and start <= b and end >= a


def load_questions(eval_dir: Path, questions: Path = QUESTIONS) -> list[Question]:
    """The probe questions of ``questions`` (by default the Node.js ones), in file order."""
    out = []
    with open(eval_dir / questions, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            a, _, b = row["answer_lines"].partition("-")
            alts = tuple(p for p in (row.get("alt_paths") or "").split(";") if p)
            out.append(
                Question(
                    row["id"],
                    row["kind"],
                    row["question"],
                    row["answer_path"],
                    (int(a), int(b or a)),
                    alts,
                )
            )
    return out


def first_hit(q: Question, hits: Iterable[tuple[str, int, int]]) -> int | None:
    """1-based rank of the first passage that answers ``q``, or None."""
    for rank, (path, start, end) in enumerate(hits, start=1):
        if q.is_hit(path, start, end):
            return rank
    return None


def hit_metrics(ranks: Sequence[int | None]) -> tuple[float, float, float]:
    """hit@1, hit@5 and MRR (over the top 5) of first-hit ranks."""
    n = len(ranks) or 1
    h1 = sum(r == 1 for r in ranks) / n
    h5 = sum(r is not None and r <= 5 for r in ranks) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= 5) / n
    return h1, h5, mrr


# --- stopwords at query time -----------------------------------------------------------------


def rule_registry() -> Registry:
    """The rule-based built-ins: what the ingest and search figures are measured with, so
    they do not move with whatever else is installed (NER costs minutes on this corpus
    and is measured in ner.py)."""
    return Registry([IdentifierRecognizer(), DateRecognizer(), QuantityRecognizer()])


def build_kbx(root: Path, db: Path, stemmer: str, workers: int = 2) -> float:
    """Index (or re-stem) ``root`` into ``db``; returns seconds."""
    t = time.perf_counter()
    report = index(root, db=db, stemmer=stemmer, workers=workers, registry=rule_registry())
    if report.failed:
        raise RuntimeError(f"kbx failed on {report.failed} files: {report.failures[:3]}")
    return time.perf_counter() - t


def corpus_files(root: Path) -> list[str]:
    """Root-relative paths of the Markdown/MDX files of a corpus, sorted."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.suffix in (".md", ".mdx") and p.is_file()
    )


def fts5_or_query(text: str) -> str:
    """An FTS5 query: the OR of the text's word tokens, each quoted (punctuation dropped)."""
    tokens = dict.fromkeys(t.lower() for t in re.findall(r"[^\W_]+", text))
    return " OR ".join(f'"{t}"' for t in tokens)


# --- FTS5 passage baseline -------------------------------------------------------------------

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
WINDOW_CHARS = 1800


@dataclass
class Passage:
    """A window of a file's raw lines, under one heading path."""

    path: str
    heading: str
    start_line: int
    lines: list[str] = field(default_factory=list)

    @property
    def end_line(self) -> int:
        return self.start_line + len(self.lines) - 1

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def split_passages(path: str, text: str, limit: int = WINDOW_CHARS) -> list[Passage]:
    """Split a Markdown file at headings (outside code fences) into windows of at most
    ``limit`` characters (a longer single line is a window of its own). Lines are counted
    on ``\\n`` only, 1-based."""
    out: list[Passage] = []
    stack: list[tuple[int, str]] = []
    cur = Passage(path, "", 1)
    size = 0
    fenced = False

    def flush(next_start: int) -> None:
        nonlocal cur, size
        if any(line.strip() for line in cur.lines):
            out.append(cur)
        cur = Passage(path, " / ".join(h for _, h in stack), next_start)
        size = 0

    for n, line in enumerate(text.split("\n"), start=1):
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            level = len(m.group(1))
            stack = [h for h in stack if h[0] < level] + [(level, m.group(2))]
            flush(n)
        elif cur.lines and size + len(line) + 1 > limit:
            flush(n)
        cur.lines.append(line)
        size += len(line) + 1
    flush(0)
    return out


class PassageFTS5:
    """The everyday baseline: FTS5 (porter) over heading-split windows, heading weight 2;
    of a corpus's Markdown files, or of ``files``."""

    def __init__(self, root: Path, heading_weight: float = 2.0, files: list[str] | None = None):
        self.con = sqlite3.connect(":memory:")
        self.con.execute(
            "CREATE VIRTUAL TABLE p USING fts5(heading, text, path UNINDEXED, "
            "start UNINDEXED, stop UNINDEXED, tokenize='porter unicode61')"
        )
        rows = []
        for rel in corpus_files(root) if files is None else files:
            raw = (root / rel).read_bytes().decode("utf-8", errors="replace")
            rows.extend(
                (p.heading, p.text, p.path, p.start_line, p.end_line)
                for p in split_passages(rel, raw)
            )
        with self.con:
            self.con.executemany("INSERT INTO p VALUES (?, ?, ?, ?, ?)", rows)
        self.n = len(rows)
        self.weight = heading_weight

    def search(self, text: str, k: int = 5) -> list[tuple[str, int, int]]:
        q = fts5_or_query(text)
        if not q:
            return []
        return self.con.execute(
            f"SELECT path, start, stop FROM p WHERE p MATCH ? "
            f"ORDER BY bm25(p, {self.weight}, 1.0) LIMIT {int(k)}",
            [q],
        ).fetchall()


# --- numbers and tables ----------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) by linear interpolation."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return float(values[0])
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    if q <= 0:
        return float(min(values))
    if q >= 1:
        return float(max(values))
    return cuts[round(q * 100) - 1]


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], right: int = 1) -> str:
    """A Markdown table; columns from index ``right`` on are right-aligned."""

    def cell(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v).replace("|", "\\|")

    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" if i < right else "---:" for i in range(len(headers))) + " |",
    ]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def write_section(path: Path, title: str, section: str, header: str) -> None:
    """Replace (or append) the section headed ``title`` of the Markdown file ``path``
    (begun with ``header`` when it does not exist yet)."""
    text = path.read_text("utf-8") if path.exists() else header
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == title), None)
    if start is None:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        tail = "".join(lines[end:])
        text = "".join(lines[:start]) + section + ("\n" + tail if tail else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip("\n") + "\n", "utf-8")


# --- span matching (the recognizer benchmarks) -----------------------------------------------


class Spanned(Protocol):
    start: int
    end: int


def overlap(a: Spanned, b: Spanned) -> int:
    """Characters two spans share (negative when apart)."""
    return min(a.end, b.end) - max(a.start, b.start)


def relaxed_match(gold: Sequence[Spanned], pred: Sequence[Spanned]) -> dict[int, int]:
    """One-to-one greedy matching of overlapping spans, largest overlap first:
    gold index -> prediction index."""
    pairs = sorted(
        (-overlap(g, p), gi, pi)
        for gi, g in enumerate(gold)
        for pi, p in enumerate(pred)
        if overlap(g, p) > 0
    )
    match: dict[int, int] = {}
    used: set[int] = set()
    for _, gi, pi in pairs:
        if gi not in match and pi not in used:
            match[gi] = pi
            used.add(pi)
    return match
