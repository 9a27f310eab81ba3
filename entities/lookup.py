"""Reading the entity layer: entity listings, one entity's detail, and turning what a
user typed (a name, an alias, an ID, a type) into what the filters compare."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from kbx.errors import BadArgument
from kbx.extract.textmap import locate, unpack
from kbx.store.db import Index

# When a mention is precise enough to filter on: written once, used by the entity layer,
# the filters and the facets alike (``r`` is its recognizer_info row, ``m`` the mention).
FILTER_GRADE = "(r.filter AND NOT list_contains(r.boost_types, m.type))"


@dataclass
class EntityRow:
    """An entity with how often it is mentioned."""

    entity_id: str
    type: str
    label: str
    source: str
    passages: int
    documents: int
    aliases: list[str] = field(default_factory=list)


def entities(
    index: Index, type_: str | None = None, q: str | None = None, limit: int = 50
) -> list[EntityRow]:
    """Entities, most mentioned first, optionally of one type or matching ``q`` (in the
    label, an alias or the ID)."""
    with index.reader() as con:
        if type_ is not None:
            type_ = check_type(con, type_)
        rows = con.execute(
            """SELECT e.entity_id, e.type, e.label, e.source,
                      count(l.doc_id) FILTER (l.unit_id IS NOT NULL)
                          + count(DISTINCT l.doc_id) FILTER (l.unit_id IS NULL),
                      count(DISTINCT l.doc_id),
                      (SELECT list(DISTINCT a.alias ORDER BY a.alias) FROM aliases a
                       WHERE a.entity_id = e.entity_id)
               FROM entities e LEFT JOIN links l USING (entity_id)
               WHERE (? IS NULL OR e.type = upper(?))
                 AND (? IS NULL OR contains(lower(e.label), lower(?))
                      OR contains(lower(e.entity_id), lower(?))
                      OR EXISTS (SELECT 1 FROM aliases a WHERE a.entity_id = e.entity_id
                                 AND contains(lower(a.alias), lower(?))))
               GROUP BY ALL ORDER BY 6 DESC, 5 DESC, e.entity_id LIMIT ?""",
            [type_, type_, q, q, q, q, limit],
        ).fetchall()
    return [EntityRow(*r[:6], list(r[6] or [])) for r in rows]


def check_type(con: duckdb.DuckDBPyConnection, type_: str) -> str:
    """The type, upper-cased, if any recognizer declares it or an entity has it; else one
    error listing those that exist: the same answer for search, grep, mentions, entities."""
    t = type_.strip().upper()
    known = {
        x for (ts,) in con.execute("SELECT types FROM recognizer_info").fetchall() for x in ts
    } | {x for (x,) in con.execute("SELECT DISTINCT type FROM entities").fetchall()}
    if t not in known:
        raise BadArgument(f"unknown mention type {type_!r}; choose from {', '.join(sorted(known))}")
    return t


def resolve_entity(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """An entity ID from an ID, a label or an alias; an ambiguous name lists the
    candidates and an unknown one suggests the nearest, rather than matching nothing."""
    if con.execute("SELECT 1 FROM entities WHERE entity_id = ?", [name]).fetchone():
        return name
    found = con.execute(
        """SELECT DISTINCT e.entity_id, e.type, e.label FROM entities e
           LEFT JOIN aliases a USING (entity_id)
           WHERE lower(e.label) = lower(?) OR lower(a.alias) = lower(?)
              OR lower(e.entity_id) = lower(?)
           ORDER BY 1""",
        [name, name, name],
    ).fetchall()
    if len(found) == 1:
        return found[0][0]
    if found:
        listed = "; ".join(f"{i} ({t} {label!r})" for i, t, label in found)
        raise BadArgument(f"{name!r} names {len(found)} entities: {listed}; give one ID")
    near = con.execute(
        """SELECT e.entity_id, any_value(e.label) FROM entities e
           JOIN (SELECT entity_id, label AS alias FROM entities
                 UNION ALL SELECT entity_id, alias FROM aliases) a USING (entity_id)
           GROUP BY e.entity_id
           ORDER BY max(jaro_winkler_similarity(lower(a.alias), lower(?))) DESC, 1 LIMIT 3""",
        [name],
    ).fetchall()
    hint = "; did you mean " + ", ".join(f"{label!r} ({i})" for i, label in near) if near else ""
    raise BadArgument(f"no entity named {name!r}{hint}? See `kbx entities --q TEXT`")


@dataclass
class EntityDetail:
    """One entity: what it is, how it is written, where it came from, where it is named."""

    entity_id: str
    type: str
    label: str
    source: str
    aliases: list[str]
    provenance: list[dict]
    mentions: list[dict]
    meta: dict | None = None  # a resolved work's title, year, venue, authors


def entity(index: Index, name: str, limit: int = 50) -> EntityDetail:
    """An entity and its mentions at path:line, most recent documents first."""
    with index.reader() as con:
        entity_id = resolve_entity(con, name)
        e = con.execute(
            "SELECT entity_id, type, label, source, meta FROM entities WHERE entity_id = ?",
            [entity_id],
        ).fetchone()
        aliases = [
            a
            for (a,) in con.execute(
                "SELECT DISTINCT alias FROM aliases WHERE entity_id = ? ORDER BY 1", [entity_id]
            ).fetchall()
        ]
        provenance = [
            {"action": a, "by": b, "source": s, "note": n, "at": str(t)}
            for a, b, s, n, t in con.execute(
                "SELECT action, actor, source, note, logged_at FROM gazetteer_log "
                "WHERE entry_id = ? ORDER BY seq",
                [entity_id],
            ).fetchall()
        ]
        rows = con.execute(
            """SELECT d.path, d.doc_date, d.sha256, pl.start_line, pl.offsets, u.text,
                      m.start_char, m.text, l.unit_id IS NULL
               FROM links l JOIN documents d USING (doc_id)
               LEFT JOIN placements pl ON pl.doc_id = l.doc_id AND pl.unit_id = l.unit_id
               LEFT JOIN units u ON u.unit_id = l.unit_id
               LEFT JOIN mentions m ON m.unit_hash = u.unit_hash AND m.key = l.entity_id
               WHERE l.entity_id = ?
               ORDER BY d.doc_date DESC NULLS LAST, d.path, pl.ordinal, m.start_char
               LIMIT ?""",
            [entity_id, limit],
        ).fetchall()
    mentions = []
    for path, when, sha, start_line, blob, text, start, mtext, whole in rows:
        line = locate(unpack(blob), text, start).line if blob and start is not None else None
        mentions.append(
            {
                "path": path,
                "line": line or start_line,
                "doc_date": when,
                "hash": sha,
                "text": mtext,
                "as": "author" if whole else "text" if mtext else "passage",
            }
        )
    meta = json.loads(e[4]) if e[4] else None
    return EntityDetail(*e[:4], aliases, provenance, mentions, meta)
