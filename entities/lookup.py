"""Reading the entity layer: entity listings, one entity's detail, and turning what a
user typed (a name, an alias, an ID, a type) into what the filters compare."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from kbx.entities.positions import Positions, position_table
from kbx.errors import BadArgument
from kbx.extract.textmap import locate, unpack
from kbx.gazetteer.entries import slug
from kbx.store.db import Index, rows_select

# When a mention is precise enough to filter on: written once, used by the entity layer,
# the filters and the facets alike (``r`` is its recognizer_info row, ``m`` the mention).
FILTER_GRADE = "(r.filter AND NOT list_contains(r.boost_types, m.type))"


def owner_of(texts: str) -> str:
    """SQL: the entity a name written as one of ``texts`` (an SQL list of lower-cased
    values) links to: the one known entity with it as an alias. None when several share it
    (two QIDs called "Apple"): the name stays ``name:TYPE:surface`` and ``kbx entity``
    lists the candidates, until a pin leaves the alias to one (``entities/build.py``)."""
    return f"""(SELECT CASE WHEN count(DISTINCT a.entity_id) = 1 THEN min(a.entity_id) END
               FROM aliases a WHERE NOT starts_with(a.entity_id, 'name:')
               AND lower(a.alias) IN {texts})"""


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
    confirmed: bool = True  # False: only a model names it, unconfirmed; it cannot filter


def entities(
    index: Index, type_: str | None = None, q: str | None = None, limit: int = 50
) -> list[EntityRow]:
    """Entities, most mentioned first, those that filter before the names nothing confirms;
    optionally of one type or matching ``q`` (in the label, an alias or the ID)."""
    with index.reader() as con:
        if type_ is not None:
            type_ = check_type(con, type_)
        select, params = rows_select(["doc_id", "unit_id", "entity_id"], _repeated(con))
        con.execute(f"CREATE OR REPLACE TEMP TABLE repeated AS {select}", params)
        rows = con.execute(
            """SELECT e.entity_id, e.type, e.label, e.source,
                      count(l.doc_id) FILTER (l.unit_id IS NOT NULL AND r.doc_id IS NULL)
                          + count(DISTINCT l.doc_id) FILTER (l.unit_id IS NULL),
                      count(DISTINCT l.doc_id),
                      (SELECT list(DISTINCT a.alias ORDER BY a.alias) FROM aliases a
                       WHERE a.entity_id = e.entity_id),
                      coalesce(bool_or(l.filter), true)
               FROM entities e LEFT JOIN links l USING (entity_id)
               LEFT JOIN repeated r ON r.doc_id = l.doc_id AND r.unit_id = l.unit_id
                   AND r.entity_id = l.entity_id
               WHERE (? IS NULL OR e.type = upper(?))
                 AND (? IS NULL OR contains(lower(e.label), lower(?))
                      OR contains(lower(e.entity_id), lower(?))
                      OR EXISTS (SELECT 1 FROM aliases a WHERE a.entity_id = e.entity_id
                                 AND contains(lower(a.alias), lower(?))))
               GROUP BY ALL ORDER BY 8 DESC, 6 DESC, 5 DESC, e.entity_id LIMIT ?""",
            [type_, type_, q, q, q, q, limit],
        ).fetchall()
    return [EntityRow(*r[:6], list(r[6] or []), r[7]) for r in rows]


def _repeated(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int, str]]:
    """Passage links that only repeat the window before: the passage continues a window of
    the same block that names the entity too, and every mention of it in the passage lies
    in their overlap (one place in the file, counted once). A link with no mention to place
    (a carried short form, a cited work's author) is never taken for a repeat."""
    position_table(con)
    rows = con.execute(
        """SELECT lb.doc_id, lb.unit_id, lb.entity_id, ub.unit_hash, p.overlap
           FROM positions p
           JOIN placements pa ON pa.doc_id = p.doc_id AND pa.ordinal = p.ordinal - 1
           JOIN placements pb ON pb.doc_id = p.doc_id AND pb.ordinal = p.ordinal
           JOIN links lb ON lb.doc_id = p.doc_id AND lb.unit_id = pb.unit_id
           JOIN links la ON la.doc_id = p.doc_id AND la.unit_id = pa.unit_id
               AND la.entity_id = lb.entity_id
           JOIN units ub ON ub.unit_id = pb.unit_id"""
    ).fetchall()
    if not rows:
        return []
    select, params = rows_select(["unit_hash", "entity_id"], [(r[3], r[2]) for r in rows])
    spans = _mentions_of(con, select, params)
    return [
        (doc_id, unit_id, entity_id)
        for doc_id, unit_id, entity_id, unit, overlap in rows
        if (found := spans.get((unit, entity_id))) and all(e <= overlap for _, e, _ in found)
    ]


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


# A name as search folds it: accents dropped (NFKD, combining marks out), case folded.
_FOLD = "lower(strip_accents({}))"


def resolve_entity(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """An entity ID from an ID, a label or an alias (accents and case aside when nothing
    matches as written); an ambiguous name lists the candidates and an unknown one suggests
    the nearest, rather than matching nothing."""
    if con.execute("SELECT 1 FROM entities WHERE entity_id = ?", [name]).fetchone():
        return name
    found = (
        con.execute(
            """SELECT DISTINCT e.entity_id, e.type, e.label FROM entities e
           LEFT JOIN aliases a USING (entity_id)
           WHERE lower(e.label) = lower(?) OR lower(a.alias) = lower(?)
              OR lower(e.entity_id) = lower(?)
           ORDER BY 1""",
            [name, name, name],
        ).fetchall()
        or con.execute(  # as search reads words: "Timo Rohling" is Timo Röhling
            f"""SELECT DISTINCT e.entity_id, e.type, e.label FROM entities e
           LEFT JOIN aliases a USING (entity_id)
           WHERE {_FOLD.format("e.label")} = {_FOLD.format("?")}
              OR {_FOLD.format("a.alias")} = {_FOLD.format("?")}
           ORDER BY 1""",
            [name, name],
        ).fetchall()
    )
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


def resolve_author(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The entity whose signatures ``--author`` keeps: an address (``email:ADDR``) is the
    person who signs with it (``entities/people.py`` lists it in their ``meta``). One that
    signs nothing is refused, by name, rather than answered with nothing."""
    entity_id = resolve_entity(con, name)
    if entity_id.startswith("email:"):
        address = entity_id.removeprefix("email:")
        signers = [
            (i, label)
            for i, label, meta in con.execute(
                "SELECT entity_id, label, meta FROM entities WHERE type = 'PERSON' "
                "AND contains(meta, ?) ORDER BY 1",
                [f'"{address}"'],
            ).fetchall()
            if address in json.loads(meta).get("emails", [])
        ]
        if not signers:
            raise BadArgument(
                f"no one signs with {address!r}; `--entity {name}` finds where it is written"
            )
        if len(signers) > 1:
            listed = "; ".join(f"{i} ({label!r})" for i, label in signers)
            raise BadArgument(f"{address!r} is signed by {len(signers)} people: {listed}; give one")
        entity_id = signers[0][0]
    if not con.execute(
        "SELECT 1 FROM authored WHERE entity_id = ? LIMIT 1", [entity_id]
    ).fetchone():
        raise BadArgument(
            f"{name!r} ({entity_id}) signs nothing here; `--entity {name}` finds where it is named"
        )
    return entity_id


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
    candidates: list[dict] = field(default_factory=list)  # a name's entries, when shared


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
            """SELECT l.doc_id, d.path, d.doc_date, d.sha256, pl.ordinal, pl.start_line,
                      pl.offsets, u.unit_hash, u.text, l.unit_id IS NULL
               FROM links l JOIN documents d USING (doc_id)
               LEFT JOIN placements pl ON pl.doc_id = l.doc_id AND pl.unit_id = l.unit_id
               LEFT JOIN units u ON u.unit_id = l.unit_id
               WHERE l.entity_id = ?
               ORDER BY d.doc_date DESC NULLS LAST, d.path, pl.ordinal
               LIMIT ?""",  # a passage whose mentions all repeat the one before it is
            [entity_id, 2 * limit],  # left out, and it has one: twice enough rows
        ).fetchall()
        candidates = _candidates(con, entity_id) if entity_id.startswith("name:") else []
        named = _mentions_of(
            con,
            "SELECT DISTINCT u.unit_hash, l.entity_id FROM links l JOIN units u USING (unit_id) "
            "WHERE l.entity_id = ?",
            [entity_id],
        )
    mentions: list[dict] = []
    seen, positions = set(), Positions()
    for doc_id, path, when, sha, ordinal, start_line, blob, unit, text, whole in rows:
        found = [(None, None, None)] if whole else named.get((unit, entity_id), [(None,) * 3])
        chain, base = positions.start(doc_id, ordinal, text, blob) if blob else (ordinal, 0)
        segments = None
        for at, _, mtext in found:
            line = start_line
            if at is not None:
                if (doc_id, chain, base + at) in seen:  # the overlap of two windows
                    continue
                seen.add((doc_id, chain, base + at))
                segments = segments or unpack(blob)
                line = locate(segments, text, at).line
            mentions.append(
                {
                    "path": path,
                    "line": line,
                    "doc_date": when,
                    "hash": sha,
                    "text": mtext,
                    "as": "author" if whole else "text" if mtext else "passage",
                }
            )
            if len(mentions) >= limit:
                break
        if len(mentions) >= limit:
            break
    meta = json.loads(e[4]) if e[4] else None
    return EntityDetail(*e[:4], aliases, provenance, mentions, meta, candidates)


def _candidates(con: duckdb.DuckDBPyConnection, entity_id: str) -> list[dict]:
    """The known entities a name's surface is an alias of: several, or it would have
    linked to the one (``owner_of``); a pin settles which it is."""
    rows = con.execute(
        """SELECT DISTINCT e.entity_id, e.type, e.label FROM aliases n
           JOIN aliases a ON lower(a.alias) = lower(n.alias)
           JOIN entities e ON e.entity_id = a.entity_id
           WHERE n.entity_id = ? AND NOT starts_with(a.entity_id, 'name:') ORDER BY 1""",
        [entity_id],
    ).fetchall()
    return [{"entity_id": i, "type": t, "label": label} for i, t, label in rows]


def _mentions_of(
    con: duckdb.DuckDBPyConnection, wanted: str, params: list
) -> dict[tuple[str, str], list[tuple[int, int, str]]]:
    """``(start, end, text)`` of the mentions naming each entity in each unit that
    ``wanted`` selects (``unit_hash, entity_id``): those keyed to it, and the names a model
    found that the entity layer gave it (by an alias of a known entity, else as
    ``name:TYPE:surface``; see ``entities/build._names``)."""
    rows = con.execute(
        f"""WITH wanted AS ({wanted})
            SELECT DISTINCT w.unit_hash, w.entity_id, m.start_char, m.end_char, m.text, m.key,
                   m.type, coalesce(m.value, m.text),
                   {owner_of("(lower(coalesce(m.value, m.text)), lower(m.text))")}
            FROM wanted w JOIN mentions m ON m.unit_hash = w.unit_hash
            WHERE m.key = w.entity_id OR (m.type = 'PERSON' AND starts_with(m.key, 'person:'))
               OR (m.key IS NULL AND m.recognizer IN
                   (SELECT name FROM recognizer_info WHERE names))
            ORDER BY 1, 2, 3""",
        params,
    ).fetchall()
    out: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for unit, entity_id, start, end, text, key, _type, surface, owner in rows:
        if entity_id in (key, owner) or (
            not (key or owner)  # a model's name: its type is the corpus's vote, not its own
            and entity_id.startswith("name:")
            and entity_id.split(":", 2)[2] == slug(surface)
        ):  # a signer under another spelling is the person through an alias (owner)
            out.setdefault((unit, entity_id), []).append((start, end, text))
    return out
