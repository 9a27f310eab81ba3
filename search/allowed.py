"""The placements a filter keeps, found once per search and handed to the ranking, the
hits and the facets (each read them from SQL before: the same statement two or three
times, about 20 ms each at 200k units under load).

Where the entity layer's arrays are current (entities/facet_arrays.py, the caller's
generation check), an entity, type or date condition is read from them: per passage its
entities, types and dates, the very rows ``--entity``, ``--type`` and ``--after`` keep in
SQL (the arrays are exported by the same joins). A path or metadata condition finds its
documents in SQL and their passages in the arrays (the join to placements and the sort of
its keys cost more than the glob); quantities stay SQL, and the sets are intersected. The
SQL is the reference and the fallback; tests/search/test_facet_arrays.py holds the two
equal on random stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from kbx.search.filters import DocFilter

if TYPE_CHECKING:  # numpy only where the caller already ranks or counts with it
    import numpy as np

    from kbx.entities.facet_arrays import FacetArrays


@dataclass(frozen=True)
class Allowed:
    """Allowed placements as ``unit_id << 32 | doc_id`` keys, sorted and distinct."""

    keys: np.ndarray

    @property
    def units(self) -> np.ndarray:
        """The distinct units with an allowed placement, in order."""
        return _distinct(self.keys >> 32)  # sorted, as the keys are

    def pairs_of(self, units: list[int]) -> set[tuple[int, int]]:
        """The allowed ``(unit_id, doc_id)`` pairs of ``units`` (a search's hits)."""
        import numpy as np

        u = np.asarray(sorted(units), dtype=np.int64)
        lo = np.searchsorted(self.keys, u << 32)
        hi = np.searchsorted(self.keys, (u + 1) << 32)
        picked = np.concatenate([self.keys[a:b] for a, b in zip(lo, hi, strict=True)] or [u[:0]])
        return {(int(k >> 32), int(k & 0xFFFFFFFF)) for k in picked}


def _keys(unit, doc) -> np.ndarray:
    import numpy as np

    return np.asarray(unit, dtype=np.int64) << 32 | np.asarray(doc, dtype=np.int64)


def _sql(con: duckdb.DuckDBPyConnection, places: str, params: list) -> np.ndarray:
    """The keys of the placements ``places`` (SQL of ``doc_id, unit_id``) keeps."""
    import numpy as np

    got = con.execute(f"SELECT DISTINCT doc_id, unit_id FROM ({places})", params).fetchnumpy()
    return np.sort(_keys(got["unit_id"], got["doc_id"]))


def _owners(start: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The rows of a compressed sparse layout (``start``) that the entries ``at`` are in."""
    import numpy as np

    return _distinct(np.searchsorted(start, at, side="right") - 1)  # ``at`` ascending: rows too


def _distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array, in order (a sort is most of np.unique's time)."""
    import numpy as np

    return a[np.r_[True, a[1:] != a[:-1]][: len(a)]]


def _document_rows(
    con: duckdb.DuckDBPyConnection, layer: FacetArrays, where: list[str], params: list
) -> np.ndarray:
    """The layer's passage rows of the documents meeting every condition ``where`` (SQL
    over ``documents d``: a glob, metadata): one small statement, no join to placements."""
    import numpy as np

    sql = f"SELECT doc_id FROM documents d WHERE {' AND '.join(where)}"
    docs = np.asarray(con.execute(sql, params).fetchnumpy()["doc_id"], dtype=layer.pl_doc.dtype)
    return np.flatnonzero(np.isin(layer.pl_doc, docs, kind="table"))  # a mask, no sort


def _layer_rows(layer: FacetArrays, kind: tuple) -> np.ndarray:
    """The layer's passage rows that an entity, type or date condition keeps."""
    import numpy as np

    from kbx.search.facets import in_window  # facets imports this module

    what = kind[0]
    if what == "entity":
        i = layer.strings("ent_id").find(kind[1])
        at = np.flatnonzero(layer.ent == i) if i is not None else np.zeros(0, np.int64)
        return _owners(layer.ent_start, at)
    if what == "type":
        names = layer.strings("typ_name")
        i = next((j for j in range(len(names)) if names[j] == kind[1]), None)
        at = np.flatnonzero(layer.typ == i) if i is not None else np.zeros(0, np.int64)
        return _owners(layer.typ_start, at)
    keep = in_window(layer.dat_lo, layer.dat_hi, layer.dat_doc, kind[1:])
    return _owners(layer.dat_start, np.flatnonzero(keep))


def allowed(
    con: duckdb.DuckDBPyConnection, f: DocFilter, layer: FacetArrays | None = None
) -> Allowed | None:
    """The placements every condition of ``f`` keeps (None: ``f`` filters nothing), each
    entity, type and date condition over the ``layer``'s arrays when the caller found them
    current, the documents of path and metadata conditions in one small statement, the
    rest (and everything without them) in one SQL statement."""
    import numpy as np

    if not f.places:
        return None
    rows = None
    sql, params, where, where_params = [], [], [], []
    for places, ps, kind in zip(f.places, f.place_params, f.kinds, strict=True):
        if layer is None or kind is None:
            sql.append(places)
            params += ps
        elif kind[0] == "documents":
            where.append(kind[1])
            where_params += ps
        else:
            got = _layer_rows(layer, kind)
            rows = got if rows is None else np.intersect1d(rows, got, assume_unique=True)
    if where:
        got = _document_rows(con, layer, where, where_params)
        rows = got if rows is None else np.intersect1d(rows, got, assume_unique=True)
    keys = None
    if rows is not None:
        keys = _keys(layer.pl_unit[rows], layer.pl_doc[rows])  # rows by unit, then doc
    if sql:
        sets = " INTERSECT ".join(f"SELECT doc_id, unit_id FROM ({p})" for p in sql)
        found = _sql(con, sets, params)
        keys = found if keys is None else np.intersect1d(keys, found, assume_unique=True)
    return Allowed(keys)
