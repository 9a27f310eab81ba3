"""BM25 over the postings, in one DuckDB query, with the heading path as a second field.

Score of a placement for query terms t (Robertson & Zaragoza 2009, with Lucene's
non-negative idf and a BM25F-style heading field):

    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    tf'(t)  = tf_body(t) + w_heading * [t in heading path]
    score   = sum_t idf(t) * tf'(t) * (k1 + 1) / (tf'(t) + k1 * (1 - b + b * len / avglen))

N, df and avglen are over units (the content-addressed passages); a unit placed
in several documents is scored once per placement and shown once. Filters are a
set of allowed documents, joined before any scoring so they narrow the scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
from kbx.extract.analysis import Analyzer


@dataclass(frozen=True)
class BM25Params:
    """The ranking knobs; the defaults are the ones measured best in docs/BENCHMARKS.md."""

    k1: float = 1.2
    b: float = 0.75
    heading_weight: float = 1.0


DEFAULT_PARAMS = BM25Params()


@dataclass
class DocFilter:
    """Restricts ranking to documents matching every condition (SQL over ``documents d``)."""

    clauses: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)

    def where(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "TRUE"


def analyzer_of(con: duckdb.DuckDBPyConnection) -> Analyzer:
    """The analysis chain the index was built with."""
    row = con.execute("SELECT value FROM kbx_meta WHERE key = 'stemmer'").fetchone()
    return Analyzer(row[0] if row else "snowball")


def path_filter(glob: str | None) -> DocFilter:
    """Documents whose root-relative path matches a glob (``*`` crosses folders)."""
    if not glob:
        return DocFilter()
    return DocFilter(["d.path GLOB ?"], [glob])


def rank(
    con: duckdb.DuckDBPyConnection,
    groups: list[list[str]],
    doc_filter: DocFilter | None = None,
    params: BM25Params = DEFAULT_PARAMS,
    limit: int | None = None,
) -> tuple[list[tuple], int]:
    """Best placements for the query term groups, one per unit, best first.

    Returns rows ``(doc_id, ordinal, unit_id, score, groups_matched)`` and the number
    of distinct units that matched at all.
    """
    forms = [f for g in groups for f in g]
    if not forms:
        return [], 0
    grp = [i for i, g in enumerate(groups) for _ in g]
    f = doc_filter or DocFilter()
    limit_clause = f"LIMIT {int(limit)}" if limit else ""
    sql = f"""
    WITH q AS (SELECT unnest(?::VARCHAR[]) AS term, unnest(?::INTEGER[]) AS grp),
    qt AS (SELECT t.term_id, any_value(q.grp) AS grp FROM q JOIN terms t USING (term)
           GROUP BY t.term_id),
    allowed AS (SELECT doc_id FROM documents d WHERE {f.where()}),
    stats AS (SELECT count(*)::DOUBLE AS n, avg(n_terms)::DOUBLE AS avglen FROM units),
    p AS (SELECT p.term_id, p.unit_id, p.tf FROM postings p SEMI JOIN qt USING (term_id)),
    idf AS (SELECT qt.term_id, ln(1 + (stats.n - coalesce(df.df, 0) + 0.5)
                                    / (coalesce(df.df, 0) + 0.5)) AS idf
            FROM qt CROSS JOIN stats
            LEFT JOIN (SELECT term_id, count(*) AS df FROM p GROUP BY term_id) df
            USING (term_id)),
    body AS (SELECT pl.doc_id, pl.ordinal, p.term_id, p.tf
             FROM p JOIN placements pl USING (unit_id) SEMI JOIN allowed USING (doc_id)),
    head AS (SELECT h.doc_id, h.ordinal, h.term_id FROM heading_terms h
             SEMI JOIN qt USING (term_id) SEMI JOIN allowed USING (doc_id)),
    m AS (SELECT coalesce(b.doc_id, h.doc_id) AS doc_id, coalesce(b.ordinal, h.ordinal) AS ordinal,
                 coalesce(b.term_id, h.term_id) AS term_id,
                 coalesce(b.tf, 0) + ? * (h.term_id IS NOT NULL)::INTEGER AS tf
          FROM body b FULL OUTER JOIN head h
          ON b.doc_id = h.doc_id AND b.ordinal = h.ordinal AND b.term_id = h.term_id),
    scored AS (
        SELECT m.doc_id, m.ordinal, pl.unit_id,
               sum(idf.idf * m.tf * (? + 1)
                   / (m.tf + ? * (1 - ? + ? * u.n_terms / stats.avglen))) AS score,
               count(DISTINCT qt.grp) AS matched
        FROM m JOIN placements pl USING (doc_id, ordinal) JOIN units u USING (unit_id)
        JOIN qt USING (term_id) JOIN idf USING (term_id) CROSS JOIN stats
        GROUP BY m.doc_id, m.ordinal, pl.unit_id),
    best AS (SELECT s.*, d.path FROM scored s JOIN documents d USING (doc_id)
             QUALIFY row_number() OVER (PARTITION BY unit_id ORDER BY score DESC, d.path) = 1)
    SELECT doc_id, ordinal, unit_id, score, matched, count(*) OVER () AS total
    FROM best ORDER BY score DESC, path, ordinal
    {limit_clause}
    """
    k1, b, w = params.k1, params.b, params.heading_weight
    rows = con.execute(sql, [forms, grp, *f.params, w, k1, k1, b, b]).fetchall()
    total = rows[0][5] if rows else 0
    return [r[:5] for r in rows], total
