"""Facet counts: among every passage that matches the query and the filters (not only the
ones shown), the entities, mention types, years and quantities they hold, who wrote them,
and their date range. Only
what a filter would keep is counted (mentions precise enough to filter), so a count is
what choosing that value returns.

Counts are of passages (a unit placed in a document). Each facet shows its top values
and, as Elasticsearch's ``sum_other_doc_count`` does, the count behind the values left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import duckdb

from kbx.entities.facet_arrays import BINS, NO_YEAR, FacetArrays, bin_key
from kbx.entities.lookup import FILTER_GRADE
from kbx.recognizers.quantity_filter import EDGES, bin_filter, bin_label, edges_key, written
from kbx.search.allowed import Allowed, allowed
from kbx.search.filters import DocFilter, kept_quantity

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
    authors: Facet = field(default_factory=Facet)  # who wrote them (what --author keeps)


def _facet(values: list[dict] | None) -> Facet:
    values = values or []
    return Facet(values[:TOP], sum(v["count"] for v in values[TOP:]))


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
        shown = {"dimension": row["dimension"], "unit": written(row["unit"]), "count": row["count"]}
        values.append({**shown, "bins": bins})
    return _facet(values)


def sql_facets(
    con: duckdb.DuckDBPyConnection,
    term_ids: list[int],
    f: DocFilter | None = None,
    also: Sequence[int] = (),
) -> Facets:
    """Facets of the passages holding any of ``term_ids``, and of the units ``also`` (a
    dense ranking's), that pass ``f``, in one statement (the reference, and what counts
    when the layer's arrays are stale): the matched passages are found once (each term's
    postings read by an equality) and every facet is a list aggregated over them, values
    in their order (``by_*``: the names of the tables stay free)."""
    f = f or DocFilter()
    scans = " UNION ALL ".join(
        [f"SELECT unit_id FROM postings WHERE term_id = {int(t)}" for t in sorted(set(term_ids))]
        + (
            [f"SELECT unnest([{', '.join(str(int(u)) for u in also)}]::BIGINT[])"]
            if len(also)
            else []
        )
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
        by_authors AS (  -- what --author would keep
            SELECT e.entity_id, e.type, e.label, count(DISTINCT (h.doc_id, h.unit_id)) AS n
            FROM matched h JOIN authored a
              ON a.doc_id = h.doc_id AND (a.unit_id IS NULL OR a.unit_id = h.unit_id)
            JOIN entities e USING (entity_id) GROUP BY ALL),
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
            JOIN ({BINS}) b(key, bin, lo, hi)
              ON b.key = {bin_key("q")} AND q.lo < b.hi AND q.hi >= b.lo
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
                         ORDER BY n DESC, dimension, unit) FROM by_quantities),
            (SELECT list({{'entity_id': entity_id, 'type': type, 'label': label, 'count': n}}
                         ORDER BY n DESC, entity_id) FROM by_authors)"""
    ((n, entities, types, years, cited, first, last, quantities, authors),) = con.execute(
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
        _facet(authors),
    )


def facet_counts(
    con: duckdb.DuckDBPyConnection,
    term_ids: list[int],
    f: DocFilter | None = None,
    layer: FacetArrays | None = None,
    postings=None,
    keep: Allowed | None = None,
    also: Sequence[int] = (),
) -> Facets:
    """Facets of the passages holding any of ``term_ids``, and of the units ``also``, that
    pass ``f``: counted with numpy over the ``layer``'s arrays when the caller found them
    current (``postings``, the mapped postings when current, give the matched units;
    ``keep``, the placements ``f`` allows when the search found them), else
    ``sql_facets``. The two give the same counts, ties and order
    (tests/search/test_facet_arrays.py)."""
    f = f or DocFilter()
    if layer is None or len(f.places) != len(f.clauses):
        return sql_facets(con, term_ids, f, also)
    import numpy as np

    ids = sorted(set(term_ids))
    if postings is not None:
        parts = [postings.of(t)[0] for t in ids]
        units = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    elif ids:
        units = con.execute(
            f"SELECT DISTINCT unit_id FROM postings WHERE term_id IN ({', '.join(map(str, ids))})"
        ).fetchnumpy()["unit_id"]
    else:
        units = np.zeros(0, np.int64)
    if len(also):
        units = np.union1d(units, np.asarray(also, dtype=np.int64))
    if keep is None and f.places:
        keep = allowed(con, f, layer)
    return counted(layer, np.asarray(units, dtype=np.int64), keep, f)


EPOCH = date(1970, 1, 1)


def in_window(lo, hi, doc, window: tuple | None):
    """Which of the layer's date rows (days since ``EPOCH``, end exclusive, and whether
    each is the document's own date) a date filter's window ``(after, before, source)``
    keeps, as its SQL keeps them; all of them without one."""
    import numpy as np

    keep = np.ones(len(lo), dtype=bool)
    if window:
        after, before, source = window
        if after is not None:
            keep &= lo >= (after - EPOCH).days
        if before is not None:
            keep &= hi <= (before - EPOCH).days
        if source != "any":
            keep &= doc == (source == "document")
    return keep


def _spread(a, n):
    """``arange(a[i], a[i] + n[i])`` for every ``i``, concatenated."""
    import numpy as np

    return np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + np.repeat(a, n)


def _ranges(start, at):
    """The rows ``start[i]:start[i + 1]`` of every ``i`` in ``at``, concatenated, and the
    position in ``at`` each came from."""
    import numpy as np

    n = start[at + 1] - start[at]
    return _spread(start[at], n), np.repeat(np.arange(len(at)), n)


def _top(counts, order_keys) -> list[int]:
    """Indexes with a count, most first, ties by ``order_keys`` (``lexsort``'s, last first)."""
    import numpy as np

    nz = np.flatnonzero(counts)
    return [int(i) for i in nz[np.lexsort((*order_keys(nz), -counts[nz]))]]


def counted(layer: FacetArrays, units, keep: Allowed | None, f: DocFilter) -> Facets:
    """``sql_facets``' counts over the layer's arrays: the passages of the matched ``units``
    (kept to the placements ``keep`` a filter allows), each facet a bincount
    over their rows, the date and quantity filters' windows applied to the rows as the
    SQL applies them."""
    import numpy as np

    units = units[units < len(layer.unit_start) - 1]
    rows, _ = _ranges(layer.unit_start, units)
    if keep is not None:
        key = layer.pl_unit[rows].astype(np.int64) << 32 | layer.pl_doc[rows]
        rows = rows[np.isin(key, keep.keys)]
    ids, labels, etypes = (layer.strings(x) for x in ("ent_id", "ent_label", "ent_type"))

    def named(start, ents) -> Facet:  # entities by passages, ties by id, then the rest
        got = ents[_ranges(start, rows)[0]]
        n = np.bincount(got) if len(got) else np.zeros(0, np.int64)
        top = [
            {"entity_id": ids[i], "type": etypes[i], "label": labels[i], "count": int(n[i])}
            for i in _top(n, lambda nz: (nz,))[:TOP]
        ]
        return Facet(top, int(n.sum()) - sum(e["count"] for e in top))

    types_n = np.bincount(layer.typ[_ranges(layer.typ_start, rows)[0]])
    names = layer.strings("typ_name")
    types = [{"type": names[i], "count": int(types_n[i])} for i in _top(types_n, lambda nz: (nz,))]
    first, last, years = _dates(layer, rows, f.dates)
    cited = _years(layer.cit_year[_ranges(layer.cit_start, rows)[0]])
    return Facets(
        len(rows),
        named(layer.ent_start, layer.ent),
        _facet(types),
        _facet(years),
        first,
        last,
        _facet(cited),
        _quantities(_quantity_rows(layer, rows, f)),
        named(layer.aut_start, layer.aut),
    )


def _years(ys) -> list[dict]:
    """``{year, count}`` most first, later years first on ties."""
    import numpy as np

    if not len(ys):
        return []
    lo = int(ys.min())
    n = np.bincount(ys.astype(np.int64) - lo)
    return [{"year": i + lo, "count": int(n[i])} for i in _top(n, lambda nz: (-nz,))]


def _dates(layer: FacetArrays, rows, window) -> tuple[str | None, str | None, list[dict]]:
    """First and last date and the years of the rows' dates that the date filter kept."""
    import numpy as np

    at, owner = _ranges(layer.dat_start, rows)
    lo, hi = layer.dat_lo[at], layer.dat_hi[at]
    keep = in_window(lo, hi, layer.dat_doc[at], window)
    if not keep.any():
        return None, None, []
    first = str(EPOCH + timedelta(days=int(lo[keep].min())))
    last = str(EPOCH + timedelta(days=int(hi[keep].max()) - 1))
    year = layer.dat_year[at]
    keep &= year != NO_YEAR
    owner, year = owner[keep], year[keep]  # a passage's rows are sorted by year: one each
    once = np.r_[True, (owner[1:] != owner[:-1]) | (year[1:] != year[:-1])]
    return first, last, _years(year[once[: len(year)]])


def _quantity_rows(layer: FacetArrays, rows, f: DocFilter) -> list[dict]:
    """Per dimension and unit, the passages with a quantity the filters kept and their
    bins, as the SQL's ``by_quantities`` rows: a unit's quantities count once for each of
    its matched passages."""
    import numpy as np

    units, weight = np.unique(layer.pl_unit[rows], return_counts=True)
    at, owner = _ranges(layer.qty_start, units)
    group, b0, b1 = layer.qty_group[at], layer.qty_b0[at], layer.qty_b1[at]
    dims, sis = layer.strings("grp_dim"), layer.strings("grp_unit")
    keep = np.ones(len(at), dtype=bool)
    for asked in f.asked:
        other = np.array([sis[g] != asked.unit for g in range(len(sis))], dtype=bool)
        keep &= other[group] | kept_quantity(asked, layer.qty_lo[at], layer.qty_hi[at])
    owner, group, b0, b1 = owner[keep], group[keep], b0[keep], b1[keep]
    if not len(owner):
        return []
    once = np.r_[True, (owner[1:] != owner[:-1]) | (group[1:] != group[:-1])]
    n_groups = len(sis)
    per_group = np.bincount(group[once], weights=weight[owner[once]], minlength=n_groups)
    span = b1 - b0 + 1  # a quantity counts in every bin it overlaps, a passage once a bin
    bins = _spread(b0, span)
    width = int(bins.max()) + 1
    cell = np.unique((np.repeat(owner, span) * n_groups + np.repeat(group, span)) * width + bins)
    g_of, b_of = (cell // width) % n_groups, cell % width
    per_bin = np.bincount(
        g_of * width + b_of, weights=weight[cell // width // n_groups], minlength=n_groups * width
    ).reshape(n_groups, width)
    return [
        {
            "dimension": dims[g],
            "unit": sis[g],
            "count": int(per_group[g]),
            "bins": [
                {"bin": int(b), "count": int(per_bin[g, b])} for b in np.flatnonzero(per_bin[g])
            ],
        }
        for g in _top(per_group, lambda nz: (nz,))
    ]
