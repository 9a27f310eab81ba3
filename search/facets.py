"""Facet counts: among every passage that matches the query and the filters (not only the
ones shown), the entities, mention types and years they hold, and their date range. Only
what a filter would keep is counted (mentions precise enough to filter), so a count is
what choosing that value returns.

Counts are of passages (a unit placed in a document). Each facet shows its top values
and, as Elasticsearch's ``sum_other_doc_count`` does, the count behind the values left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from kbx.entities.lookup import FILTER_GRADE
from kbx.search.filters import DocFilter

TOP = 10


@dataclass
class Facet:
    """One facet's top values with their passage counts, and the count of the rest."""

    values: list[dict] = field(default_factory=list)
    other: int = 0


@dataclass
class Facets:
    passages: int
    entities: Facet
    types: Facet
    years: Facet
    first_date: str | None = None
    last_date: str | None = None
    cited_years: Facet = field(default_factory=Facet)  # of the works they cite (kbx resolve)


def _facet(values: list[dict] | None) -> Facet:
    values = values or []
    return Facet(values[:TOP], sum(v["count"] for v in values[TOP:]))


def facet_counts(
    con: duckdb.DuckDBPyConnection, term_ids: list[int], f: DocFilter | None = None
) -> Facets:
    """Facets of the passages holding any of ``term_ids`` that pass ``f``, in one statement:
    the matched passages are found once (each term's postings read by an equality) and
    every facet is a list aggregated over them, values in their order (``by_*``: the
    names of the tables stay free)."""
    f = f or DocFilter()
    scans = " UNION ALL ".join(
        f"SELECT unit_id FROM postings WHERE term_id = {int(t)}" for t in sorted(set(term_ids))
    )
    # Under a date filter, only the dates it kept count: --after 2021 shows no 2019.
    after, before, source = f.dates or (None, None, "any")
    kept = {
        "any": "",
        "mentioned": "AND x.unit_id IS NOT NULL",
        "document": "AND x.unit_id IS NULL",
    }
    window = (
        f"AND x.lo >= coalesce(?::DATE, x.lo) AND x.hi <= coalesce(?::DATE, x.hi) {kept[source]}"
    )
    dated = """FROM matched h JOIN passage_dates x
             ON x.doc_id = h.doc_id AND (x.unit_id IS NULL OR x.unit_id = h.unit_id)"""
    linked = """FROM matched h JOIN links l
             ON l.doc_id = h.doc_id AND (l.unit_id IS NULL OR l.unit_id = h.unit_id)
             AND l.filter  -- what --entity would keep
           JOIN entities e USING (entity_id)"""
    sql = f"""WITH matched AS MATERIALIZED (
            SELECT DISTINCT pl.doc_id, pl.unit_id FROM placements pl JOIN documents d USING (doc_id)
            WHERE pl.unit_id IN ({scans or "SELECT NULL"}) AND {f.where()}),
        by_entities AS (
            SELECT e.entity_id, e.type, e.label, count(DISTINCT (h.doc_id, h.unit_id)) AS n
            {linked} GROUP BY ALL),
        by_types AS (  -- what --type would keep: a model's names through their confirmed links
            SELECT t AS type, count(DISTINCT (doc_id, unit_id)) AS n FROM (
               SELECT m.type AS t, h.doc_id, h.unit_id
               FROM matched h JOIN units u USING (unit_id) JOIN mentions m USING (unit_hash)
               JOIN recognizer_info r ON r.name = m.recognizer
               WHERE NOT r.names AND {FILTER_GRADE}
               UNION ALL
               SELECT e.type, h.doc_id, h.unit_id {linked})
            GROUP BY ALL),
        by_years AS (
            SELECT year(x.lo) AS y, count(DISTINCT (h.doc_id, h.unit_id)) AS n {dated}
            WHERE year(x.lo) = year(x.hi - INTERVAL 1 DAY) {window} GROUP BY ALL),
        by_cited AS (
            SELECT json_extract(e.meta, '$.year')::INTEGER AS y,
                   count(DISTINCT (h.doc_id, h.unit_id)) AS n
            FROM matched h JOIN links l ON l.doc_id = h.doc_id AND l.unit_id = h.unit_id
            JOIN entities e USING (entity_id)
            WHERE json_extract(e.meta, '$.year') IS NOT NULL GROUP BY ALL),
        by_span AS (
            SELECT min(x.lo) AS first, max(x.hi - INTERVAL 1 DAY)::DATE AS last {dated}
            WHERE true {window})
        SELECT (SELECT count(*) FROM matched),
            (SELECT list({{'entity_id': entity_id, 'type': type, 'label': label, 'count': n}}
                         ORDER BY n DESC, entity_id) FROM by_entities),
            (SELECT list({{'type': type, 'count': n}} ORDER BY n DESC, type) FROM by_types),
            (SELECT list({{'year': y, 'count': n}} ORDER BY n DESC, y DESC) FROM by_years),
            (SELECT list({{'year': y, 'count': n}} ORDER BY n DESC, y DESC) FROM by_cited),
            (SELECT first FROM by_span), (SELECT last FROM by_span)"""
    ((n, entities, types, years, cited, first, last),) = con.execute(
        sql, [*f.params, after, before, after, before]
    ).fetchall()
    return Facets(
        n,
        _facet(entities),
        _facet(types),
        _facet(years),
        str(first) if first else None,
        str(last) if last else None,
        _facet(cited),
    )
