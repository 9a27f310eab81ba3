"""BM25 over the postings, in DuckDB, with the heading path as a second field.

The formula and its parts are in ``search/scoring.py``; the SQL here is generated from
those functions (handed column names instead of numbers), so the ranker and the
reference scorer are one definition. N, df and avglen are over units.

Each query term's postings are read with ``term_id IN (...)`` constants, which the sorted
table's zone maps answer by reading only the row groups that hold them (df from the same
row groups, reading only ``term_id``). A term serves every query word it is a form of. A
filter is the set of units some allowed placement holds, built from the filter's own
tables (see ``DocFilter.units``) and joined to the postings before lengths are looked up
and anything is scored, so a selective filter narrows the work to its units.

Where the index has its postings exported as mapped arrays of the current generation
(store/postings_file.py) and they are large enough to repay importing numpy in a cold
process, ``rank`` scores over those instead, with the same functions: the same scores and
order, without planning a statement or scanning a term's postings twice (df and scores),
the query's term ids read from the file's own dictionary, the words' scores summed in one
``bincount``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kbx.search.allowed import Allowed
from kbx.search.allowed import allowed as placements
from kbx.search.filters import DocFilter
from kbx.search.prior import docs_of, rank_with_prior, rescored
from kbx.search.scoring import (
    DEFAULT_PARAMS,
    BM25Params,
    Sql,
    boost,
    contribution,
    field_tf,
    grid,
    idf,
)
from kbx.store import arrays
from kbx.store.postings import mapped_path

if TYPE_CHECKING:  # numpy: only once a search ranks over the mapped file
    from kbx.store.passages_file import PassagesFile
    from kbx.store.postings_file import PostingsFile

__all__ = ["BM25Params", "DEFAULT_PARAMS", "coverage", "rank", "rank_sql", "term_ids"]


def _pairs(groups: list[list[str]]) -> list[tuple[str, int]]:
    """``(form, word)`` for every distinct form of every query word."""
    return [(form, i) for i, g in enumerate(groups) for form in dict.fromkeys(g)]


def term_ids(
    con: duckdb.DuckDBPyConnection, forms: list[str], pf: PostingsFile | None = None
) -> dict[str, int]:
    """The ids of those ``forms`` the index holds: from the mapped postings ``pf`` when the
    caller has them current (no statement), else an IN list (the unique index answers it,
    where ``list_contains`` would read every term)."""
    if pf is not None:
        return pf.ids(forms)
    forms = list(dict.fromkeys(forms))
    if not forms:
        return {}
    marks = ", ".join("?" * len(forms))
    sql = f"SELECT term, term_id FROM terms WHERE term IN ({marks})"
    return dict(con.execute(sql, forms).fetchall())


def coverage(
    con: duckdb.DuckDBPyConnection,
    groups: list[list[str]],
    ids: dict[str, int],
    unit: int,
    pf: PostingsFile | None = None,
) -> float:
    """How much of the query one unit holds: the idf of the query words (``groups``, each
    by the best of its forms) that it holds any form of, over the idf of all of them; 0
    where no word is indexed. From the mapped postings when current, else one statement."""
    found = {t for g in groups for t in g if t in ids}
    if not found:
        return 0.0
    if pf is not None:
        import numpy as np

        n = pf.n
        df, held = {}, set()
        for t in found:
            units = pf.of(ids[t])[0]
            df[t] = len(units)
            at = int(np.searchsorted(units, unit))
            if at < len(units) and int(units[at]) == unit:
                held.add(t)
    else:
        marks = ", ".join(str(int(ids[t])) for t in found)
        rows = con.execute(
            f"""SELECT term_id, count(*), bool_or(unit_id = ?), (SELECT count(*) FROM units)
                FROM postings WHERE term_id IN ({marks}) GROUP BY term_id""",
            [int(unit)],
        ).fetchall()
        by_id = {t: (c, bool(h)) for t, c, h, _ in rows}
        n = rows[0][3] if rows else 0
        df = {t: by_id.get(ids[t], (0, False))[0] for t in found}
        held = {t for t in found if by_id.get(ids[t], (0, False))[1]}
    total = got = 0.0
    for g in groups:
        forms = [t for t in g if t in found and df[t]]
        if not forms:
            continue
        w = max(float(idf(n, df[t])) for t in forms)
        total += w
        got += w if any(t in held for t in forms) else 0.0
    return got / total if total else 0.0


def rank_sql(
    pairs: list[tuple[int, int]],
    f: DocFilter,
    params: BM25Params,
    limit: int | None,
    file_prior: bool = False,
) -> str:
    """The ranking statement for ``(term_id, word)`` pairs of found terms; its parameters
    are the filter's, then the boosts'. With ``file_prior``, each unit's score gains
    ``params.doc_prior`` times the best score among the matching units of its files
    (search/prior.py: the same sum as ``with_prior``'s)."""
    in_terms = ", ".join(str(int(t)) for t in sorted({t for t, _ in pairs}))
    words = ", ".join(f"({int(t)}, {int(g)})" for t, g in pairs)
    ftf = field_tf(Sql("p.tf"), Sql("p.htf"), float(params.heading_weight))
    c = contribution(Sql("w.idf"), ftf, Sql("u.n_terms"), Sql("stats.avglen"), params)
    units = f.units()
    allowed = f"a AS ({units})," if units else ""
    only = "SEMI JOIN a ON a.unit_id = p.unit_id" if units else ""
    boosts = " + ".join(f"({sql})::INTEGER" for sql, _ in f.boosts)
    factor = f" * {boost(Sql(f'({boosts})'))}" if f.boosts else ""
    # A posting has tf or htf above 0, so only a weight of 0 or less can leave ftf at 0.
    counted = f"WHERE {ftf} > 0" if params.heading_weight <= 0 else ""
    return f"""WITH {allowed}
        q(term_id, grp) AS (VALUES {words}),
        df AS (SELECT term_id, count(*) AS df FROM postings
               WHERE term_id IN ({in_terms}) GROUP BY term_id),
        stats AS (SELECT count(*)::DOUBLE AS n, avg(n_terms)::DOUBLE AS avglen FROM units),
        w AS (SELECT q.term_id, q.grp, {idf(Sql("stats.n"), Sql("df.df"))} AS idf
              FROM q JOIN df USING (term_id) CROSS JOIN stats),
        c AS (SELECT p.unit_id, w.grp, {grid(Sql(f"max({c})"))} AS c
              FROM (SELECT * FROM postings WHERE term_id IN ({in_terms})) p {only}
              JOIN w ON w.term_id = p.term_id
              JOIN units u ON u.unit_id = p.unit_id CROSS JOIN stats
              {counted} GROUP BY p.unit_id, w.grp),
        s AS (SELECT unit_id, sum(c) AS score, count(*) AS matched FROM c GROUP BY unit_id)
        {
        _prior_sql(factor, params.doc_prior)
        if file_prior and params.doc_prior > 0
        else f"SELECT unit_id, score{factor} AS score, matched, count(*) OVER () AS total FROM s"
    }
        ORDER BY score DESC, unit_id {f"LIMIT {int(limit)}" if limit else ""}"""


def _prior_sql(factor: str, weight: float) -> str:
    """The tail of ``rank_sql`` with the file prior: each file's best score over its
    placements, each unit's best over its files (0 for a unit placed nowhere)."""
    w = Sql("coalesce(ub.best, 0.0)")
    return f""", b AS (SELECT unit_id, score{factor} AS score, matched FROM s),
        pb AS (SELECT b.unit_id, b.score, pl.doc_id FROM b JOIN placements pl USING (unit_id)),
        fb AS (SELECT doc_id, max(score) AS best FROM pb GROUP BY doc_id),
        ub AS (SELECT pb.unit_id, max(fb.best) AS best FROM pb JOIN fb USING (doc_id)
               GROUP BY pb.unit_id)
        SELECT b.unit_id, b.score + {float(weight) * w} AS score, b.matched,
               count(*) OVER () AS total
        FROM b LEFT JOIN ub USING (unit_id)"""


def rank(
    con: duckdb.DuckDBPyConnection,
    groups: list[list[str]],
    doc_filter: DocFilter | None = None,
    params: BM25Params = DEFAULT_PARAMS,
    limit: int | None = None,
    db: Path | None = None,
    generation: int | None = None,
    ids: dict[str, int] | None = None,
    allowed: Allowed | None = None,
    file_prior: bool = False,
    passages: PassagesFile | None = None,
) -> tuple[list[tuple[int, float, int]], int]:
    """Best units for the query term groups, best first: ``(unit_id, score, groups_matched)``
    rows, and how many units matched at all. ``db``, the file ``con`` has open, the
    postings' ``generation`` and the forms' ``ids`` (``term_ids``), when the caller has
    read them, each save a statement (about a millisecond); so does ``allowed``, the
    placements the filter keeps (search/allowed.py), over the mapped postings.
    ``file_prior``: scores with the file prior of ``params.doc_prior`` (search/prior.py),
    computed over every matching unit in the same pass: in the statement, or over the
    mapped postings with the mapped placements ``passages`` (without them, a pool of the
    best units and their files from SQL, ``prior.rank_with_prior``)."""
    pairs = _pairs(groups)
    if not pairs:
        return [], 0
    f = doc_filter or DocFilter()
    pf = None if f.boosts else mapped(con, db, generation)
    ids = term_ids(con, [form for form, _ in pairs], pf) if ids is None else ids
    found = [(ids[form], g) for form, g in pairs if form in ids]
    if not found:
        return [], 0
    weight = float(params.doc_prior) if file_prior else 0.0
    if pf is not None:
        if weight > 0 and passages is None:
            return rank_with_prior(
                lambda cut: _rank_mapped(con, pf, found, len(groups), f, params, cut, allowed),
                lambda units: docs_of(con, units),
                weight,
                limit,
            )
        prior = passages if weight > 0 else None
        return _rank_mapped(con, pf, found, len(groups), f, params, limit, allowed, prior)
    rows = con.execute(
        rank_sql(found, f, params, limit, weight > 0),
        [*f.params, *(p for _, ps in f.boosts for p in ps)],
    ).fetchall()
    return [r[:3] for r in rows], (rows[0][3] if rows else 0)


def mapped(con: duckdb.DuckDBPyConnection, db: Path | None = None, gen: int | None = None):
    """The index's mapped postings (``PostingsFile``) when they are of the postings' current
    generation (``gen`` when the caller read it) and worth using (``arrays.MAPPED_MIN_BYTES``,
    ``arrays.WARM``); else None."""
    if db is None:
        db, gen = con.execute(
            """SELECT (SELECT path FROM duckdb_databases()
                       WHERE database_name = current_database()),
                      (SELECT value FROM kbx_meta WHERE key = 'postings_generation')"""
        ).fetchone()
    elif gen is None:
        row = con.execute("SELECT value FROM kbx_meta WHERE key = 'postings_generation'").fetchone()
        gen = row[0] if row else None
    if not db:  # an in-memory database: nothing beside it
        return None
    try:
        if not arrays.WARM and os.stat(mapped_path(Path(db))).st_size < arrays.MAPPED_MIN_BYTES:
            return None
    except OSError:
        return None
    from kbx.store.postings_file import cached  # numpy: only now

    return cached(Path(db), int(gen or 0))


def _rank_mapped(
    con: duckdb.DuckDBPyConnection,
    pf,
    found: list[tuple[int, int]],
    n_groups: int,
    f: DocFilter,
    params: BM25Params,
    limit: int | None,
    keep: Allowed | None = None,
    passages: PassagesFile | None = None,
) -> tuple[list[tuple[int, float, int]], int]:
    """``rank`` over the mapped postings: each word's best form per unit on the grid,
    summed over words (exact in any order, see scoring.grid), ties by unit id; with the
    mapped ``passages``, plus the file prior of ``params.doc_prior`` (prior.rescored)."""
    import numpy as np

    size = len(pf.length)
    allowed = None
    if keep is None and f.places:
        keep = placements(con, f)
    if keep is not None:
        ids = keep.keys >> 32  # a unit twice is set twice: no need to make them distinct
        allowed = np.zeros(size, dtype=bool)
        allowed[ids[ids < size]] = True
    w = float(params.heading_weight)
    words_units, words_scores = [], []  # per query word its units (in order) and scores
    for g in range(n_groups):
        us, cs = [], []
        for t in dict.fromkeys(t for t, grp in found if grp == g):
            units, tf, htf = pf.of(t)
            weight = idf(pf.n, len(units))
            if allowed is not None:
                keep = allowed[units]
                units, tf, htf = units[keep], tf[keep], htf[keep]
            ftf = field_tf(tf, htf, w)
            if w <= 0:
                keep = ftf > 0
                units, ftf = units[keep], ftf[keep]
            us.append(units)
            cs.append(contribution(weight, ftf, pf.length[units], pf.avglen, params))
        if not us:
            continue
        units, c = (us[0], cs[0]) if len(us) == 1 else _best_per_unit(us, cs)
        if len(units):
            words_units.append(units)  # sorted, as the postings are
            words_scores.append(grid(c))
    if not words_units:
        return [], 0
    # Summed by one bincount, not a scatter per word: sums on the grid are exact in any order.
    every = np.concatenate(words_units)
    score = np.bincount(every, weights=np.concatenate(words_scores), minlength=size)
    seen = np.zeros(size, dtype=bool)
    seen[every] = True
    hit = np.flatnonzero(seen)
    total, s = len(hit), score[hit]
    if passages is not None:
        s = rescored(hit, s, passages, float(params.doc_prior))
    if limit is not None and limit < len(hit):
        cut = np.partition(s, len(s) - limit)[len(s) - limit]
        near = s >= cut  # the ties at the cut compete by unit id below
        hit, s = hit[near], s[near]
    order = np.lexsort((hit, -s))[:limit]
    hit, s = hit[order], s[order]
    matched = np.zeros(len(hit), dtype=np.int64)  # the words each hit holds
    for units in words_units:
        at = np.minimum(np.searchsorted(units, hit), len(units) - 1)
        matched += units[at] == hit
    rows = [(int(u), float(v), int(m)) for u, v, m in zip(hit, s, matched, strict=True)]
    return rows, total


def _best_per_unit(us: list, cs: list) -> tuple:
    """The best contribution of each unit among several forms' postings."""
    import numpy as np

    units, c = np.concatenate(us), np.concatenate(cs)
    order = np.lexsort((-c, units))
    units, c = units[order], c[order]
    first = np.r_[True, units[1:] != units[:-1]][: len(units)]
    return units[first], c[first]
