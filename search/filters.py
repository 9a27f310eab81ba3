"""Facet filters for search and grep: entities, mention types, dates, quantities, metadata,
paths.

Each filter becomes a SQL condition on a placement (``pl``: a unit in a document)
and its document (``d``). A passage's dates are the calendar dates it mentions plus
its document's date; an entity is named by a mention in the passage or, for an
author, by the whole document. Only mentions from recognizers precise enough to
filter narrow the results; a boost-only one raises the score of the passages that
hold it instead. Anything unknown is an error with suggestions, never an empty
result that looks like "nothing exists". ``Filters`` itself, with each filter's names and
help for every face, is defined in ``kbx.options``: a new filter is a field there and its
condition here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

import duckdb

from kbx.entities.lookup import FILTER_GRADE, check_type, resolve_author, resolve_entity
from kbx.errors import BadArgument
from kbx.options import DATE_FROM, Filters
from kbx.recognizers.quantity_filter import Asked
from kbx.recognizers.quantity_filter import parse as parse_quantity

_META = re.compile(r"^(?P<key>[A-Za-z0-9_.-]+)(?P<op>!?=)(?P<value>.*)$")


@dataclass
class DocFilter:
    """Restricts ranking to placements matching every condition (SQL over ``placements pl``
    and ``documents d``); ``boosts`` are conditions on ``unit_id`` that raise the score.

    A condition added with ``keep`` is written once, as the placements ``(doc_id, unit_id)``
    it keeps, read from its own table (the links of an entity, the dates in a range): ranking
    starts from the intersection of those sets, which is small when a filter is selective,
    and the placement-level clause is derived from the same SQL."""

    clauses: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)
    boosts: list[tuple[str, list]] = field(default_factory=list)
    # (after, before, date_from) of a date filter, for facets: the first day kept and the
    # day after the last (a kept date's [lo, hi) has lo >= after and hi <= before)
    dates: tuple | None = None
    places: list[str] = field(default_factory=list)  # per clause added with ``keep``
    # per quantity filter: its condition on a ``passage_quantities q`` row, for facets
    quantities: list[tuple[str, list]] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)  # the same, for the facets' arrays
    # per clause added with ``keep``: its parameters, and what the entity layer's arrays
    # answer it by (search/allowed.py: ("entity", id), ("type", T), ("dates", after,
    # before, date_from), ("documents", condition on ``documents d``: the documents by
    # SQL, their passages from the arrays)), or None where only the SQL can
    place_params: list[list] = field(default_factory=list)
    kinds: list[tuple | None] = field(default_factory=list)

    def keep(self, places: str, params: list, kind: tuple | None = None) -> None:
        """Add the condition "the placement is among ``places``" (SQL of ``doc_id, unit_id``)."""
        self.places.append(places)
        self.place_params.append(list(params))
        self.kinds.append(kind)
        self.clauses.append(
            f"EXISTS (SELECT 1 FROM ({places}) z "
            "WHERE z.doc_id = pl.doc_id AND z.unit_id = pl.unit_id)"
        )
        self.params += params

    def where(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "TRUE"

    def units(self) -> str | None:
        """SQL of the units with a placement passing every condition (its parameters are
        ``params``), or None when nothing is filtered."""
        if not self.clauses:
            return None
        if len(self.places) == len(self.clauses):
            sets = " INTERSECT ".join(f"SELECT doc_id, unit_id FROM ({p})" for p in self.places)
            return f"SELECT DISTINCT unit_id FROM ({sets})"
        return (
            "SELECT DISTINCT pl.unit_id FROM placements pl JOIN documents d USING (doc_id) "
            f"WHERE {self.where()}"
        )


def parse_period(text: str, flag: str) -> tuple[date, date]:
    """The days ``text`` names, as ``[first, end)`` at the precision written: ``2021`` is
    the year, ``2021-03`` the month, ``2021-03-04`` the day (``end`` stops at ``date.max``)."""
    t = text.strip()
    try:
        if re.fullmatch(r"\d{4}", t):
            first = date(int(t), 1, 1)
            end = (int(t) + 1, 1)
        elif re.fullmatch(r"\d{4}-\d\d", t):
            first = date(int(t[:4]), int(t[5:]), 1)
            end = (first.year + first.month // 12, first.month % 12 + 1)
        else:
            first = date.fromisoformat(t)
            end = None
    except ValueError:
        raise BadArgument(
            f"{flag} {text!r}: give a date as YYYY, YYYY-MM or YYYY-MM-DD (e.g. {flag} 2021-03)"
        ) from None
    if end is None:
        return first, (first + timedelta(days=1) if first < date.max else date.max)
    return first, (date(end[0], end[1], 1) if end[0] <= date.max.year else date.max)


def _passage_or_document(table: str) -> str:
    """Joins a row of ``table`` to the placements it covers: its own passage, or (with no
    ``unit_id``) every passage of its document."""
    return (
        f"{table}.doc_id = pl.doc_id AND ({table}.unit_id IS NULL OR {table}.unit_id = pl.unit_id)"
    )


def _documents_where(condition: str) -> str:
    """The placements of the documents meeting ``condition`` (over ``documents d``)."""
    return (
        "SELECT pl.doc_id, pl.unit_id FROM documents d JOIN placements pl USING (doc_id) "
        f"WHERE {condition}"
    )


def _entity(con: duckdb.DuckDBPyConnection, name: str, f: DocFilter) -> None:
    entity_id = resolve_entity(con, name)
    grades = {
        g
        for (g,) in con.execute(
            "SELECT DISTINCT filter FROM links WHERE entity_id = ?", [entity_id]
        ).fetchall()
    }
    if True in grades or not grades:
        f.keep(  # the passages naming it, and every passage of a document it wrote
            "SELECT doc_id, unit_id FROM links WHERE entity_id = ? AND filter "
            "AND unit_id IS NOT NULL UNION ALL SELECT pl.doc_id, pl.unit_id FROM links l "
            "JOIN placements pl USING (doc_id) WHERE l.entity_id = ? AND l.filter "
            "AND l.unit_id IS NULL",
            [entity_id, entity_id],
            ("entity", entity_id),
        )
    else:  # a name nothing confirms: filtering by it would keep every passage unfiltered
        label = con.execute("SELECT label FROM entities WHERE entity_id = ?", [entity_id])
        raise BadArgument(
            f"{name!r} ({entity_id}) cannot filter: only a model names it, and nothing "
            "confirms it (named once in each document, or as code); search for the word, or "
            f"add it to the gazetteer: kbx gazetteer add {json.dumps(label.fetchone()[0])} "
            "--type TYPE"
        )


def _author(con: duckdb.DuckDBPyConnection, name: str, f: DocFilter) -> None:
    """The passages the entity wrote: those its signature closes or opens, and every
    passage of a document whose metadata names it as an author (``authored``); an address
    is the person who signs with it."""
    entity_id = resolve_author(con, name)
    f.keep(
        "SELECT doc_id, unit_id FROM authored WHERE entity_id = ? AND unit_id IS NOT NULL "
        "UNION ALL SELECT pl.doc_id, pl.unit_id FROM authored a JOIN placements pl "
        "USING (doc_id) WHERE a.entity_id = ? AND a.unit_id IS NULL",
        [entity_id, entity_id],
    )


def _type(con: duckdb.DuckDBPyConnection, type_: str, f: DocFilter) -> None:
    t = type_.strip().upper()
    grades = {
        g
        for (g,) in con.execute(
            "SELECT filter AND NOT list_contains(boost_types, ?) FROM recognizer_info "
            "WHERE list_contains(types, ?) "
            "UNION SELECT true FROM entities WHERE type = ? AND source = 'author'",
            [t, t, t],
        ).fetchall()
    }
    if not grades:
        check_type(con, type_)
    if True in grades:
        f.keep(  # a model's names count through their links, which carry the evidence
            f"""SELECT pl.doc_id, pl.unit_id FROM mentions m
                JOIN recognizer_info r ON r.name = m.recognizer
                JOIN units u2 USING (unit_hash) JOIN placements pl ON pl.unit_id = u2.unit_id
                WHERE m.type = ? AND NOT r.names AND {FILTER_GRADE}
                UNION
                SELECT pl.doc_id, pl.unit_id FROM links l JOIN entities e USING (entity_id)
                JOIN placements pl ON {_passage_or_document("l")}
                WHERE l.filter AND e.type = ?""",
            [t, t],
            ("type", t),
        )
    else:
        f.boosts.append(
            (
                "unit_id IN (SELECT u2.unit_id FROM units u2 JOIN mentions m USING (unit_hash) "
                "WHERE m.type = ?)",
                [t],
            )
        )


def _values(key: str) -> str:
    """SQL for a front-matter field's values as a lower-case list (a list field gives all)."""
    path = f"'$.\"{key}\"'"
    return (
        f"[lower(x) FOR x IN CASE WHEN json_type(d.meta, {path}) = 'ARRAY' "
        f"THEN json_extract_string(d.meta, '$.\"{key}\"[*]') "
        f"ELSE [json_extract_string(d.meta, {path})] END]"
    )


def _meta(con: duckdb.DuckDBPyConnection, spec: str, f: DocFilter) -> None:
    m = _META.match(spec.strip())
    if not m or not m["value"].strip():
        raise BadArgument(f"--meta {spec!r}: write KEY=VALUE or KEY!=VALUE (e.g. category=news)")
    key, op, value = m["key"], m["op"], m["value"].strip()
    values = dict(
        con.execute(
            f"SELECT v, count(*) FROM (SELECT unnest({_values(key)}) AS v FROM documents d) "
            "WHERE v IS NOT NULL GROUP BY v ORDER BY 2 DESC"
        ).fetchall()
    )
    if not values:
        keys = sorted(
            {
                k
                for (ks,) in con.execute(
                    "SELECT DISTINCT json_keys(meta) FROM documents WHERE meta IS NOT NULL"
                ).fetchall()
                for k in ks or []
            }
        )
        raise BadArgument(
            f"no document has the metadata field {key!r}; fields: {', '.join(keys) or 'none'}"
        )
    if value.lower() not in values:
        top = ", ".join(list(values)[:12])
        raise BadArgument(f"no document has {key}={value!r}; values of {key}: {top}")
    clause = f"list_contains(coalesce({_values(key)}, []), ?)"
    clause = clause if op == "=" else f"NOT {clause}"
    f.keep(_documents_where(clause), [value.lower()], ("documents", clause))


def _dates(filters: Filters, f: DocFilter) -> None:
    if filters.date_from not in DATE_FROM:
        raise BadArgument(f"--date-from {filters.date_from!r}: choose from {', '.join(DATE_FROM)}")
    # inclusive at the precision written: --after D keeps what starts on or after D's first
    # day, --before D what ends by D's last (--before 2021 keeps 2021; --after 2021-06
    # --before 2021-06 is June 2021); a date's interval [lo, hi) ends on its day hi - 1
    after = parse_period(filters.after, "--after")[0] if filters.after else None
    before = parse_period(filters.before, "--before")[1] if filters.before else None
    if after is None and before is None:
        return
    if after and before and after >= before:
        raise BadArgument(f"--after {filters.after} is later than --before {filters.before}")
    source = {
        "any": _passage_or_document("x"),
        "mentioned": "x.doc_id = pl.doc_id AND x.unit_id = pl.unit_id",
        "document": "x.doc_id = pl.doc_id AND x.unit_id IS NULL",
    }[filters.date_from]
    f.keep(
        f"SELECT pl.doc_id, pl.unit_id FROM passage_dates x JOIN placements pl ON {source} "
        "WHERE x.lo >= coalesce(?::DATE, x.lo) AND x.hi <= coalesce(?::DATE, x.hi)",
        [after, before],
        ("dates", after, before, filters.date_from),
    )
    f.dates = (after, before, filters.date_from)


# What an asked value keeps of a stored interval [q.lo, q.hi]: overlap, so ``>`` is "some
# of it above" and ``=`` a value inside it; a range (``=lo..hi``) keeps what meets it.
_OVERLAP = {">": "q.hi > ?", ">=": "q.hi >= ?", "<": "q.lo < ?", "<=": "q.lo <= ?"}


_KEPT = {  # the same over numpy arrays of stored intervals (lo, hi) and the value asked
    ">": lambda lo, hi, v: hi > v,
    ">=": lambda lo, hi, v: hi >= v,
    "<": lambda lo, hi, v: lo < v,
    "<=": lambda lo, hi, v: lo <= v,
}


def kept_quantity(asked: Asked, lo, hi):
    """What ``_quantity``'s condition keeps, over numpy arrays of stored intervals."""
    if asked.op == "=":
        return (lo <= asked.hi) & (hi >= asked.lo)
    return _KEPT[asked.op](lo, hi, asked.lo)


def _quantity(con: duckdb.DuckDBPyConnection, spec: str, f: DocFilter) -> None:
    asked = parse_quantity(spec)
    if not con.execute(
        "SELECT 1 FROM passage_quantities WHERE unit = ? LIMIT 1", [asked.unit]
    ).fetchall():
        held = con.execute(
            "SELECT dimension, unit, count(DISTINCT unit_id) FROM passage_quantities "
            "GROUP BY ALL ORDER BY 3 DESC, 1 LIMIT 12"
        ).fetchall()
        shown = ", ".join(f"{d} ({u}) {n}" if d != u else f"{u} {n}" for d, u, n in held)
        raise BadArgument(
            f"--quantity {spec!r}: no passage mentions {asked.dimension} ({asked.unit}); "
            f"passages by dimension: {shown or 'none has a quantity'}"
        )
    if asked.op == "=":
        condition, values = "q.lo <= ? AND q.hi >= ?", [asked.hi, asked.lo]
    else:
        condition, values = _OVERLAP[asked.op], [asked.lo]
    f.keep(
        "SELECT pl.doc_id, pl.unit_id FROM passage_quantities q JOIN placements pl "
        f"USING (unit_id) WHERE q.unit = ? AND {condition}",
        [asked.unit, *values],
    )
    f.quantities.append((f"(q.unit <> ? OR ({condition}))", [asked.unit, *values]))
    f.asked.append(asked)


def compile_filters(con: duckdb.DuckDBPyConnection, filters: Filters | None) -> DocFilter:
    """The SQL conditions (and boosts) for ``filters``, checked against this index."""
    f = DocFilter()
    if filters is None:
        return f
    if filters.path:
        f.keep(_documents_where("d.path GLOB ?"), [filters.path], ("documents", "d.path GLOB ?"))
    for name in filters.entities:
        _entity(con, name, f)
    for name in filters.authors:
        _author(con, name, f)
    for t in filters.types:
        _type(con, t, f)
    _dates(filters, f)
    for spec in filters.quantities:
        _quantity(con, spec, f)
    for spec in filters.meta:
        _meta(con, spec, f)
    if filters.lang:
        _lang(filters.lang, f)
    return f


def check_path(con: duckdb.DuckDBPyConnection, glob: str) -> None:
    """Refuse a ``--path`` glob that matches no indexed file: a command that found nothing
    asks (``kbx.library``), so that is said rather than "no passage matches"."""
    if not con.execute("SELECT 1 FROM documents WHERE path GLOB ? LIMIT 1", [glob]).fetchone():
        held = con.execute("SELECT path FROM documents ORDER BY path LIMIT 3").fetchall()
        some = [p for (p,) in held]
        raise BadArgument(
            f"--path {glob!r} matches no indexed file (a glob relative to the root; * crosses "
            f"folders), e.g. {', '.join(some) or 'none is indexed'}"
        )


def _lang(code: str, f: DocFilter) -> None:
    """Passages in one language: those holding its ``#lang=`` term (analysis.analyze_units);
    English is every passage told no other language (and code)."""
    from kbx.analysis import LANG_TERM
    from kbx.languages import SNOWBALL

    code = code.strip().lower()
    if code != "en" and code not in SNOWBALL:
        known = ", ".join(["en", *SNOWBALL])
        raise BadArgument(f"unknown language {code!r} for --lang; kbx tells: {known}")
    held = "SELECT p.unit_id FROM postings p JOIN terms t USING (term_id) WHERE "
    if code == "en":
        sql = f"pl.unit_id NOT IN ({held}starts_with(t.term, ?))"
        params = [LANG_TERM]
    else:
        sql = f"pl.unit_id IN ({held}t.term = ?)"
        params = [LANG_TERM + code]
    f.keep(f"SELECT pl.doc_id, pl.unit_id FROM placements pl WHERE {sql}", params)
