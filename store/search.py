"""``kbx search``: ranked, cited passages, and the exact matches of the query's phrase."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb
from kbx.errors import BadArgument
from kbx.extract.analysis import Analyzer
from kbx.store.bm25 import DEFAULT_PARAMS, BM25Params, analyzer_of, path_filter, rank
from kbx.store.db import Index
from kbx.store.grep import grep
from kbx.store.passages import decode_offsets, line_span, mark, matches, snippet_window


@dataclass
class Hit:
    """One passage: where it is, how well it matched, and its text with matches marked."""

    path: str
    start_line: int
    end_line: int
    hash: str
    score: float
    heading_path: list[str]
    snippet: str
    snippet_lines: tuple[int, int]
    covered: int
    query_terms: int
    text: str
    unit: str
    page: int | None = None
    also_in: list[str] = field(default_factory=list)


@dataclass
class SearchResult:
    """Ranked hits, how many more matched, and exact matches of the literal query."""

    query: str
    terms: list[list[str]]
    hits: list[Hit]
    total: int
    left_out: int
    exact: list = field(default_factory=list)
    exact_total: int = 0


def hits_for(
    con: duckdb.DuckDBPyConnection, ranked: list[tuple], groups: list[list[str]], an: Analyzer
) -> list[Hit]:
    """Materialize ranked placements as cited passages."""
    if not ranked:
        return []
    keys = [(r[0], r[1]) for r in ranked]
    rows = con.execute(
        """SELECT pl.doc_id, pl.ordinal, d.path, d.sha256, pl.start_line, pl.end_line,
                  pl.heading_path, pl.page, pl.offsets, u.text, u.unit_hash, u.kind,
                  (SELECT list(d2.path ORDER BY d2.path) FROM placements p2
                   JOIN documents d2 USING (doc_id)
                   WHERE p2.unit_id = pl.unit_id AND p2.doc_id != pl.doc_id) AS also
           FROM (SELECT unnest(?::INTEGER[]) AS doc_id, unnest(?::INTEGER[]) AS ordinal) k
           JOIN placements pl USING (doc_id, ordinal)
           JOIN documents d USING (doc_id) JOIN units u USING (unit_id)""",
        [[k[0] for k in keys], [k[1] for k in keys]],
    ).fetchall()
    by_key = {(r[0], r[1]): r for r in rows}
    forms = {f for g in groups for f in g}
    hits = []
    for doc_id, ordinal, _, score, matched in ranked:
        (_, _, path, sha, start, end, heading, page, blob, text, unit_hash, kind, also) = by_key[
            (doc_id, ordinal)
        ]
        spans = matches(text, forms, an, kind == "code")
        a, b = snippet_window(text, spans)
        segments = decode_offsets(blob)
        hits.append(
            Hit(
                path=path,
                start_line=start,
                end_line=end,
                hash=sha,
                score=round(score, 4),
                heading_path=list(heading or []),
                snippet=mark(text, spans, a, b),
                snippet_lines=line_span(segments, text, a, b),
                covered=matched,
                query_terms=len(groups),
                text=text,
                unit=unit_hash,
                page=page,
                also_in=list(dict.fromkeys(also or [])),
            )
        )
    return hits


def search(
    index: Index,
    query: str,
    k: int = 8,
    path: str | None = None,
    params: BM25Params = DEFAULT_PARAMS,
    exact: int = 3,
) -> SearchResult:
    """The ``k`` best passages for ``query``, and up to ``exact`` literal matches of it."""
    if not query.strip():
        raise BadArgument("the query is empty; give some words to search for")
    if k < 1:
        raise BadArgument("-k must be at least 1")
    with index.reader() as con:
        an = analyzer_of(con)
        groups = an.query(query)
        ranked, total = rank(con, groups, path_filter(path), params, limit=k)
        hits = hits_for(con, ranked, groups, an)
    result = SearchResult(query, groups, hits, total, max(0, total - len(hits)))
    if exact and len(query.split()) > 1:
        g = grep(
            index,
            re.escape(query.strip()),
            rank_query=query,
            max_matches=exact,
            ignore_case=True,
            path=path,
        )
        result.exact, result.exact_total = g.matches, g.total
    return result
