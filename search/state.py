"""What a search must know of the index besides its rows, read in one statement, and the
entity layer's arrays when they are current: shared by search and grep."""

from __future__ import annotations

import sys

import duckdb

from kbx.entities import facet_arrays
from kbx.entities.facet_arrays import GENERATION as FACETS
from kbx.entities.facet_arrays import FacetArrays
from kbx.store import arrays, passages_file
from kbx.store.db import ENTITIES_DIRTY, RUNS, VECTORS, Index
from kbx.store.passages_file import GENERATION as PASSAGES
from kbx.store.passages_file import PassagesFile
from kbx.store.postings import ANALYZER_KEYS
from kbx.store.postings import GENERATION as POSTINGS

NAMES = "a name recognizer has run"  # a key of ``index_state`` that kbx_meta never has
STATE_KEYS = (*ANALYZER_KEYS, POSTINGS, FACETS, PASSAGES, RUNS, ENTITIES_DIRTY, VECTORS)


def index_state(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """What a search must know of the index besides its rows, in one statement (each costs
    about a millisecond): the analysis chain, the generations of the mapped files, whether
    the entity layer is stale and whether a name recognizer (NER) has run. All of
    ``kbx_meta`` is read (a dozen rows) and kept to these keys here: naming them as
    parameters of an IN list cost DuckDB twice the statement."""
    rows = con.execute(
        """SELECT key, value FROM kbx_meta
           UNION ALL (SELECT ?, name FROM recognizer_info WHERE names LIMIT 1)""",
        [NAMES],
    ).fetchall()
    return {k: v for k, v in rows if k in _WANTED}


_WANTED = frozenset((*STATE_KEYS, NAMES))


def facet_layer(index: Index, state: dict[str, str]) -> FacetArrays | None:
    """The entity layer's arrays when the layer is settled and the file is of its
    generation, and numpy is worth it: in a warm process, or once the ranking imported it
    (a cold one ranking over mapped postings: ``arrays.MAPPED_MIN_BYTES``); else None, and
    the SQL counts (a small index's facets cost less than importing numpy)."""
    if ENTITIES_DIRTY in state or not _numpy_pays():
        return None
    return facet_arrays.cached(index.db, int(state.get(FACETS, 0)))


def mapped_passages(index: Index, state: dict[str, str]) -> PassagesFile | None:
    """The units and placements as mapped arrays when the file is of the tables'
    generation and numpy is worth it (as for ``facet_layer``); else None, and the SQL."""
    if not _numpy_pays():
        return None
    return passages_file.cached(index.db, int(state.get(PASSAGES, 0)))


def _numpy_pays() -> bool:
    """A warm process, or one whose ranking imported numpy already."""
    return arrays.WARM or "numpy" in sys.modules
