"""The entity layer as memory-mapped arrays beside the index, for facets: what counts the
facets of a search in a millisecond where one statement over links, mentions, dates and
quantities costs DuckDB tens (docs/BENCHMARKS.md, "Serving").

Each passage (a distinct ``(doc_id, unit_id)`` placement) is a row, rows sorted by unit
then document, and ``unit_start`` finds a unit's rows. Per row, as compressed sparse rows
(``X_start[p]:X_start[p + 1]``): the entities a filter would keep (``ent``, indexes into
the entities sorted by id), the mention types (``typ``), the dates (days since 1970, whether
it is the document's own, the year when the interval lies in one), the cited works' years
(``cit``), the entities that wrote it (``aut``). Per unit, as quantities are a unit's own:
each quantity's dimension and unit (``qty_group``), its SI interval and the first and last
histogram bin it overlaps. Each is exported by the very joins search/facets.py counts with
in SQL, so the two agree; ids and labels are UTF-8 in one blob with offsets, sorted as
DuckDB sorts them.

The file is of one generation (store/arrays.py): ``refresh`` of the layer bumps it, every
write before a rebuild marks the layer stale, and a reader uses the file only when the
layer is settled and the generations agree; else the SQL.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kbx.entities.lookup import FILTER_GRADE
from kbx.recognizers.quantity_filter import EDGES
from kbx.store import arrays
from kbx.store.transaction import transaction

if TYPE_CHECKING:  # numpy loads with the first file written or mapped, not with search
    import numpy as np

GENERATION = "facets_generation"  # kbx_meta key: bumped by every rebuild of the layer
NO_YEAR = -(2**31)  # the least int32: a date interval across years counts in no year


def mapped_path(db: Path) -> Path:
    return db.with_name(f"{db.name}.facets.npy")


def touched(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the layer's rebuild: the file of the old generation is no longer used."""
    arrays.bump(con, GENERATION)


# Each histogram's bins as rows (key, bin, lo, hi): bin i is [edge i-1, edge i), the first
# from -inf and the last to +inf. Constants of kbx only: safe to inline in SQL.
def _bin_rows() -> str:
    rows = []
    for key, edges in EDGES.items():
        ends = ["'-inf'", *(repr(e) for e, _ in edges), "'inf'"]
        pairs = enumerate(itertools.pairwise(ends))
        rows += [f"('{key}', {i}, {a}::DOUBLE, {b}::DOUBLE)" for i, (a, b) in pairs]
    return "VALUES " + ", ".join(rows)


BINS = _bin_rows()
_KEYS = ", ".join(f"'{k}'" for k in EDGES if k)


def bin_key(q: str) -> str:
    """SQL: which bins a ``passage_quantities`` row ``q`` is counted in (``edges_key``)."""
    return (
        f"CASE WHEN {q}.dimension = 'money' THEN 'money' "
        f"WHEN {q}.unit IN ({_KEYS}) THEN {q}.unit ELSE '' END"
    )


@dataclass(frozen=True)
class FacetArrays:
    """The layer of one generation, in the order the file holds its arrays."""

    unit_start: np.ndarray  # per unit id: its passages' rows
    pl_unit: np.ndarray
    pl_doc: np.ndarray
    ent_start: np.ndarray
    ent: np.ndarray
    ent_id_off: np.ndarray
    ent_id_blob: np.ndarray
    ent_label_off: np.ndarray
    ent_label_blob: np.ndarray
    ent_type_off: np.ndarray
    ent_type_blob: np.ndarray
    typ_start: np.ndarray
    typ: np.ndarray
    typ_name_off: np.ndarray
    typ_name_blob: np.ndarray
    dat_start: np.ndarray
    dat_lo: np.ndarray  # days since 1970-01-01
    dat_hi: np.ndarray  # exclusive
    dat_doc: np.ndarray  # the document's own date (no unit)
    dat_year: np.ndarray  # NO_YEAR where the interval crosses a year
    cit_start: np.ndarray
    cit_year: np.ndarray
    qty_start: np.ndarray  # per unit id: its quantities' rows
    qty_group: np.ndarray
    qty_lo: np.ndarray
    qty_hi: np.ndarray
    qty_b0: np.ndarray
    qty_b1: np.ndarray
    grp_dim_off: np.ndarray
    grp_dim_blob: np.ndarray
    grp_unit_off: np.ndarray
    grp_unit_blob: np.ndarray
    aut_start: np.ndarray  # per row: the entities that wrote it (indexes as ``ent``'s)
    aut: np.ndarray

    def strings(self, name: str) -> arrays.Strings:
        return arrays.Strings(getattr(self, f"{name}_off"), getattr(self, f"{name}_blob"))


def _csr(rows: np.ndarray, n: int) -> np.ndarray:
    """Row starts of ``n`` rows from each entry's row (sorted): ``start[r]:start[r + 1]``."""
    import numpy as np

    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows.astype(np.int64), minlength=n), out=start[1:])
    return start


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, np.ndarray]:
    import numpy as np

    return {k: np.asarray(v) for k, v in con.execute(sql).fetchnumpy().items()}


_PLACED = """(SELECT p.p, {x} FROM fa_places p JOIN {table} ON {table}.doc_id = p.doc_id
              AND {table}.unit_id = p.unit_id {where}
              UNION ALL
              SELECT p.p, {x} FROM fa_places p JOIN {table} ON {table}.doc_id = p.doc_id
              AND {table}.unit_id IS NULL {where})"""


def _placed(table: str, x: str, where: str = "") -> str:
    """Rows of ``table`` joined to the passages they cover: their own (``unit_id``), or
    with no unit every passage of their document (the join facets.py writes with OR)."""
    return _PLACED.format(table=table, x=x, where=where)


def _quantities(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, np.ndarray], list[tuple]]:
    """Each unit's quantities (``qty_*``) and the (dimension, unit) groups they index; none
    asked of DuckDB when the layer holds no quantity (three statements less)."""
    import numpy as np

    if not con.execute("SELECT 1 FROM passage_quantities LIMIT 1").fetchone():
        empty = {k: np.zeros(0, dtype=np.int64) for k in ("unit_id", "g", "b0", "b1")}
        return {**empty, "lo": np.zeros(0), "hi": np.zeros(0)}, []
    con.execute(
        """CREATE OR REPLACE TEMP TABLE fa_groups AS
           SELECT (row_number() OVER (ORDER BY dimension, unit) - 1)::INTEGER AS g, dimension, unit
           FROM (SELECT DISTINCT dimension, unit FROM passage_quantities)"""
    )
    quantities = _fetch(
        con,
        f"""SELECT q.unit_id, g.g, q.lo, q.hi, min(b.bin)::INTEGER AS b0,
                   max(b.bin)::INTEGER AS b1
            FROM passage_quantities q JOIN fa_groups g USING (dimension, unit)
            JOIN ({BINS}) b(key, bin, lo, hi)
              ON b.key = {bin_key("q")} AND q.lo < b.hi AND q.hi >= b.lo
            GROUP BY q.unit_id, g.g, q.lo, q.hi ORDER BY 1, 2, 3, 4""",
    )
    groups = con.execute("SELECT dimension, unit FROM fa_groups ORDER BY g").fetchall()
    con.execute("DROP TABLE fa_groups")
    return quantities, groups


def _build(con: duckdb.DuckDBPyConnection) -> list[np.ndarray]:
    import numpy as np

    con.execute(
        """CREATE OR REPLACE TEMP TABLE fa_places AS
           SELECT (row_number() OVER (ORDER BY unit_id, doc_id) - 1)::INTEGER AS p, doc_id, unit_id
           FROM (SELECT DISTINCT pl.doc_id, pl.unit_id FROM placements pl
                 JOIN documents d USING (doc_id))"""
    )
    con.execute(
        """CREATE OR REPLACE TEMP TABLE fa_entities AS
           SELECT (row_number() OVER (ORDER BY entity_id) - 1)::INTEGER AS e, entity_id, type,
                  label FROM entities"""
    )
    con.execute(  # what --entity would keep
        f"""CREATE OR REPLACE TEMP TABLE fa_links AS
            SELECT DISTINCT l.p, e.e, e.type
            FROM {_placed("links", "links.entity_id", "AND links.filter")} l(p, entity_id)
            JOIN fa_entities e USING (entity_id)"""
    )
    con.execute(  # what --type would keep: a model's names through their confirmed links
        f"""CREATE OR REPLACE TEMP TABLE fa_types AS
            SELECT DISTINCT p, type FROM (
                SELECT p.p, t.type FROM fa_places p JOIN (
                    SELECT DISTINCT u.unit_id, m.type FROM units u
                    JOIN mentions m USING (unit_hash)
                    JOIN recognizer_info r ON r.name = m.recognizer
                    WHERE NOT r.names AND {FILTER_GRADE}) t USING (unit_id)
                UNION ALL SELECT p, type FROM fa_links)"""
    )
    (n_units,) = con.execute("SELECT coalesce(max(unit_id), 0) + 1 FROM units").fetchone()
    places = _fetch(con, "SELECT p, doc_id, unit_id FROM fa_places ORDER BY p")
    pl_unit = places["unit_id"].astype(np.int32)
    n = len(pl_unit)
    links = _fetch(con, "SELECT p, e FROM fa_links ORDER BY p, e")
    ents = con.execute("SELECT entity_id, label, type FROM fa_entities ORDER BY e").fetchall()
    names = [
        t for (t,) in con.execute("SELECT DISTINCT type FROM fa_types ORDER BY type").fetchall()
    ]
    types = _fetch(
        con,
        """SELECT t.p, n.i FROM fa_types t
           JOIN (SELECT type, (row_number() OVER (ORDER BY type) - 1)::INTEGER AS i
                 FROM (SELECT DISTINCT type FROM fa_types)) n USING (type) ORDER BY t.p, n.i""",
    )
    dated = _placed(
        "passage_dates", "passage_dates.lo, passage_dates.hi, passage_dates.unit_id IS NULL"
    )
    dates = _fetch(
        con,
        f"""SELECT p, lo, hi, doc, coalesce(y, {int(NO_YEAR)})::INTEGER AS y FROM (
               SELECT x.p, date_diff('day', DATE '1970-01-01', x.lo)::INTEGER AS lo,
                      date_diff('day', DATE '1970-01-01', x.hi)::INTEGER AS hi, x.doc,
                      CASE WHEN year(x.lo) = year(x.hi - INTERVAL 1 DAY) THEN year(x.lo) END AS y
               FROM {dated} x(p, lo, hi, doc))
            ORDER BY p, y, lo, hi, doc""",
    )
    cited = _fetch(
        con,
        """SELECT DISTINCT p.p, json_extract(e.meta, '$.year')::INTEGER AS y
           FROM fa_places p JOIN links l ON l.doc_id = p.doc_id AND l.unit_id = p.unit_id
           JOIN entities e USING (entity_id)
           WHERE json_extract(e.meta, '$.year') IS NOT NULL ORDER BY 1, 2""",
    )
    wrote = _fetch(  # what --author would keep
        con,
        f"""SELECT DISTINCT a.p, e.e
            FROM {_placed("authored", "authored.entity_id")} a(p, entity_id)
            JOIN fa_entities e USING (entity_id) ORDER BY 1, 2""",
    )
    quantities, groups = _quantities(con)
    for table in ("fa_places", "fa_entities", "fa_links", "fa_types"):
        con.execute(f"DROP TABLE {table}")
    return [
        _csr(pl_unit, int(n_units)),
        pl_unit,
        places["doc_id"].astype(np.int32),
        _csr(links["p"], n),
        links["e"].astype(np.int32),
        *arrays.Strings.pack([e for e, _, _ in ents]),
        *arrays.Strings.pack([label for _, label, _ in ents]),
        *arrays.Strings.pack([t for _, _, t in ents]),
        _csr(types["p"], n),
        types["i"].astype(np.int32),
        *arrays.Strings.pack(names),
        _csr(dates["p"], n),
        dates["lo"].astype(np.int32),
        dates["hi"].astype(np.int32),
        dates["doc"].astype(bool),
        dates["y"].astype(np.int32),
        _csr(cited["p"], n),
        cited["y"].astype(np.int32),
        _csr(quantities["unit_id"], int(n_units)),
        quantities["g"].astype(np.int32),
        quantities["lo"].astype(np.float64),
        quantities["hi"].astype(np.float64),
        quantities["b0"].astype(np.int32),
        quantities["b1"].astype(np.int32),
        *arrays.Strings.pack([d for d, _ in groups]),
        *arrays.Strings.pack([u for _, u in groups]),
        _csr(wrote["p"], n),
        wrote["e"].astype(np.int32),
    ]


def export(con: duckdb.DuckDBPyConnection, db: Path) -> Path:
    """Write the file of the current generation from one snapshot of the layer (its own
    transaction, so the generation and the rows agree)."""
    path = mapped_path(db)
    with transaction(con):
        gen = arrays.generation(con, GENERATION)
        found = _build(con)
    arrays.save(path, gen, found)
    return path


def load(db: Path, gen: int) -> FacetArrays | None:
    """The file, mapped, if it is of generation ``gen`` (and of this layout); else None."""
    return arrays.load_as(FacetArrays, mapped_path(db), gen)


MAPS = arrays.Maps(load)


def cached(db: Path, gen: int) -> FacetArrays | None:
    """``load``, kept for the process while the generation holds: a server maps once."""
    return MAPS.get(db, gen)


def refresh(con: duckdb.DuckDBPyConnection, db: Path | None = None) -> bool:
    """Export the file if it is not of the layer's generation; whether it did. ``db``: the
    file ``con`` has open, asked of DuckDB when not given (an in-memory one has no file)."""
    if db is None:
        (found,) = con.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchone()
        if not found:
            return False
        db = Path(found)
    return arrays.refresh(con, db, GENERATION, load, export)
