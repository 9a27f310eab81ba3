"""The entity layer: who and what the documents name, and when their passages are dated.

Derived, never edited: ``refresh`` rebuilds it in one transaction from the gazetteer,
the mentions (an identifier's or a gazetteer match's ``key`` is its entity), the
documents' authors (PERSON entities that the whole document mentions) and dates
(each passage's mentioned dates, resolved per document, plus its document's date).
Search filters and facets read only these tables.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

import duckdb

from kbx.errors import BadArgument
from kbx.extract.textmap import locate, unpack
from kbx.gazetteer.entries import slug
from kbx.recognizers.dates import interval
from kbx.store.db import ENTITIES_DIRTY, Index, rows_select

DATE_TYPES = ("DATE", "TIME")
ID_KINDS = ("doi", "orcid", "isbn", "issn", "arxiv", "cve")


def reference_id(text: str) -> str:
    """The resolution key of a reference string."""
    return "ref:" + hashlib.sha256(text.encode()).hexdigest()[:20]


def _matched_references(con: duckdb.DuckDBPyConnection) -> None:
    """A reference string that ``kbx resolve`` matched to a DOI names that DOI: the
    passages holding it link to the DOI's entity (the mentions stay as recognized)."""
    matched = con.execute(
        """SELECT entity_id, json_extract_string(data, '$.doi') FROM resolutions
           WHERE service = 'crossref-bibliographic' AND status = 'ok'"""
    ).fetchall()
    if not matched:
        return
    select, params = rows_select(["ref", "doi"], [(r, f"doi:{d.lower()}") for r, d in matched])
    con.execute(f"CREATE OR REPLACE TEMP TABLE matched_refs AS {select}", params)
    con.execute(
        """INSERT INTO links SELECT DISTINCT pl.doc_id, pl.unit_id, r.doi, true
           FROM mentions m JOIN matched_refs r ON 'ref:' || left(sha256(m.value), 20) = r.ref
           JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
           WHERE m.type = 'REFERENCE' AND m.key IS NULL"""
    )
    con.execute(
        """INSERT INTO entities SELECT DISTINCT doi, 'DOI', substr(doi, 5), 'identifier', NULL
           FROM matched_refs WHERE doi NOT IN (SELECT entity_id FROM entities)"""
    )
    con.execute("DROP TABLE matched_refs")


# When a mention is precise enough to filter on: written once, used by the entity layer,
# the filters and the facets alike (``r`` is its recognizer_info row, ``m`` the mention).
FILTER_GRADE = "(r.filter AND NOT list_contains(r.boost_types, m.type))"

SLUG = r"""CREATE OR REPLACE TEMP MACRO slug(x) AS
    coalesce(nullif(trim(regexp_replace(lower(strip_accents(x)), '[^\p{L}\p{N}]+', '-', 'g'),
                         '-'), ''), 'name')"""  # the twin of gazetteer.entries.slug


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild entities, aliases, links and passage dates."""
    con.execute(SLUG)
    con.execute("BEGIN")
    try:
        for table in ("entities", "aliases", "links", "passage_dates"):
            con.execute(f"DELETE FROM {table}")
        con.execute(
            """INSERT INTO entities SELECT entry_id, type, name, 'gazetteer', NULL FROM gazetteer
               WHERE retracted_at IS NULL"""
        )
        con.execute(
            """INSERT INTO aliases SELECT entry_id, unnest(aliases) FROM gazetteer
               WHERE retracted_at IS NULL"""
        )
        con.execute(  # an identifier's type and label come from its key (doi:10.…)
            f"""INSERT INTO entities
               SELECT key,
                      CASE WHEN split_part(key, ':', 1) IN {ID_KINDS}
                           THEN upper(split_part(key, ':', 1)) ELSE any_value(type) END,
                      CASE WHEN split_part(key, ':', 1) IN {ID_KINDS}
                           THEN substr(key, strpos(key, ':') + 1)
                           ELSE any_value(coalesce(value, text)) END,
                      'identifier', NULL
               FROM mentions WHERE key IS NOT NULL
                 AND key NOT IN (SELECT entity_id FROM entities)
               GROUP BY key"""
        )
        _matched_references(con)
        con.execute(
            """INSERT INTO aliases SELECT DISTINCT key, text FROM mentions
               WHERE key IS NOT NULL AND recognizer NOT IN ('gazetteer', 'references')"""
        )
        cited = _resolved(con)
        # authors: an alias of a gazetteer entry when one matches, else a person of their own
        # "Yosuke Furukawa (@yosuke-furukawa)" is Yosuke Furukawa; the handle stays an alias
        con.execute(
            r"""CREATE OR REPLACE TEMP TABLE doc_authors AS
               WITH named AS (
                   SELECT DISTINCT d.doc_id, a.written,
                          trim(regexp_replace(a.written, '\s*\([^)]*\)\s*$', '')) AS author
                   FROM documents d, unnest(d.authors) a(written)
                   WHERE d.status = 'ok' AND trim(a.written) <> '')
               SELECT doc_id, written, author,
                      coalesce((SELECT min(x.entity_id) FROM aliases x
                                WHERE lower(x.alias) IN (lower(author), lower(written))),
                               'person:' || slug(author))
                          AS entity_id
               FROM named"""
        )
        con.execute(
            """INSERT INTO entities SELECT entity_id, 'PERSON', min(author), 'author', NULL
               FROM doc_authors WHERE entity_id NOT IN (SELECT entity_id FROM entities)
               GROUP BY entity_id"""
        )
        con.execute(
            """INSERT INTO aliases
               SELECT DISTINCT entity_id, unnest([author, written]) AS alias FROM doc_authors
               EXCEPT SELECT entity_id, alias FROM aliases"""
        )
        con.execute(
            "INSERT INTO links SELECT DISTINCT doc_id, NULL, entity_id, true FROM doc_authors"
        )
        con.execute(
            f"""INSERT INTO links
               SELECT pl.doc_id, pl.unit_id, m.key,
                      bool_or(coalesce({FILTER_GRADE}, false))
               FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
               LEFT JOIN recognizer_info r ON r.name = m.recognizer
               WHERE m.key IS NOT NULL
               GROUP BY ALL"""
        )
        _cited_by(con, cited)
        _names(con)
        _carried(con)
        con.execute("DROP TABLE named")
        con.execute(  # one row per passage and entity, filtering if any source can
            """CREATE OR REPLACE TEMP TABLE merged AS
               SELECT doc_id, unit_id, entity_id, bool_or(filter) AS filter FROM links
               GROUP BY ALL"""
        )
        con.execute("DELETE FROM links")
        con.execute("INSERT INTO links SELECT * FROM merged")
        con.execute("DROP TABLE merged")
        _dates(con)
        con.execute("DROP TABLE doc_authors")
        con.execute("DELETE FROM kbx_meta WHERE key = ?", [ENTITIES_DIRTY])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _work(crossref: object, openalex: object) -> dict:
    """A resolved work's title, year, venue, authors and OpenAlex ID, Crossref first. Each
    field is read only where it has the type expected, so an odd answer cached by an older
    kbx (which did not check them) leaves that field empty rather than failing the rebuild."""

    def at(v: object, *path: str | int) -> object:  # None where the answer is shaped otherwise
        for k in path:
            if isinstance(k, int):
                v = v[k] if isinstance(v, list) and len(v) > k else None
            else:
                v = v.get(k) if isinstance(v, dict) else None
        return v

    def text(v: object) -> str | None:  # a string, or the first of a list (Crossref's titles)
        v = at(v, 0) if isinstance(v, list) else v
        return v if isinstance(v, str) and v.strip() else None

    def items(v: object, key: str) -> list[dict]:
        found = at(v, key)
        return [x for x in found if isinstance(x, dict)] if isinstance(found, list) else []

    def tail(v: object) -> str | None:  # an ID from its URL (https://orcid.org/…)
        return (text(v) or "").rsplit("/", 1)[-1] or None

    c, o = crossref, openalex
    years = [at(c, "issued", "date-parts", 0, 0), at(o, "publication_year")]
    year = next((y for y in years if type(y) is int and 0 < y < 10000), None)  # not a bool
    authors = [
        {
            "name": " ".join(x for x in (text(a.get("given")), text(a.get("family"))) if x)
            or text(a.get("name")),
            "orcid": tail(a.get("ORCID")),
        }
        for a in items(c, "author")
    ] or [
        {"name": text(at(a, "author", "display_name")), "orcid": tail(at(a, "author", "orcid"))}
        for a in items(o, "authorships")
    ]
    return {
        "title": text(at(c, "title")) or text(at(o, "title")),
        "year": year,
        "venue": text(at(c, "container-title"))
        or text(at(o, "primary_location", "source", "display_name")),
        "authors": [a for a in authors if a["name"]],
        "openalex": tail(at(o, "id")),
    }


def _resolved(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Titles, years and venues onto resolved DOI entities, their OpenAlex IDs as aliases,
    their authors (by ORCID when given) and venues as entities; returns, per DOI entity,
    the entities its citing passages also name."""
    answers: dict[str, dict] = {}
    for entity_id, service, data in con.execute(
        "SELECT entity_id, service, data FROM resolutions WHERE status = 'ok' "
        "AND entity_id IN (SELECT entity_id FROM entities)"
    ).fetchall():
        try:
            answer = json.loads(data)
        except (TypeError, ValueError):  # no data, or not JSON: nothing to read
            continue
        answers.setdefault(entity_id, {})[service] = answer
    cited: dict[str, list[str]] = {}
    new_entities, new_aliases = {}, set()
    for entity_id, got in answers.items():
        if entity_id.startswith("orcid:"):
            name = got.get("openalex")
            name = name.get("display_name") if isinstance(name, dict) else None
            if isinstance(name, str) and name.strip():
                con.execute("UPDATE entities SET label = ? WHERE entity_id = ?", [name, entity_id])
                new_aliases.add((entity_id, name))
            continue
        work = _work(got.get("crossref"), got.get("openalex"))
        con.execute(
            "UPDATE entities SET label = coalesce(?, label), meta = ? WHERE entity_id = ?",
            [work["title"], json.dumps(work), entity_id],
        )
        if work["openalex"]:
            new_aliases.add((entity_id, work["openalex"]))
        related = []
        for a in work["authors"]:
            person = f"orcid:{a['orcid']}" if a["orcid"] else f"person:{slug(a['name'])}"
            new_entities.setdefault(person, ("PERSON", a["name"]))
            new_aliases.add((person, a["name"]))
            related.append(person)
        if work["venue"]:
            venue = f"venue:{slug(work['venue'])}"
            new_entities.setdefault(venue, ("VENUE", work["venue"]))
            related.append(venue)
        cited[entity_id] = related
    known = {e for (e,) in con.execute("SELECT entity_id FROM entities").fetchall()}
    rows = [(e, t, label, "crossref", None) for e, (t, label) in new_entities.items()
            if e not in known]  # fmt: skip
    if rows:
        select, params = rows_select(["entity_id", "type", "label", "source", "meta"], rows)
        con.execute(f"INSERT INTO entities {select}", params)
    if new_aliases:
        select, params = rows_select(["entity_id", "alias"], sorted(new_aliases))
        con.execute(f"INSERT INTO aliases {select}", params)
    return cited


def _cited_by(con: duckdb.DuckDBPyConnection, cited: dict[str, list[str]]) -> None:
    """A passage citing a resolved work names its authors and venue too."""
    pairs = [(work, other) for work, others in cited.items() for other in others]
    if not pairs:
        return
    select, params = rows_select(["work", "other"], pairs)
    con.execute(
        f"""INSERT INTO links SELECT l.doc_id, l.unit_id, p.other, l.filter
            FROM links l JOIN ({select}) p ON p.work = l.entity_id""",
        params,
    )


# When a name a model found is precise enough to filter on. A small model on technical text
# is mostly noise ("Python" as a PERSON in 553 passages), so a name filters only when
# something confirms it: it is an alias of a known entity (a gazetteer entry, an author, a
# resolved work's author), or its document names it at least twice, always as one type.
CONFIRMED = "(NOT starts_with(p.entity_id, 'name:') OR (e.k >= 2 AND e.types = 1))"


def _names(con: duckdb.DuckDBPyConnection) -> None:
    """Names from NER (mentions with no key from recognizers that find names): an alias of
    a known entity links to it (a gazetteer entry, an author); any other name is a facet
    value of its own, ``name:TYPE:surface``, which filters only when ``CONFIRMED``."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE named AS
           WITH m AS (
               SELECT m.unit_hash, m.type, m.text, coalesce(m.value, m.text) AS surface,
                      {FILTER_GRADE} AS grade
               FROM mentions m JOIN recognizer_info r ON r.name = m.recognizer AND r.names
               WHERE m.key IS NULL)
           SELECT m.*,
                  coalesce((SELECT min(a.entity_id) FROM aliases a
                            WHERE lower(a.alias) IN (lower(m.surface), lower(m.text))),
                           'name:' || lower(m.type) || ':'
                           || slug(m.surface)) AS entity_id
           FROM m"""
    )
    con.execute(
        """INSERT INTO entities SELECT entity_id, any_value(type), mode(surface), 'name', NULL
           FROM named WHERE entity_id NOT IN (SELECT entity_id FROM entities)
           GROUP BY entity_id"""
    )
    con.execute(
        """INSERT INTO aliases SELECT DISTINCT entity_id, surface FROM named
           WHERE starts_with(entity_id, 'name:')"""
    )
    con.execute(  # a model's name filters only with evidence; unconfirmed, it boosts
        f"""INSERT INTO links
           WITH placed AS (
               SELECT pl.doc_id, pl.unit_id, n.entity_id, n.grade, n.type,
                      lower(n.surface) AS s
               FROM named n JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)),
           seen AS (SELECT doc_id, s, count(*) AS k, count(DISTINCT type) AS types
                    FROM placed GROUP BY ALL)
           SELECT p.doc_id, p.unit_id, p.entity_id, bool_or(p.grade AND {CONFIRMED})
           FROM placed p JOIN seen e USING (doc_id, s)
           GROUP BY p.doc_id, p.unit_id, p.entity_id"""
    )


SHORT_FORM_TYPES = ("ORG", "PERSON", "GPE", "FAC", "PRODUCT", "PROJECT", "SOFTWARE", "EVENT")
_SUFFIX = re.compile(
    r"(?:,?\s+(?:Inc\.?|Incorporated|Corp\.?|Corporation|Ltd\.?|Limited|LLC|L\.L\.C\.|GmbH|AG|"
    r"S\.A\.|plc|PLC|Co\.))+$"
)


def short_form(name: str, type_: str) -> str | None:
    """How a document refers to a named thing after naming it in full: ``Apple`` after
    ``Apple Inc.``, ``Dahl`` after ``Ryan Dahl``; None when there is no safe one."""
    if type_ == "PERSON":
        words = name.split()
        last = words[-1] if len(words) > 1 else ""
        return last if len(last) > 2 and last[0].isupper() and last.isalpha() else None
    short = _SUFFIX.sub("", name).strip()
    return short if short and short != name and any(c.isupper() for c in short) else None


def _carried(con: duckdb.DuckDBPyConnection) -> None:
    """Link the short forms of a name to its entity in the passages of the same document
    from its first full mention on (one sense per discourse), unless the short form is
    another entity's alias."""
    rows = con.execute(  # long forms: keyed mentions, and the names NER found (``named``),
        # each as precise as its own link in that document: a model's name only with evidence
        f"""WITH long AS (
                SELECT pl.doc_id, pl.ordinal, m.key AS entity_id, m.text,
                       coalesce({FILTER_GRADE}, false) AS grade
                FROM mentions m LEFT JOIN recognizer_info r ON r.name = m.recognizer
                JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
                WHERE m.key IS NOT NULL
                UNION ALL
                SELECT pl.doc_id, pl.ordinal, n.entity_id, n.text, coalesce(l.filter, false)
                FROM named n JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
                LEFT JOIN links l ON l.doc_id = pl.doc_id AND l.unit_id = pl.unit_id
                    AND l.entity_id = n.entity_id)
            SELECT m.doc_id, min(m.ordinal), m.entity_id, e.type, m.text, bool_or(m.grade)
            FROM long m JOIN entities e USING (entity_id)
            WHERE e.type IN {SHORT_FORM_TYPES} AND contains(m.text, ' ')
            GROUP BY ALL"""
    ).fetchall()
    wanted: dict[int, list[tuple[int, str, bool, re.Pattern]]] = {}
    owners = dict(  # a bare NER name ("Apple", unlinked) does not own its surface
        con.execute(
            "SELECT alias, min(entity_id) FROM aliases WHERE NOT starts_with(entity_id, 'name:') "
            "GROUP BY 1"
        ).fetchall()
    )
    for doc_id, first, key, type_, text, grade in rows:
        short = short_form(text, type_)
        if short and owners.get(short, key) == key:
            rx = re.compile(rf"(?<!\w){re.escape(short)}(?!\w)")
            wanted.setdefault(doc_id, []).append((first, key, grade, rx))
    if not wanted:
        return
    found = set()
    for doc_id, ordinal, unit_id, text in con.execute(
        """SELECT pl.doc_id, pl.ordinal, pl.unit_id, u.text FROM placements pl
           JOIN units u USING (unit_id) WHERE list_contains(?, pl.doc_id)""",
        [list(wanted)],
    ).fetchall():
        for first, key, grade, rx in wanted[doc_id]:
            if ordinal >= first and rx.search(text):
                found.add((doc_id, unit_id, key, grade))  # as precise as its long form
    found -= set(con.execute("SELECT doc_id, unit_id, entity_id, filter FROM links").fetchall())
    if found:
        select, params = rows_select(["doc_id", "unit_id", "entity_id", "filter"], list(found))
        con.execute(f"INSERT INTO links {select}", params)


def _dates(con: duckdb.DuckDBPyConnection) -> None:
    """Document dates, and the calendar dates each passage mentions (a relative date as
    resolved in its document), as day intervals."""
    rows = con.execute(
        "SELECT doc_id, NULL, doc_date FROM documents WHERE status = 'ok' AND doc_date IS NOT NULL"
    ).fetchall()
    rows += con.execute(
        f"""SELECT DISTINCT pl.doc_id, pl.unit_id, coalesce(dm.value, m.value)
            FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
            JOIN recognizer_info r ON r.name = m.recognizer AND {FILTER_GRADE}
            LEFT JOIN doc_mentions dm ON dm.doc_id = pl.doc_id AND dm.unit_hash = m.unit_hash
                AND dm.recognizer = m.recognizer AND dm.version = m.version
                AND dm.start_char = m.start_char
            WHERE m.type IN {DATE_TYPES}"""
    ).fetchall()
    spans = {v: interval(v) for v in {r[2] for r in rows}}
    out = list({(d, u, *spans[v]) for d, u, v in rows if spans[v]})
    if out:
        select, params = rows_select(["doc_id", "unit_id", "lo", "hi"], out)
        con.execute(f"INSERT INTO passage_dates {select}", params)


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
