"""``kbx grep``: a regex over the clean text, cited at original lines, best files first."""

from __future__ import annotations

import copy
import re
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kbx.analysis import (
    CJK_RUN,
    PART,
    QUERY_STOPWORDS,
    TOKEN,
    WORD,
    Analyzer,
    fold,
    has_cjk,
    pieces,
)
from kbx.entities.positions import Positions
from kbx.errors import BadArgument
from kbx.extract.textmap import unpack
from kbx.present import quoted
from kbx.search.allowed import Allowed
from kbx.search.bm25 import mapped, rank, term_ids
from kbx.search.filters import DocFilter, Filters, compile_filters
from kbx.search.passages import cluster_start, line_span
from kbx.search.state import index_state, mapped_passages
from kbx.store.db import Index
from kbx.store.passages_file import PassagesFile
from kbx.store.postings import GENERATION as POSTINGS
from kbx.store.postings import analyzer_from

if TYPE_CHECKING:  # numpy loads with the mapped files, not with grep
    from kbx.store.postings_file import PostingsFile

AROUND = 60
TIMEOUT = 30.0  # seconds a user's pattern may match for, over all the units it reads
_META = set(".^$*+?{}[]|()")
JOINS = set(".-/:@+'’_")  # what joins word characters into one token (analysis.TOKEN)


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
    also_in: list[str] = field(default_factory=list)  # other files holding the same passage

    @property
    def paths(self) -> tuple[str, ...]:
        """Every file the match stands in: a passage several files share is one match."""
        return (self.path, *self.also_in)


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


def _open_end(chars: str) -> bool:
    """Whether the text beyond a phrase's end may run on into the token there: nothing
    or one connector stands between (``foo`` is part of ``x-foo`` in the text)."""
    return not chars or (len(chars) == 1 and chars in JOINS)


def _survives(an: Analyzer, raw: str) -> bool:
    """Whether a token's parts are still terms of any longer token it runs on into: an
    ASCII token with a part that is indexed as a part (two characters or digits), none of
    whose parts a protected name (never split) could swallow."""
    parts = [p for p in PART.findall(raw.lower()) if len(p) > 1 or p.isdigit()]
    return raw.isascii() and bool(parts) and not any(p in n for p in parts for n in an.protected)


def phrase_terms(an: Analyzer, phrase: str) -> list[list[str]]:
    """Term groups that every unit whose text holds ``phrase`` (as ``search.phrase_parts`` finds
    it, any case) indexes, a form of each at least: the phrase's tokens, analyzed as the
    index analyzes them. Inside the phrase the text has the same characters, so the same
    tokens; the first and last token may run on into the text around it through a
    connector, and count only where their parts survive that (``_survives``). Function
    words are left out when other words remain: the groups narrow, they need not be all."""
    text = " ".join(phrase.split())
    found = list(TOKEN.finditer(text))
    groups: list[tuple[bool, list[str]]] = []
    for i, m in enumerate(found):
        if has_cjk(m.group()):  # its runs' pairs are in any text holding it, edges or not
            for _, piece, cjk in pieces(m):
                groups += [(False, g) for g in an.query(piece, stopwords=False) if cjk]
            continue
        edge = (i == 0 and _open_end(text[: m.start()])) or (
            i == len(found) - 1 and _open_end(text[m.end() :])
        )
        if edge and not _survives(an, m.group()):
            continue
        forms = an.forms(m.group())
        if forms:
            groups.append((fold(m.group()) in QUERY_STOPWORDS, list(dict.fromkeys(forms))))
    words = [g for stop, g in groups if not stop]
    return words or [g for _, g in groups]


def _holding(con: duckdb.DuckDBPyConnection, groups: list[list[str]]) -> str | None:
    """SQL of the units that index a form of every group: the INTERSECT of each group's
    units, each term read by an equality (the sorted postings answer it from its own row
    groups). None when a group has no form in the index at all, so no unit holds it."""
    ids = term_ids(con, [t for g in groups for t in g])
    sets = []
    for g in groups:
        found = sorted({ids[t] for t in g if t in ids})
        if not found:
            return None
        sets.append(
            " UNION ALL ".join(f"SELECT unit_id FROM postings WHERE term_id = {t}" for t in found)
        )
    return " INTERSECT ".join(f"SELECT unit_id FROM ({s})" for s in sets)


def _mapped_files(
    con: duckdb.DuckDBPyConnection, index: Index, state: dict[str, str], gen: int
) -> tuple[PostingsFile, PassagesFile] | None:
    """The mapped postings and passages, when both are of their tables' generations."""
    pf = mapped(con, index.db, gen)
    passages = mapped_passages(index, state) if pf is not None else None
    return None if passages is None else (pf, passages)


def _mapped_candidates(
    con: duckdb.DuckDBPyConnection,
    pf: PostingsFile,
    passages: PassagesFile,
    groups: list[list[str]],
    keep: Allowed | None,
    lowered: str | None,
) -> list[tuple]:
    """``(doc_id, ordinal, path, sha256, text, offsets)`` of each allowed placement of the
    units that index a form of every group (``_holding``, over the mapped postings), by
    path and ordinal, as the SQL reads them; ``lowered``: a literal each text must hold,
    ignoring case (the SQL's ``contains`` prefilter)."""
    import numpy as np

    ids = term_ids(con, [t for g in groups for t in g], pf)
    held = None
    for g in groups:
        found = sorted({ids[t] for t in g if t in ids})
        if not found:
            return []
        units = np.unique(np.concatenate([pf.of(t)[0] for t in found]))
        held = units if held is None else np.intersect1d(held, units, assume_unique=True)
    held = held[held < len(passages.place_start) - 1]
    lo = passages.place_start[held]
    n = passages.place_start[held + 1] - lo
    at = np.arange(int(n.sum())) + np.repeat(lo - np.cumsum(n) + n, n)  # their rows, in order
    unit = np.repeat(held.astype(np.int64), n)  # int64: shifted into a key below
    if keep is not None:
        kept = np.isin(unit << 32 | passages.pl_doc[at].astype(np.int64), keep.keys)
        at, unit = at[kept], unit[kept]
    rows: list[tuple] = []
    texts: dict[int, str | None] = {}  # None: the literal is not in it
    for r, u in zip(at.tolist(), unit.tolist(), strict=True):
        if u not in texts:
            text = passages.text_of(u)
            texts[u] = None if lowered is not None and lowered not in text.lower() else text
        text = texts[u]
        if text is None:
            continue
        doc, ordinal, path, sha, _, _, _, blob, _, _ = passages.row(r)
        rows.append((doc, ordinal, path, sha, text, blob))
    rows.sort(key=lambda row: (row[2], row[1]))
    return rows


def _offsets(con: duckdb.DuckDBPyConnection, keys: list[tuple[int, int]]) -> dict:
    """The offset maps of the placements ``(doc_id, ordinal)``: a join on their keys, which
    reads the maps of those placements, where reading them with every candidate's text
    would read them all."""
    keys_sql = ", ".join(f"({int(d)}, {int(o)})" for d, o in keys)
    return {
        (d, o): b
        for d, o, b in con.execute(
            f"""SELECT pl.doc_id, pl.ordinal, pl.offsets FROM placements pl
                JOIN (VALUES {keys_sql}) k(doc_id, ordinal) USING (doc_id, ordinal)"""
        ).fetchall()
    }


def _file_ranks(
    con: duckdb.DuckDBPyConnection,
    query: str,
    an: Analyzer,
    f: DocFilter,
    docs: list[int],
    db: Path | None = None,
    gen: int | None = None,
) -> dict[str, int]:
    """Each of ``docs``' paths and its best unit's place in the BM25 order of ``query``
    (only their units are ranked: scores do not depend on which units are, so their order
    is the same as in the ranking of all); one past the last for a file with none ranked."""
    ids = ", ".join(str(int(d)) for d in docs)
    narrowed = copy.deepcopy(f)
    narrowed.keep(f"SELECT doc_id, unit_id FROM placements WHERE doc_id IN ({ids})", [])
    ranked, _ = rank(con, an.query(query), narrowed, db=db, generation=gen)
    unit_rank = {unit_id: i for i, (unit_id, _, _) in enumerate(ranked)}
    out: dict[str, int] = {}
    for unit_id, rel in con.execute(
        f"""SELECT pl.unit_id, d.path FROM placements pl JOIN documents d USING (doc_id)
            WHERE pl.doc_id IN ({ids}) AND {f.where()}""",
        f.params,
    ).fetchall():
        r = unit_rank.get(unit_id, len(unit_rank))
        out[rel] = min(r, out.get(rel, r))
    return out


def _mapped_file_ranks(
    con: duckdb.DuckDBPyConnection,
    query: str,
    an: Analyzer,
    docs: list[int],
    passages: PassagesFile,
    keep: Allowed | None,
    db: Path,
    gen: int,
) -> dict[str, int]:
    """``_file_ranks`` with the documents' allowed placements read from the mapped
    passages, not in SQL (the ranking over the mapped postings, as there)."""
    import numpy as np

    rows = np.flatnonzero(np.isin(passages.pl_doc, np.asarray(docs, dtype=np.int32)))
    keys = np.unique(passages.row_units[rows] << 32 | passages.pl_doc[rows].astype(np.int64))
    if keep is not None:
        keys = np.intersect1d(keys, keep.keys, assume_unique=True)
    ranked, _ = rank(con, an.query(query), None, db=db, generation=gen, allowed=Allowed(keys))
    unit_rank = {unit_id: i for i, (unit_id, _, _) in enumerate(ranked)}
    out: dict[str, int] = {}
    for key in keys.tolist():
        rel = passages.paths[key & 0xFFFFFFFF]
        r = unit_rank.get(key >> 32, len(unit_rank))
        out[rel] = min(r, out.get(rel, r))
    return out


WORD_CHAR = re.compile(WORD)  # a word character or a mark inside a word (analysis.TOKEN)


class _Clock:
    """What is left of a user's pattern's time (``TIMEOUT``): the ``regex`` module stops a
    match past its ``timeout``, where ``re`` backtracks without end on a pattern such as
    ``(a|aa)+$``, and a server thread with it. A pattern kbx built (a phrase) has none."""

    def __init__(self, seconds: float | None, pattern: str):
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.seconds, self.pattern = seconds, pattern

    def timeout(self) -> dict:
        if self.deadline is None:
            return {}
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.over()
        return {"timeout": left}

    def over(self) -> BadArgument:
        return BadArgument(
            f"the regular expression {quoted(self.pattern)} ran past {self.seconds:g} s (a "
            "repetition of alternatives that overlap, such as (a|aa)+, can backtrack "
            "without end): simplify it, narrow the search with a filter, or give it "
            "longer (--timeout; timeout over HTTP and MCP)"
        )


def _matches(rx, text: str, word_start: bool, clock: _Clock) -> list:
    """The non-empty matches of ``rx`` in ``text``, left to right, none overlapping; with
    ``word_start``, only those not right after a word character (the next try starts one
    character on, as the lookbehind would have let ``re`` go on)."""
    try:
        return _each_match(rx, text, word_start, clock)
    except TimeoutError:
        raise clock.over() from None


def _each_match(rx, text: str, word_start: bool, clock: _Clock) -> list:
    if not word_start:
        return [m for m in rx.finditer(text, **clock.timeout()) if m.end() > m.start()]
    out, at = [], 0
    while (m := rx.search(text, at, **clock.timeout())) is not None:
        s = m.start()
        if s and WORD_CHAR.match(text, s - 1) and not CJK_RUN.match(text, s - 1):
            at = s + 1
            continue
        if m.end() > s:
            out.append(m)
        at = max(m.end(), s + 1)
    return out


def grep(
    index: Index,
    pattern: str | re.Pattern,
    rank_query: str | None = None,
    context: int = 0,
    max_matches: int = 20,
    ignore_case: bool = False,
    filters: Filters | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    needs: list[list[str]] | None = None,
    word_start: bool = False,
    doc_filter: DocFilter | None = None,
    state: dict[str, str] | None = None,
    keep: Allowed | None = None,
    timeout: float = TIMEOUT,
) -> GrepResult:
    r"""Matches of ``pattern`` in the clean text, files in BM25 order of ``rank_query``
    (on ``con`` when the caller already holds a connection). With ``needs`` (term groups
    every unit with a match indexes, as ``phrase_terms`` gives them), only the units
    holding them are read. ``word_start``: a match must not follow a word character, as
    if the pattern opened with ``(?<!\w)`` (see ``search.phrase_parts``). ``doc_filter``
    (``filters`` compiled), ``state`` (``index_state``) and ``keep`` (the placements the
    filter allows): what a search read already. With ``needs``, and the mapped postings
    and passages current, the candidates are read from those files, not in SQL. A
    pattern given as a string is a user's, matched with the ``regex`` module for at most
    ``timeout`` seconds in all; one compiled with ``re`` is kbx's own (a phrase)."""
    if max_matches < 1:
        raise BadArgument("--max must be at least 1")
    if isinstance(pattern, re.Pattern):
        rx, pattern, clock = pattern, pattern.pattern, _Clock(None, pattern.pattern)
    else:
        if not timeout > 0:
            raise BadArgument("--timeout must be more than 0 seconds")
        import regex  # a user's pattern only: 13 ms of import a phrase search need not pay

        try:
            rx = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
        except regex.error as e:
            raise BadArgument(f"bad regular expression {quoted(pattern)}: {e}") from None
        clock = _Clock(timeout, pattern)
    lit = literal(pattern)
    pre, pre_params = "TRUE", []
    if lit:
        pre, pre_params = (
            ("contains(lower(u.text), ?)", [lit.lower()])
            if ignore_case
            else ("contains(u.text, ?)", [lit])
        )
    with nullcontext(con) if con else index.reader() as con:
        state = index_state(con) if state is None else state
        f = compile_filters(con, filters) if doc_filter is None else doc_filter
        an = analyzer_from(state, current=True)
        gen = int(state.get(POSTINGS, 0))
        files = _mapped_files(con, index, state, gen) if needs else None
        usable = files is not None and (keep is not None or not f.clauses)
        held = "" if usable else _holding(con, needs) if needs else ""
        rows = []
        if usable:
            rows = _mapped_candidates(con, *files, needs, keep, lit if ignore_case else None)
        elif held is not None:
            only = f"JOIN ({held}) h USING (unit_id)" if held else ""
            rows = con.execute(
                f"""SELECT pl.doc_id, pl.ordinal, d.path, d.sha256, u.text
                    FROM placements pl {only} JOIN units u USING (unit_id)
                    JOIN documents d USING (doc_id)
                    WHERE {f.where()} AND {pre} ORDER BY d.path, pl.ordinal""",
                [*f.params, *pre_params],
            ).fetchall()
        found = [(row, spans) for row in rows if (spans := _matches(rx, row[4], word_start, clock))]
        docs = sorted({row[0] for row, _ in found})
        query = rank_query or _rank_words(pattern)
        if not docs:
            file_rank = {}
        elif usable:
            file_rank = _mapped_file_ranks(con, query, an, docs, files[1], keep, index.db, gen)
        else:
            file_rank = _file_ranks(con, query, an, f, docs, index.db, gen)
        if usable:
            blobs = {row[:2]: row[5] for row, _ in found}
        else:
            blobs = _offsets(con, [row[:2] for row, _ in found]) if found else {}
    found.sort(key=lambda x: (file_rank[x[0][2]], x[0][2], x[0][1]))
    shown: list[GrepMatch] = []
    seen: set[tuple[str, int, int]] = set()  # document positions of the matches so far
    files: dict[str, int] = {}
    # a passage several files share, matched in a better file already: folded into that
    # match (its ``also_in``), as search folds it; by the passage's text and the offset
    first: dict[tuple[str, int], tuple[str, GrepMatch | None]] = {}
    elsewhere: set[str] = set()
    positions = Positions()
    for (doc_id, ordinal, rel, sha, text, *_), spans in found:
        blob = blobs[(doc_id, ordinal)]
        segments = None
        for m in spans:
            chain, base = positions.start(rel, ordinal, text, blob)
            key = (rel, chain, base + m.start())
            if key in seen:  # the overlap of two windows of one long block: reported once
                continue
            seen.add(key)
            same = first.get((text, m.start()))
            if same is not None and same[0] != rel:
                if same[1] is not None and rel not in same[1].also_in:
                    same[1].also_in.append(rel)
                elsewhere.add(rel)
                continue
            files[rel] = files.get(rel, 0) + 1
            here = None
            if len(shown) < max_matches:
                segments = segments or unpack(blob)
                start, end = line_span(segments, text, m.start(), m.end())
                a = cluster_start(text, max(0, m.start() - AROUND))  # never inside a letter
                b = cluster_start(text, min(len(text), m.end() + AROUND))
                around = (
                    ("…" if a else "")
                    + text[a : m.start()]
                    + "**"
                    + m.group()
                    + "**"
                    + text[m.end() : b]
                    + ("…" if b < len(text) else "")
                )
                here = GrepMatch(rel, start, end, sha, m.group(), " ".join(around.split()))
                shown.append(here)
            first.setdefault((text, m.start()), (rel, here))
    if context:
        _add_context(index, shown, context)
    total = sum(files.values())
    shown_files = {m.path for m in shown}
    held = len(set(files) | elsewhere)
    return GrepResult(
        pattern, shown, total, held, total - len(shown), len(set(files) - shown_files)
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
