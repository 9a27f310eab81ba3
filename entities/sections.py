"""Dates a section gives its passages: the date in its heading, or its signed trailer's.

A release note's ``## 2.3.0 (2024-06-01)`` or a GNU ChangeLog entry line dates every
passage of the section below it, not only the first one (which holds the heading), and
a Debian changelog entry is dated by its closing line (`` -- Name <mail>  Mon, 03 Jun
2024 …``), which sits in the entry's last passage. Without this, a long entry's earlier
passages have no date of their own and take their document's, which for a changelog is
its newest entry's. The nearest dated heading above a passage wins; a passage keeps the
dates it mentions besides.
"""

from __future__ import annotations

import re

import duckdb

from kbx.entities.lookup import FILTER_GRADE

_SIGNED = re.compile(r"\S@\S")  # a trailer line is signed: it holds an e-mail address


def section_dates(
    con: duckdb.DuckDBPyConnection, date_types: tuple[str, ...], docs: str
) -> list[tuple[int, int, str]]:
    """``(doc_id, unit_id, value)`` for each passage under a dated section, ``value`` a
    date as the recognizer normalized it (resolved in its document where relative), in
    the documents the SQL predicate ``docs`` (over ``pl.doc_id``) admits."""
    rows = con.execute(
        f"""WITH dated AS (
              SELECT pl.doc_id, pl.unit_id, m.start_char, m.end_char,
                     coalesce(dm.value, m.value) AS value
              FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
              JOIN recognizer_info r ON r.name = m.recognizer AND {FILTER_GRADE}
              LEFT JOIN doc_mentions dm ON dm.doc_id = pl.doc_id AND dm.unit_hash = m.unit_hash
                  AND dm.recognizer = m.recognizer AND dm.version = m.version
                  AND dm.start_char = m.start_char
              WHERE m.type IN {date_types} AND len(u.heading_path) > 0 AND {docs}),
            placed AS (
              SELECT pl.doc_id, pl.unit_id, pl.ordinal, u.heading_path AS path, u.text,
                     coalesce(lead(u.heading_path) OVER (
                         PARTITION BY pl.doc_id ORDER BY pl.ordinal) <> u.heading_path,
                         true) AS closes
              FROM placements pl JOIN units u USING (unit_id)
              WHERE pl.doc_id IN (SELECT doc_id FROM dated))
            SELECT p.doc_id, p.path, p.ordinal, d.start_char, d.value,
                   starts_with(p.text, p.path[-1])
                       AND d.start_char < length(p.path[-1]) AS in_heading,
                   CASE WHEN p.closes AND strpos(substr(p.text, d.end_char + 1), chr(10)) = 0
                        THEN substr(p.text, 1, d.end_char) END AS upto
            FROM dated d JOIN placed p USING (doc_id, unit_id)
            WHERE in_heading OR upto IS NOT NULL
            ORDER BY p.doc_id, p.ordinal, d.start_char"""
    ).fetchall()
    dates: dict[tuple[int, tuple[str, ...]], str] = {}
    for doc_id, path, _, _, value, in_heading, upto in rows:
        trailer = upto is not None and _SIGNED.search(upto[upto.rfind("\n") + 1 :])
        if in_heading or trailer:
            dates.setdefault((doc_id, tuple(path)), value)  # the first one written
    if not dates:
        return []
    covered = con.execute(
        """SELECT pl.doc_id, pl.unit_id, u.heading_path FROM placements pl
           JOIN units u USING (unit_id) WHERE pl.doc_id IN (SELECT unnest(?))""",
        [sorted({d for d, _ in dates})],
    ).fetchall()
    out = []
    for doc_id, unit_id, path in covered:
        for depth in range(len(path), 0, -1):  # the nearest dated heading above it
            value = dates.get((doc_id, tuple(path[:depth])))
            if value is not None:
                out.append((doc_id, unit_id, value))
                break
    return out
