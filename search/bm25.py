"""BM25 over the postings, in DuckDB, with the heading path as a second field.

The formula and its parts are in ``search/scoring.py``; the SQL here is generated from
those functions (handed column names instead of numbers), so the ranker and the
reference scorer are one definition. N, df and avglen are over units.

Each query term's postings are read with an equality on ``term_id``, which the sorted
table's zone maps answer by reading only the row groups that hold it. A term serves every
query word it is a form of. Each unit's word scores are taken in one pass (one ``max``
per word) and added in query order, so equal parts give equal totals and ties fall to
``unit_id``. A filter is a set of allowed units, joined before scoring, so it narrows the
work.
"""

from __future__ import annotations

import duckdb

from kbx.search.filters import DocFilter
from kbx.search.scoring import (
    DEFAULT_PARAMS,
    BM25Params,
    Sql,
    boost,
    contribution,
    field_tf,
    idf,
)

__all__ = ["BM25Params", "DEFAULT_PARAMS", "rank"]


def _pairs(groups: list[list[str]]) -> list[tuple[str, int]]:
    """``(form, word)`` for every distinct form of every query word."""
    return [(form, i) for i, g in enumerate(groups) for form in dict.fromkeys(g)]


def rank_sql(
    pairs: list[tuple[int, int]], n_words: int, f: DocFilter, params: BM25Params, limit
) -> str:
    """The ranking statement for ``(term_id, word)`` pairs of found terms."""
    term_ids = sorted({t for t, _ in pairs})
    postings = " UNION ALL ".join(
        f"SELECT term_id, unit_id, tf, htf FROM postings WHERE term_id = {int(t)}" for t in term_ids
    )
    words = ", ".join(f"({int(t)}, {int(g)})" for t, g in pairs)
    ftf = field_tf(Sql("p.tf"), Sql("p.htf"), float(params.heading_weight))
    c = contribution(Sql("w.idf"), ftf, Sql("u.n_terms"), Sql("stats.avglen"), params)
    allowed = (
        f"SEMI JOIN (SELECT pl.unit_id FROM placements pl JOIN documents d USING (doc_id) "
        f"WHERE {f.where()}) a ON a.unit_id = p.unit_id"
        if f.clauses
        else ""
    )
    best = ", ".join(f"max(c) FILTER (WHERE grp = {g}) AS w{g}" for g in range(n_words))
    summed = " + ".join(f"coalesce(w{g}, 0::DOUBLE)" for g in range(n_words))
    matched = " + ".join(f"(w{g} IS NOT NULL)::INTEGER" for g in range(n_words))
    boosts = " + ".join(f"({sql})::INTEGER" for sql, _ in f.boosts)
    factor = f" * {boost(Sql(f'({boosts})'))}" if f.boosts else ""
    return f"""WITH q(term_id, grp) AS (VALUES {words}),
        p AS ({postings}),
        stats AS (SELECT count(*)::DOUBLE AS n, avg(n_terms)::DOUBLE AS avglen FROM units),
        w AS (SELECT q.term_id, q.grp, {idf(Sql("stats.n"), Sql("d.df"))} AS idf
              FROM q JOIN (SELECT term_id, count(*) AS df FROM p GROUP BY term_id) d
                USING (term_id) CROSS JOIN stats),
        c AS (SELECT p.unit_id, w.grp, {c} AS c
              FROM p {allowed} JOIN w ON w.term_id = p.term_id
              JOIN units u ON u.unit_id = p.unit_id CROSS JOIN stats
              WHERE {ftf} > 0),
        s AS (SELECT unit_id, {best} FROM c GROUP BY unit_id)
        SELECT unit_id, ({summed}){factor} AS score, {matched} AS matched,
               count(*) OVER () AS total
        FROM s ORDER BY score DESC, unit_id {f"LIMIT {int(limit)}" if limit else ""}"""


def rank(
    con: duckdb.DuckDBPyConnection,
    groups: list[list[str]],
    doc_filter: DocFilter | None = None,
    params: BM25Params = DEFAULT_PARAMS,
    limit: int | None = None,
) -> tuple[list[tuple[int, float, int]], int]:
    """Best units for the query term groups, best first: ``(unit_id, score, groups_matched)``
    rows, and how many units matched at all."""
    pairs = _pairs(groups)
    if not pairs:
        return [], 0
    forms = list(dict.fromkeys(form for form, _ in pairs))
    marks = ", ".join("?" * len(forms))  # an IN list: the unique index answers it
    ids = dict(
        con.execute(f"SELECT term, term_id FROM terms WHERE term IN ({marks})", forms).fetchall()
    )
    found = [(ids[form], g) for form, g in pairs if form in ids]
    if not found:
        return [], 0
    f = doc_filter or DocFilter()
    rows = con.execute(
        rank_sql(found, len(groups), f, params, limit),
        [*f.params, *(p for _, ps in f.boosts for p in ps)],
    ).fetchall()
    return [r[:3] for r in rows], (rows[0][3] if rows else 0)
