"""What an export reads: the placements the filters allow and their mentions, a few documents
(or units) at a time, so a large index streams through in bounded memory.

The filters are search's own (``compile_filters``): they choose passages. An export has no
ranking to raise, so a condition search would only boost by (a boost-only type or entity)
narrows here like any other. ``--type`` and ``--recognizer`` also narrow which mentions are
written. A mention's entity is its ``key`` (an identifier, a gazetteer match) or, for a
model's name, the entity one of its aliases names (a gazetteer entry or an author before a
bare ``name:TYPE:surface``), as the entity layer links it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import duckdb

from kbx.entities.positions import Positions
from kbx.errors import BadArgument
from kbx.search.filters import Filters, compile_filters

# Placements (units) read per round trip: each reads its mentions by a join that scans the
# mentions table, so few large rounds; their texts (a few kB each) bound the memory.
CHUNK = 20_000


def relative(path: str) -> bool:
    """Whether a stored path stays below the folder it is joined to: an index file handed
    over by someone else could hold ``../`` paths, and an export must not write (or read)
    outside its folder (or the root) for them."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts


@dataclass(frozen=True)
class Found:
    """One mention, as an export writes it (offsets into its unit's clean text)."""

    start: int
    end: int
    type: str
    text: str
    value: str | None
    entity: str | None
    recognizer: str
    version: str
    confidence: float


@dataclass
class Placed:
    """A unit where it sits in a document: ``chain`` and ``base`` say where its first
    character lies among the windows of one block (``entities/positions.py``)."""

    ordinal: int
    unit: str
    text: str
    offsets: bytes
    start_line: int
    end_line: int
    chain: int = 0
    base: int = 0
    mentions: list[Found] = field(default_factory=list)


@dataclass
class Doc:
    """A document with the placements the filters allow, in reading order."""

    doc_id: int
    path: str
    sha256: str
    placements: list[Placed]


@dataclass
class UnitRow:
    """A unit once, however many documents place it, for per-unit formats."""

    unit: str
    text: str
    heading_path: list[str]
    placed: list[tuple[str, int, int]]  # (path, start_line, end_line) of each placement
    mentions: list[Found]


@dataclass
class Selection:
    """The chosen placements (TEMP TABLE ``export_places``) and the condition on mentions
    (SQL over ``m``, with its parameters)."""

    filtered: bool
    mention_where: str
    mention_params: list
    documents: int
    units: int


def _recognizers(con: duckdb.DuckDBPyConnection, names: list[str]) -> list[str]:
    known = sorted(
        {
            n
            for (n,) in con.execute(
                "SELECT name FROM recognizer_info UNION SELECT DISTINCT recognizer FROM runs"
            ).fetchall()
        }
    )
    for n in names:
        if n not in known:
            raise BadArgument(
                f"--recognizer {n!r}: no such recognizer ran in this index; "
                f"choose from {', '.join(known) or 'none'}"
            )
    return names


def choose(
    con: duckdb.DuckDBPyConnection, filters: Filters | None, recognizers: list[str]
) -> Selection:
    """Compile the filters into ``export_places`` (doc_id, ordinal, unit_id) and a TEMP
    TABLE ``export_names`` (lower-case alias, entity) for the entities of names."""
    f = compile_filters(con, filters)
    clauses = [*f.clauses, *(b for b, _ in f.boosts)]
    params = [*f.params, *(p for _, ps in f.boosts for p in ps)]
    where = " AND ".join(clauses) or "TRUE"
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE export_places AS
            SELECT pl.doc_id, pl.ordinal, pl.unit_id FROM placements pl
            JOIN documents d USING (doc_id) WHERE d.status = 'ok' AND {where}""",
        params,
    )
    con.execute(  # the entity an alias names: a curated one before a bare name of its own
        """CREATE OR REPLACE TEMP TABLE export_names AS
           SELECT lower(alias) AS alias,
                  coalesce(min(entity_id) FILTER (WHERE NOT starts_with(entity_id, 'name:')),
                           min(entity_id)) AS entity_id
           FROM aliases GROUP BY 1"""
    )
    types = [t.strip().upper() for t in (filters.types if filters else [])]
    names = _recognizers(con, list(recognizers))
    documents, units = con.execute(
        "SELECT count(DISTINCT doc_id), count(DISTINCT unit_id) FROM export_places"
    ).fetchone()
    return Selection(
        filtered=bool(clauses or names or types),
        mention_where="(len($types::VARCHAR[]) = 0 OR list_contains($types::VARCHAR[], m.type)) "
        "AND (len($recs::VARCHAR[]) = 0 OR list_contains($recs::VARCHAR[], m.recognizer))",
        mention_params=[types, names],
        documents=documents,
        units=units,
    )


ENTITY = "coalesce(m.key, CASE WHEN r.names THEN n.entity_id END)"
_NAMED = (
    "LEFT JOIN recognizer_info r ON r.name = m.recognizer "
    "LEFT JOIN export_names n ON r.names AND n.alias = lower(m.text)"
)


def _named(sel: Selection, ids: list[int]) -> dict:
    """The parameters of a mention query: the mention condition's, and ``$ids``."""
    types, recs = sel.mention_params
    return {"types": types, "recs": recs, "ids": ids}


def _rounds(docs: list[tuple]) -> Iterator[list[tuple]]:
    """Consecutive runs of ``docs`` (each ending in its placement count) holding about
    ``CHUNK`` placements, a document never split."""
    run, n = [], 0
    for doc in docs:
        if run and n + doc[-1] > CHUNK:
            yield run
            run, n = [], 0
        run.append(doc)
        n += doc[-1]
    if run:
        yield run


def documents(con: duckdb.DuckDBPyConnection, sel: Selection) -> Iterator[Doc]:
    """Each chosen document (by path) with its placements and their mentions; a mention in
    the overlap of two windows of one block is given once, in the first."""
    docs = con.execute(
        """SELECT d.doc_id, d.path, d.sha256, count(*) FROM export_places p
           JOIN documents d USING (doc_id) GROUP BY ALL ORDER BY d.path"""
    ).fetchall()
    positions = Positions()
    for chunk in _rounds(docs):
        ids = [d for d, _, _, _ in chunk]
        placed: dict[int, list[Placed]] = {d: [] for d in ids}
        by_key: dict[tuple[int, int], Placed] = {}
        for doc_id, ordinal, unit, text, blob, a, b in con.execute(
            """SELECT p.doc_id, p.ordinal, u.unit_hash, u.text, pl.offsets, pl.start_line,
                      pl.end_line
               FROM export_places p JOIN placements pl USING (doc_id, ordinal)
               JOIN units u ON u.unit_id = p.unit_id
               WHERE p.doc_id IN (SELECT unnest($1)) ORDER BY p.doc_id, p.ordinal""",
            [ids],
        ).fetchall():
            here = Placed(ordinal, unit, text, blob, a, b)
            here.chain, here.base = positions.start(doc_id, ordinal, text, blob)
            placed[doc_id].append(here)
            by_key[(doc_id, ordinal)] = here
        rows = con.execute(
            f"""SELECT p.doc_id, p.ordinal, m.start_char, m.end_char, m.type, m.text,
                       CASE WHEN dm.doc_id IS NULL THEN m.value ELSE dm.value END,
                       {ENTITY}, m.recognizer, m.version, m.confidence
                FROM export_places p JOIN units u ON u.unit_id = p.unit_id
                JOIN mentions m ON m.unit_hash = u.unit_hash
                LEFT JOIN doc_mentions dm ON dm.doc_id = p.doc_id
                    AND dm.unit_hash = m.unit_hash AND dm.recognizer = m.recognizer
                    AND dm.version = m.version AND dm.start_char = m.start_char
                {_NAMED}
                WHERE p.doc_id IN (SELECT unnest($ids)) AND {sel.mention_where}
                ORDER BY p.doc_id, p.ordinal, m.start_char, m.end_char, m.recognizer, m.type""",
            _named(sel, ids),
        ).fetchall()
        seen: set[tuple] = set()
        for doc_id, ordinal, *rest in rows:
            here = by_key[(doc_id, ordinal)]
            m = Found(*rest)
            key = (doc_id, here.chain, here.base + m.start, here.base + m.end, m.type)
            key += (m.value, m.recognizer, m.text)
            if key in seen:  # the overlap of two windows: one place in the file
                continue
            seen.add(key)
            here.mentions.append(m)
        for doc_id, path, sha, _ in chunk:
            yield Doc(doc_id, path, sha, placed[doc_id])


def units(con: duckdb.DuckDBPyConnection, sel: Selection) -> Iterator[UnitRow]:
    """Each chosen unit once (by hash) with where it is placed and its mentions (values as
    the unit reads them: a relative date stays relative, since documents differ)."""
    ids = [
        u
        for (u,) in con.execute(
            """SELECT unit_id FROM (SELECT DISTINCT p.unit_id, u.unit_hash FROM export_places p
               JOIN units u USING (unit_id)) ORDER BY unit_hash"""
        ).fetchall()
    ]
    for i in range(0, len(ids), CHUNK):
        chunk = ids[i : i + CHUNK]
        rows = con.execute(
            """SELECT u.unit_id, u.unit_hash, u.text, u.heading_path,
                      list(struct_pack(p := d.path, a := pl.start_line, b := pl.end_line)
                           ORDER BY d.path, pl.ordinal)
               FROM export_places p JOIN units u ON u.unit_id = p.unit_id
               JOIN placements pl USING (doc_id, ordinal) JOIN documents d USING (doc_id)
               WHERE p.unit_id IN (SELECT unnest($1))
               GROUP BY ALL ORDER BY u.unit_hash""",
            [chunk],
        ).fetchall()
        found: dict[int, list[Found]] = {}
        for unit_id, *rest in con.execute(
            f"""SELECT u.unit_id, m.start_char, m.end_char, m.type, m.text, m.value, {ENTITY},
                       m.recognizer, m.version, m.confidence
                FROM units u JOIN mentions m USING (unit_hash) {_NAMED}
                WHERE u.unit_id IN (SELECT unnest($ids)) AND {sel.mention_where}
                ORDER BY u.unit_id, m.start_char, m.end_char, m.recognizer, m.type""",
            _named(sel, chunk),
        ).fetchall():
            found.setdefault(unit_id, []).append(Found(*rest))
        for unit_id, unit, text, heading, placed in rows:
            placements = [tuple(x.values()) for x in placed]
            yield UnitRow(unit, text, list(heading), placements, found.get(unit_id, []))
