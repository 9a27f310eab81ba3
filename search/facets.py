"""Facet counts: among every passage that matches the query and the filters (not only the
ones shown), the entities, mention types, years and quantities they hold, and their date
range. Only
what a filter would keep is counted (mentions precise enough to filter), so a count is
what choosing that value returns.

Counts are of passages (a unit placed in a document). Each facet shows its top values
and, as Elasticsearch's ``sum_other_doc_count`` does, the count behind the values left out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import duckdb

from kbx.entities.lookup import FILTER_GRADE
from kbx.recognizers.quantity_filter import EDGES, bin_filter, bin_label, edges_key
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
    quantities: Facet = field(default_factory=Facet)  # per dimension, with a value histogram


def _facet(values: list[dict] | None) -> Facet:
    values = values or []
    return Facet(values[:TOP], sum(v["count"] for v in values[TOP:]))


# Each unit's histogram bins as rows (key, bin, lo, hi): bin i is [edge i-1, edge i), the
# first from -inf and the last to +inf. Constants of this module only: safe to inline.
def _bin_rows() -> str:
    rows = []
    for key, edges in EDGES.items():
        ends = ["'-inf'", *(repr(e) for e, _ in edges), "'inf'"]
        pairs = enumerate(itertools.pairwise(ends))
        rows += [f"('{key}', {i}, {a}::DOUBLE, {b}::DOUBLE)" for i, (a, b) in pairs]
    return "VALUES " + ", ".join(rows)


_BINS = _bin_rows()
_KEYS = ", ".join(f"'{k}'" for k in EDGES if k)


def _quantities(rows: list[dict] | None) -> Facet:
    """Each dimension's passages, and its bins from the first to the last that holds any: a
    passage counts in every bin its quantities overlap, and a bin's ``filter`` (the
    ``--quantity`` that keeps what it counts) returns that count."""
    values = []
    for row in rows or []:
        edges = EDGES[edges_key(row["dimension"], row["unit"])]
        counts = {b["bin"]: b["count"] for b in row["bins"]}
        bins = []
        for i in range(min(counts), max(counts) + 1):
            low = edges[i - 1] if i > 0 else None
            high = edges[i] if i < len(edges) else None
            bins.append(
                {
                    "from": bin_label(row["dimension"], row["unit"], low[1]) if low else None,
                    "to": bin_label(row["dimension"], row["unit"], high[1]) if high else None,
                    "lo": low[0] if low else None,
                    "hi": high[0] if high else None,
                    "count": counts.get(i, 0),
                    "filter": bin_filter(
                        row["dimension"], row["unit"], low and low[0], high and high[0]
                    ),
                }
            )
        values.append({**{k: row[k] for k in ("dimension", "unit", "count")}, "bins": bins})
    return _facet(values)


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
    kept_quantities = " AND ".join(c for c, _ in f.quantities) or "true"
    kept_params = [p for _, ps in f.quantities for p in ps]
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
            WHERE true {window}),
        quantified AS (  -- under a quantity filter, only the quantities it kept count
            SELECT h.doc_id, h.unit_id, q.dimension, q.unit, b.bin
            FROM matched h JOIN passage_quantities q USING (unit_id)
            JOIN ({_BINS}) b(key, bin, lo, hi)
              ON b.key = CASE WHEN q.dimension = 'money' THEN 'money'
                              WHEN q.unit IN ({_KEYS}) THEN q.unit ELSE '' END
             AND q.lo < b.hi AND q.hi >= b.lo
            WHERE {kept_quantities}),
        by_bins AS (
            SELECT dimension, unit, bin, count(DISTINCT (doc_id, unit_id)) AS n
            FROM quantified GROUP BY ALL),
        by_quantities AS (
            SELECT q.dimension, q.unit, q.n,
                   list({{'bin': b.bin, 'count': b.n}} ORDER BY b.bin) AS bins
            FROM (SELECT dimension, unit, count(DISTINCT (doc_id, unit_id)) AS n
                  FROM quantified GROUP BY ALL) q JOIN by_bins b USING (dimension, unit)
            GROUP BY ALL)
        SELECT (SELECT count(*) FROM matched),
            (SELECT list({{'entity_id': entity_id, 'type': type, 'label': label, 'count': n}}
                         ORDER BY n DESC, entity_id) FROM by_entities),
            (SELECT list({{'type': type, 'count': n}} ORDER BY n DESC, type) FROM by_types),
            (SELECT list({{'year': y, 'count': n}} ORDER BY n DESC, y DESC) FROM by_years),
            (SELECT list({{'year': y, 'count': n}} ORDER BY n DESC, y DESC) FROM by_cited),
            (SELECT first FROM by_span), (SELECT last FROM by_span),
            (SELECT list({{'dimension': dimension, 'unit': unit, 'count': n, 'bins': bins}}
                         ORDER BY n DESC, dimension, unit) FROM by_quantities)"""
    ((n, entities, types, years, cited, first, last, quantities),) = con.execute(
        sql, [*f.params, after, before, after, before, *kept_params]
    ).fetchall()
    return Facets(
        n,
        _facet(entities),
        _facet(types),
        _facet(years),
        str(first) if first else None,
        str(last) if last else None,
        _facet(cited),
        _quantities(quantities),
    )
