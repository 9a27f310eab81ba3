"""The words a corpus writes as code: a name made only of them is technical vocabulary.

A small news model calls technical terms names (``TLS`` and ``ESLint`` organisations,
``AbortSignal`` a company) and repeats the mistake wherever the term recurs, so being named
twice is no evidence for them. What gives them away is that the same documents also write
them as code: in inline code (`` `tls.connect()` ``, `` `AbortSignal` ``) or as part of an
identifier in the text (an index term holding ``.``, ``_`` or ``:``: ``dns.lookup``,
``node_modules``, ``node:test``). Host names (``ibm.com`` names IBM: no evidence against
it), e-mail addresses and initials (``j.smith``) are left out. News and prose hold almost
none of these, so their names keep their evidence.
"""

from __future__ import annotations

import re

import duckdb

from kbx.analysis import fold

WORD = re.compile(r"[^\W\d_][^\W_]+")  # a word of two or more letters and digits
_HOST = re.compile(
    r"(?:[\w-]+\.)+(?:com|org|net|io|dev|edu|gov|co|uk|de|jp|fr|info|me|app|cn|ru)(?:/|$)"
)
_INITIALS = re.compile(r"(?:[^\W\d_]\.)+")


def words(name: str) -> list[str]:
    """The folded words of a name, as ``code_words`` compares them (``U.S.`` has none)."""
    return [fold(w) for w in WORD.findall(name)]


def _folded(found: set[str]) -> set[str]:
    return {w if w.isascii() else fold(w) for w in found}


def code_words(con: duckdb.DuckDBPyConnection, wanted: set[str]) -> set[str]:
    """Those of the folded words ``wanted`` that some unit writes as code."""
    if not wanted:
        return set()
    spans = con.execute(
        """SELECT substr(text, s[1] + 1, s[2] - s[1])
           FROM (SELECT text, unnest(code_spans) AS s FROM units WHERE code_spans IS NOT NULL)"""
    ).fetchall()
    found = _folded(set(WORD.findall(" ".join(piece for (piece,) in spans).lower())))
    identifiers = con.execute(
        "SELECT term FROM terms WHERE contains(term, '.') OR contains(term, '_') "
        "OR contains(term, ':')"
    ).fetchall()
    for (term,) in identifiers:
        if "@" not in term and not _HOST.match(term) and not _INITIALS.match(term):
            found.update(WORD.findall(term))  # terms are folded already
    return found & wanted
