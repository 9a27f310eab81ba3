"""BM25 over the postings, in DuckDB, with the heading path as a second field.

Score of a unit for query terms t (Robertson & Zaragoza 2009, with Lucene's
non-negative idf, and the heading path as a BM25F-style field of weight w):

    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    tf'(t)  = tf_body(t) + w * tf_heading(t)
    c(t)    = idf(t) * tf'(t) * (k1 + 1) / (tf'(t) + k1 * (1 - b + b * len / avglen))
    score   = sum over query words g of max over the forms t of g of c(t)

A query word's forms (``command-line``, ``command``, ``line``; ``instal`` and
``installing``) are alternatives, so the best one counts, not their sum.

N, df and avglen are over units. Each query term's postings are read with an
equality on ``term_id``, which the sorted table's zone maps answer by reading
only the row groups that hold it. A filter is a set of allowed documents, turned
into allowed units and joined before scoring, so it narrows the work.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from kbx.search.filters import DocFilter


@dataclass(frozen=True)
class BM25Params:
    """The ranking knobs; the defaults are the ones measured best in docs/BENCHMARKS.md."""

    k1: float = 1.2
    b: float = 0.75
    heading_weight: float = 1.0


DEFAULT_PARAMS = BM25Params()


BOOST = 0.5  # a passage holding a boost-only mention asked for scores this much more


def rank(
    con: duckdb.DuckDBPyConnection,
    groups: list[list[str]],
    doc_filter: DocFilter | None = None,
    params: BM25Params = DEFAULT_PARAMS,
    limit: int | None = None,
) -> tuple[list[tuple[int, float, int]], int]:
    """Best units for the query term groups, best first: ``(unit_id, score, groups_matched)``
    rows, and how many units matched at all."""
    group_of: dict[str, int] = {}
    for i, g in enumerate(groups):
        for form in g:
            group_of.setdefault(form, i)
    if not group_of:
        return [], 0
    marks = ", ".join("?" * len(group_of))
    found = con.execute(
        f"SELECT term_id, term FROM terms WHERE term IN ({marks})", list(group_of)
    ).fetchall()
    if not found:
        return [], 0
    union = " UNION ALL ".join(
        f"SELECT {int(tid)} AS term_id, {group_of[term]} AS grp, unit_id, tf, htf "
        f"FROM postings WHERE term_id = {int(tid)}"
        for tid, term in found
    )
    f = doc_filter or DocFilter()
    allowed = (
        f"SEMI JOIN (SELECT pl.unit_id FROM placements pl JOIN documents d USING (doc_id) "
        f"WHERE {f.where()}) a USING (unit_id)"
        if f.clauses
        else ""
    )
    k1, b, w = float(params.k1), float(params.b), float(params.heading_weight)
    boost = " + ".join(["1", *(f"{BOOST} * ({sql})::INTEGER" for sql, _ in f.boosts)])
    rows = con.execute(
        f"""WITH p AS ({union}),
        stats AS (SELECT count(*)::DOUBLE AS n, avg(n_terms)::DOUBLE AS avglen FROM units),
        idf AS (SELECT term_id, ln(1 + (any_value(n) - count(*) + 0.5) / (count(*) + 0.5)) AS idf
                FROM p CROSS JOIN stats GROUP BY term_id),
        contrib AS (
            SELECT p.unit_id, p.grp,
                   max(idf.idf * (p.tf + {w} * p.htf) * ({k1} + 1)
                       / (p.tf + {w} * p.htf + {k1} * (1 - {b} + {b} * u.n_terms / stats.avglen)))
                       AS c
            FROM p JOIN idf USING (term_id) JOIN units u USING (unit_id) CROSS JOIN stats
            {allowed}
            WHERE p.tf + {w} * p.htf > 0
            GROUP BY p.unit_id, p.grp),
        scored AS (SELECT unit_id, sum(c) * ({boost}) AS score, count(*) AS matched
                   FROM contrib GROUP BY unit_id)
        SELECT unit_id, score, matched, count(*) OVER () AS total FROM scored
        ORDER BY score DESC, unit_id {f"LIMIT {int(limit)}" if limit else ""}""",
        [*f.params, *(p for _, ps in f.boosts for p in ps)],
    ).fetchall()
    return [r[:3] for r in rows], (rows[0][3] if rows else 0)
