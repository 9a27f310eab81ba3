"""``kbx grep``: a regex over the clean text, cited at original lines, best files first."""

from __future__ import annotations

import re
from contextlib import nullcontext
from dataclasses import dataclass, field

import duckdb

from kbx.entities.positions import Positions
from kbx.errors import BadArgument
from kbx.extract.textmap import unpack
from kbx.search.bm25 import rank
from kbx.search.filters import Filters, compile_filters
from kbx.search.passages import line_span
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

AROUND = 60
_META = set(".^$*+?{}[]|()")


@dataclass
class GrepMatch:
    """One match: the file and original lines, the match, and its clean-text surroundings."""

    path: str
    start_line: int
    end_line: int
    hash: str
    match: str
    text: str
    context: list[str] = field(default_factory=list)


@dataclass
class GrepResult:
    """Matches shown (best files first), and how many more there were."""

    pattern: str
    matches: list[GrepMatch]
    total: int
    files: int
    left_out: int
    left_out_files: int


def literal(pattern: str) -> str | None:
    """The plain string a pattern matches, if it has no regular-expression syntax."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 < len(pattern) and not pattern[i + 1].isalnum():
                out.append(pattern[i + 1])
                i += 2
                continue
            return None
        if c in _META:
            return None
        out.append(c)
        i += 1
    return "".join(out)


def _rank_words(pattern: str) -> str:
    return " ".join(re.findall(r"[A-Za-z][\w.-]+|\d{2,}", re.sub(r"\\.", " ", pattern)))


def grep(
    index: Index,
    pattern: str,
    rank_query: str | None = None,
    context: int = 0,
    max_matches: int = 20,
    ignore_case: bool = False,
    filters: Filters | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> GrepResult:
    """Matches of ``pattern`` in the clean text, files in BM25 order of ``rank_query``
    (on ``con`` when the caller already holds a connection)."""
    try:
        rx = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as e:
        raise BadArgument(f"bad regular expression {pattern!r}: {e}") from None
    if max_matches < 1:
        raise BadArgument("--max must be at least 1")
    lit = literal(pattern)
    pre, pre_params = "TRUE", []
    if lit:
        pre, pre_params = (
            ("contains(lower(u.text), ?)", [lit.lower()])
            if ignore_case
            else ("contains(u.text, ?)", [lit])
        )
    with nullcontext(con) if con else index.reader() as con:
        f = compile_filters(con, filters)
        an = analyzer_of(con)
        rows = con.execute(
            f"""SELECT pl.unit_id, pl.ordinal, d.path, d.sha256, u.text, pl.offsets
                FROM placements pl JOIN units u USING (unit_id) JOIN documents d USING (doc_id)
                WHERE {f.where()} AND {pre} ORDER BY d.path, pl.ordinal""",
            [*f.params, *pre_params],
        ).fetchall()
        ranked, _ = rank(con, an.query(rank_query or _rank_words(pattern)), f)
    unit_rank = {unit_id: i for i, (unit_id, _, _) in enumerate(ranked)}
    file_rank: dict[str, int] = {}
    for unit_id, _, rel, *_ in rows:
        r = unit_rank.get(unit_id, len(unit_rank))
        file_rank[rel] = min(r, file_rank.get(rel, r))
    rows.sort(key=lambda r: (file_rank[r[2]], r[2], r[1]))
    shown: list[GrepMatch] = []
    seen: set[tuple[str, int, int]] = set()  # document positions of the matches so far
    files: dict[str, int] = {}
    positions = Positions()
    for _, ordinal, rel, sha, text, blob in rows:
        segments = None
        for m in rx.finditer(text):
            if m.end() == m.start():
                continue
            chain, base = positions.start(rel, ordinal, text, blob)
            key = (rel, chain, base + m.start())
            if key in seen:  # the overlap of two windows of one long block: reported once
                continue
            seen.add(key)
            segments = segments or unpack(blob)
            start, end = line_span(segments, text, m.start(), m.end())
            files[rel] = files.get(rel, 0) + 1
            if len(shown) < max_matches:
                a, b = max(0, m.start() - AROUND), min(len(text), m.end() + AROUND)
                around = (
                    ("…" if a else "")
                    + text[a : m.start()]
                    + "**"
                    + m.group()
                    + "**"
                    + text[m.end() : b]
                    + ("…" if b < len(text) else "")
                )
                shown.append(GrepMatch(rel, start, end, sha, m.group(), " ".join(around.split())))
    if context:
        _add_context(index, shown, context)
    total = sum(files.values())
    shown_files = {m.path for m in shown}
    return GrepResult(
        pattern, shown, total, len(files), total - len(shown), len(set(files) - shown_files)
    )


def _add_context(index: Index, matches: list[GrepMatch], n: int) -> None:
    """Attach ``n`` original lines before and after each match (files read once)."""
    from kbx.extract import source_text  # the parsers, loaded only when context is asked for

    cache: dict[str, list[str]] = {}
    for m in matches:
        if m.path not in cache:
            try:
                data = (index.root / m.path).read_bytes()
                cache[m.path] = source_text(m.path, data)[0].replace("\r\n", "\n").split("\n")
            except OSError:
                cache[m.path] = []
        lines = cache[m.path]
        lo = max(1, m.start_line - n)
        m.context = [f"{i}: {lines[i - 1]}" for i in range(lo, min(len(lines), m.end_line + n) + 1)]
