"""What the entity layer's corpus-wide rows are built from, as one digest.

Besides the gazetteer and the resolvers' answers (whose writes rebuild the layer whole,
``mark_dirty``), the entities, aliases and basis of a layer built from rule recognizers'
mentions (``build.corpus_rows``) are a function of three things: the distinct keyed
mentions (an identifier's entity and aliases), the names that sign, with the addresses
beside them and how often (``people.signing``: the people merged), and the distinct
authors the documents write. A write whose documents leave all three as they were leaves
those rows as they were, so only its documents' rows need building
(``entities/incremental.py``). A model's names are decided from much more (votes, code
words, evidence across the corpus): where one ran, no update relies on this.
"""

from __future__ import annotations

import hashlib

import duckdb

from kbx.entities.people import signing

_KEYED = """SELECT DISTINCT key, type, value, text, recognizer FROM mentions
            WHERE key IS NOT NULL ORDER BY ALL"""
_AUTHORS = """SELECT DISTINCT unnest(authors) AS w FROM documents WHERE status = 'ok'
              ORDER BY w"""


def digest(con: duckdb.DuckDBPyConnection) -> str:
    """The SHA-256 of the keyed mentions, the signers and the authors, each sorted."""
    h = hashlib.sha256()
    for rows in (con.execute(_KEYED).fetchall(), signing(con), con.execute(_AUTHORS).fetchall()):
        h.update(repr(rows).encode())
        h.update(b"\0")
    return h.hexdigest()
