"""The entity layer: who and what the documents name, who wrote them, and when their
passages are dated.

Derived, never edited: ``refresh`` rebuilds it whole in one transaction from the gazetteer,
the mentions (an identifier's or a gazetteer match's ``key`` is its entity), the
documents' authors (PERSON entities that the whole document mentions), dates
(each passage's mentioned dates, resolved per document, plus its document's date) and
quantities (each passage's measures and amounts of money, as SI intervals).
Search filters and facets read only these tables. A build is in two parts: the corpus-wide
rows (``corpus_rows``: entities, aliases, and the basis, the decisions the documents' rows
are built with) and each document's rows (``document_rows``), which a write of a few
documents recomputes for those alone (``entities/incremental.py``).

Every writing command starts with ``repair`` and ends with ``settle``: a command can be
killed between any two of its commits, so rather than trust the next run to redo the step
that was cut, it brings the store to a consistent state from what it finds. Units no
document places are swept, the curated gazetteer is made level with its own log, and the
layer is brought level when a write since its last build left the ``entities_dirty`` mark
(which every such write sets in its own transaction, with the documents it touched in
``layer_stale`` where it was theirs).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from kbx.annotate.context import NAMES
from kbx.annotate.names import Words, short_form
from kbx.annotate.setup import pins
from kbx.entities import facet_arrays
from kbx.entities.inputs import digest
from kbx.entities.lookup import FILTER_GRADE
from kbx.entities.people import link_spellings, merge_people, signed
from kbx.entities.positions import position_table
from kbx.entities.scope import units_within, within
from kbx.entities.sections import section_dates
from kbx.entities.vocabulary import code_words, words
from kbx.gazetteer.entries import slug
from kbx.linking.works import summary
from kbx.recognizers.date_words import MONTH_NAMES, MONTHS, WEEKDAYS
from kbx.recognizers.quantity_filter import stored
from kbx.store import journal
from kbx.store.arrays import worth_mapping
from kbx.store.consistency import sweep
from kbx.store.db import DIRTY_ALL, ENTITIES_DIRTY, Index, rows_select, set_meta
from kbx.store.transaction import transaction
from kbx.timex import interval

LAYER = ("entities", "aliases", "links", "authored", "passage_dates", "passage_quantities")
BASIS = "layer_basis"  # the corpus-wide decisions the documents' rows were built with
# What the rules building the layer from the mentions are: a store built by other rules is
# rebuilt by the next writing command, as the postings are by ``ANALYSIS_VERSION``.
# 2: a dated section dates its passages; an unnamed unit's dimension as written (kg/m²).
# 3: the layer keeps its basis, so a write may rebuild only its documents' rows.
# 4: a signer's one-word name takes no model's name; a shouted name is not confirmed; a
#   person's name of only weekday and month abbreviations ("Thu Mar") is none, and one
#   word in capitals (EPIPE) or a one-word person's name opening lines is confirmed by
#   nothing a document repeats.
LAYER_VERSION = "4"
LAYER_KEY = "layer"  # kbx_meta: the LAYER_VERSION that built the layer
INPUTS_KEY = "layer_inputs"  # kbx_meta: the digest of what its corpus-wide rows came from
DATE_TYPES = ("DATE", "TIME")
QUANTITY_TYPES = ("QUANTITY", "MONEY")
ID_KINDS = ("doi", "orcid", "isbn", "issn", "arxiv", "cve", "email")


def reference_id(text: str) -> str:
    """The resolution key of a reference string."""
    return "ref:" + hashlib.sha256(text.encode()).hexdigest()[:20]


def _matched(con: duckdb.DuckDBPyConnection) -> bool:
    """TEMP TABLES ``matched_refs(ref, doi)``, the reference strings ``kbx resolve`` matched
    to a DOI, and ``ref_keys``, each unkeyed reference's key; whether there are any."""
    matched = con.execute(
        """SELECT entity_id, json_extract_string(data, '$.doi') FROM resolutions
           WHERE service = 'crossref-bibliographic' AND status = 'ok'"""
    ).fetchall()
    if not matched:
        return False
    select, params = rows_select(["ref", "doi"], [(r, f"doi:{d.lower()}") for r, d in matched])
    con.execute(f"CREATE OR REPLACE TEMP TABLE matched_refs AS {select}", params)
    unkeyed = "SELECT value FROM mentions WHERE type = 'REFERENCE' AND key IS NULL"
    _keys(con, "ref_keys", unkeyed, reference_id)
    return True


def _matched_entities(con: duckdb.DuckDBPyConnection) -> None:
    """A reference string that ``kbx resolve`` matched to a DOI names that DOI: its entity."""
    if _matched(con):
        con.execute(
            """INSERT INTO entities SELECT DISTINCT doi, 'DOI', substr(doi, 5), 'identifier',
                   NULL FROM matched_refs WHERE doi NOT IN (SELECT entity_id FROM entities)"""
        )
        con.execute("DROP TABLE matched_refs; DROP TABLE ref_keys")


def _matched_links(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """The passages holding a reference string matched to a DOI link to the DOI's entity
    (the mentions stay as recognized)."""
    if _matched(con):
        con.execute(
            f"""INSERT INTO links SELECT DISTINCT pl.doc_id, pl.unit_id, r.doi, true
               FROM mentions m JOIN ref_keys rk ON rk.x = m.value
               JOIN matched_refs r ON r.ref = rk.k
               JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
               WHERE m.type = 'REFERENCE' AND m.key IS NULL AND {within(scoped)}"""
        )
        con.execute("DROP TABLE matched_refs; DROP TABLE ref_keys")


def _keys(
    con: duckdb.DuckDBPyConnection, name: str, values: str, key: Callable[[str], str]
) -> None:
    """TEMP TABLE ``name`` (x, k): each distinct string the query ``values`` selects, with
    ``key(x)``. The layer's keys (slugs, reference keys) are made by the very functions
    Python uses, never by SQL copies that drift; not registered in DuckDB either, where a
    Python function lives in the database's catalog but dies with the connection that
    registered it."""
    xs = con.execute(f"SELECT DISTINCT x FROM ({values}) t(x) WHERE x IS NOT NULL").fetchall()
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} (x VARCHAR, k VARCHAR)")
    if xs:
        select, params = rows_select(["x", "k"], [(x, key(x)) for (x,) in xs])
        con.execute(f"INSERT INTO {name} {select}", params)


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild entities, aliases, links, passage dates and passage quantities, whole."""
    with transaction(con):
        for table in (*LAYER, BASIS):
            con.execute(f"DELETE FROM {table}")
        document_rows(con, False, corpus_rows(con))
        built(con, digest(con))


def corpus_rows(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Fill the emptied entities, aliases and basis from the whole corpus, and leave TEMP
    TABLE ``person_map`` (``merge_people``); returns, per resolved work, the entities its
    citing passages also name."""
    con.execute(
        """INSERT INTO entities SELECT entry_id, type, name, 'gazetteer', NULL FROM gazetteer
           WHERE retracted_at IS NULL"""
    )
    con.execute(
        """INSERT INTO aliases SELECT entry_id, unnest(aliases) FROM gazetteer
           WHERE retracted_at IS NULL"""
    )
    _pinned(con)
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
    _matched_entities(con)
    con.execute(
        """INSERT INTO aliases SELECT DISTINCT key, text FROM mentions
           WHERE key IS NOT NULL AND recognizer NOT IN ('gazetteer', 'references')"""
    )
    merge_people(con)
    con.execute(f"INSERT INTO {BASIS} SELECT 'person', key, entity_id FROM person_map")
    cited = _resolved(con)
    if cited:
        select, params = rows_select(
            ["part", "k", "v"], [("cited", w, json.dumps(o)) for w, o in cited.items()]
        )
        con.execute(f"INSERT INTO {BASIS} {select}", params)
    _authors(con)
    return cited


def document_rows(con: duckdb.DuckDBPyConnection, scoped: bool, cited: dict) -> None:
    """Fill the links, authorship, passage dates and quantities of every document, or with
    ``scoped`` of the scope's alone (``entities/scope.py``: the caller deleted their old
    rows), from the corpus-wide rows, the basis, ``cited`` and TEMP TABLE ``person_map``
    (dropped here)."""
    _matched_links(con, scoped)
    signed(con, scoped)
    con.execute(  # each document's written authors, as the basis says who they are
        f"""CREATE OR REPLACE TEMP TABLE doc_authors AS
           SELECT DISTINCT d.doc_id, b.v AS entity_id
           FROM (SELECT doc_id, unnest(authors) AS w FROM documents WHERE status = 'ok') d
           JOIN {BASIS} b ON b.part = 'author' AND b.k = d.w
           WHERE {within(scoped, "d.doc_id")}"""
    )
    con.execute("INSERT INTO links SELECT doc_id, NULL, entity_id, true FROM doc_authors")
    con.execute("INSERT INTO authored SELECT doc_id, NULL, entity_id FROM doc_authors")
    con.execute("DROP TABLE doc_authors")
    con.execute(
        f"""INSERT INTO links
           SELECT pl.doc_id, pl.unit_id, coalesce(pm.entity_id, m.key),
                  bool_or(coalesce({FILTER_GRADE}, false))
           FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
           LEFT JOIN recognizer_info r ON r.name = m.recognizer
           LEFT JOIN person_map pm ON pm.key = m.key
           WHERE m.key IS NOT NULL AND {within(scoped)}
           GROUP BY ALL"""
    )
    _cited_by(con, cited, scoped)
    if not scoped:  # a scoped build is refused where a model found names (incremental.py)
        _names(con)
    _carried(con, scoped)
    con.execute(  # one row per passage and entity, filtering if any source can
        f"""CREATE OR REPLACE TEMP TABLE merged AS
           SELECT doc_id, unit_id, entity_id, bool_or(filter) AS filter FROM links
           WHERE {within(scoped, "doc_id")} GROUP BY ALL"""
    )
    con.execute(f"DELETE FROM links WHERE {within(scoped, 'doc_id')}")
    con.execute("INSERT INTO links SELECT * FROM merged")
    con.execute("DROP TABLE merged; DROP TABLE person_map")
    _dates(con, scoped)
    _quantities(con, scoped)


def built(con: duckdb.DuckDBPyConnection, inputs: str) -> None:
    """Inside the build's transaction: the layer is current (no mark, no stale document,
    this ``LAYER_VERSION``, corpus-wide rows from ``inputs``: ``digest``), and its facets'
    arrays of an older generation."""
    con.execute("DELETE FROM kbx_meta WHERE key = ?", [ENTITIES_DIRTY])
    con.execute("DELETE FROM layer_stale")
    set_meta(con, LAYER_KEY, LAYER_VERSION)
    set_meta(con, INPUTS_KEY, inputs)
    facet_arrays.touched(con)


HANDLE = re.compile(r"[\t\n\f\r ]*\([^)]*\)[\t\n\f\r ]*\Z")  # "(@yosuke-furukawa)" at the end


def _authors(con: duckdb.DuckDBPyConnection) -> None:
    """Documents' authors: an alias of a gazetteer entry when one matches, else a person of
    their own. "Yosuke Furukawa (@yosuke-furukawa)" is Yosuke Furukawa; the handle stays
    an alias. Each name as written and its entity go to the basis, by which
    ``document_rows`` links the documents that name it. Read and matched here: the layer
    is rebuilt on every write, and in SQL this took ten statements."""
    written = {
        (w, HANDLE.sub("", w, count=1).strip(" "))
        for (w,) in con.execute(
            "SELECT DISTINCT unnest(authors) FROM documents WHERE status = 'ok'"
        ).fetchall()
        if w.strip(" ")
    }
    if not written:
        return  # no document names its authors
    owners = _owners(con, {x for pair in written for x in pair})
    decided, labels = [], {}  # labels: each new person by the least of its names
    for w, author in written:
        found = owners.get(author, set()) | owners.get(w, set())
        entity_id = min(found) if len(found) == 1 else f"person:{slug(author)}"
        decided.append((w, author, entity_id))
        labels[entity_id] = min(labels.get(entity_id, author), author)
    select, params = rows_select(["entity_id", "label"], list(labels.items()))
    con.execute(
        f"""INSERT INTO entities SELECT entity_id, 'PERSON', label, 'author', NULL
           FROM ({select}) WHERE entity_id NOT IN (SELECT entity_id FROM entities)""",
        params,
    )
    aliases = {(e, x) for w, author, e in decided for x in (author, w)}
    select, params = rows_select(["entity_id", "alias"], sorted(aliases))
    con.execute(f"INSERT INTO aliases {select} EXCEPT SELECT entity_id, alias FROM aliases", params)
    select, params = rows_select(["part", "k", "v"], [("author", w, e) for w, _, e in decided])
    con.execute(f"INSERT INTO {BASIS} {select}", params)


def _owners(con: duckdb.DuckDBPyConnection, texts: set[str]) -> dict[str, set[str]]:
    """Per text, the known entities (not a model's bare names) with it as an alias, case
    aside (``owner_of``'s rule, for texts given in Python: a name is its entity's when the
    set is one)."""
    return {
        x: set(ids)
        for x, ids in con.execute(
            """SELECT t.x, list(DISTINCT a.entity_id) FROM (SELECT unnest(?) AS x) t
               JOIN aliases a ON lower(a.alias) = lower(t.x)
               WHERE NOT starts_with(a.entity_id, 'name:') GROUP BY t.x""",
            [sorted(texts)],
        ).fetchall()
    }


def _pinned(con: duckdb.DuckDBPyConnection) -> None:
    """A pinned alias (``kbx gazetteer add --pin``) is the pinning entry's alone in the
    entity layer: the other entries sharing it lose it here (the gazetteer keeps it), so
    names written so link to the one entry."""
    pinned = pins(con)
    if not pinned:
        return
    select, params = rows_select(["alias", "entity_id"], list(pinned.items()))
    con.execute(
        f"""DELETE FROM aliases WHERE EXISTS (
               SELECT 1 FROM ({select}) p
               WHERE p.alias = lower(aliases.alias) AND p.entity_id <> aliases.entity_id)""",
        params,
    )


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
        work = summary(got.get("crossref"), got.get("openalex"))
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


def _cited_by(con: duckdb.DuckDBPyConnection, cited: dict[str, list[str]], scoped: bool) -> None:
    """A passage citing a resolved work names its authors and venue too."""
    pairs = [(work, other) for work, others in cited.items() for other in others]
    if not pairs:
        return
    select, params = rows_select(["work", "other"], pairs)
    con.execute(
        f"""INSERT INTO links SELECT l.doc_id, l.unit_id, p.other, l.filter
            FROM links l JOIN ({select}) p ON p.work = l.entity_id
            WHERE {within(scoped, "l.doc_id")}""",
        params,
    )


# When a name a model found is precise enough to filter on. A small model on technical text
# is mostly noise ("Python" as a PERSON in 553 passages), so a name filters only when
# something confirms it: it is an alias of a known entity (a gazetteer entry, an author, a
# resolved work's author), or its document names it at least twice (in two places: see
# entities/positions.py), always as one type, and it is no technical term: not made only of
# words the corpus writes as code (entities/vocabulary.py), and, in a document that shows
# code, a person's name of two words or more (there 4% of a news model's organisations and
# 12% of its one-word persons were right, and every two-word person: docs/BENCHMARKS.md).
# A person's name the model found in shouted text (a licence's "ANY KIND WHATSOEVER", its
# capitals all around the name) is confirmed by nothing the document repeats: there every
# word is capitalized, so the model reads any as a name, and a licence shouts its words twice;
# nor is one word in capitals in mixed-case text (EPIPE, ARFLAGS of a changelog).
CONFIRMED = """(NOT starts_with(p.entity_id, 'name:')
    OR (e.k >= 2 AND e.types = 1 AND NOT e.code AND NOT (p.type = 'PERSON' AND p.shouted)
        AND (NOT e.shows_code OR (p.type = 'PERSON' AND contains(p.s, ' ')))))"""
# Shouted: the name and its line around it (60 characters either side) have no lower case;
# or the name is one word in capitals where its line has lower case: an identifier or a
# constant (ARFLAGS, EPIPE), as a person's name is written there in mixed case.
SHOUTED = r"""(NOT regexp_matches(
    regexp_extract(substr(u.text, greatest(n.start_char - 59, 1), least(n.start_char, 60)),
                   '[^\n]*$')
    || regexp_extract(substr(u.text, n.start_char + 1, length(n.text) + 60), '^[^\n]*'),
    '\p{Ll}') OR regexp_matches(n.surface, '^\p{Lu}[\p{Lu}\d_]+$'))"""


# One name, one thing: the type the corpus gives a name no entity claims, when at least two
# thirds of its mentions agree (the same rule as within a document, annotate/names.py): the
# model calls one maintainer a person in 40 places and a place in 3, and he is one person.
# A closer vote leaves each type its own entity (a company and a fruit, both "Apple").
VOTED = """
    SELECT s.x, s.k, v.type AS voted FROM name_slugs s LEFT JOIN (
        SELECT k, arg_max(type, n) AS type FROM (
            SELECT s.k, n.type, count(*) AS n FROM named n JOIN name_slugs s ON s.x = n.surface
            WHERE n.entity_id IS NULL GROUP BY ALL)
        GROUP BY k HAVING 3 * max(n) >= 2 * sum(n)) v ON v.k = s.k"""


# ``owner_of`` for each name of ``m`` (its surface and text in lower case), in equality
# joins: the entity of a pair is the one known entity with either as an alias. As a
# correlated ``IN`` it was a nested loop of every name by every alias: 1.4 s of CPU for a
# changelog of 23,000 names by 7,700 signers, where this takes milliseconds. A signer's name
# of one word ("intrigeri", or a wrong one: "Linux" of "GNU/Linux <…>") owns no model's name
# by its spelling alone: the word is anyone's, and it would take every "Linux" of the corpus
# (652 passages of 126 documents); the signer keeps the mentions that sign.
OWNERS = """
    pairs AS (SELECT DISTINCT lower(surface) AS s, lower(text) AS t FROM m),
    owned AS (SELECT DISTINCT lower(a.alias) AS a, a.entity_id FROM aliases a
              JOIN entities e USING (entity_id)
              WHERE NOT starts_with(a.entity_id, 'name:')
                AND NOT (e.source = 'byline' AND NOT contains(trim(a.alias), ' '))),
    held AS (SELECT p.s, p.t, o.entity_id FROM pairs p JOIN owned o ON o.a = p.s
             UNION
             SELECT p.s, p.t, o.entity_id FROM pairs p JOIN owned o ON o.a = p.t),
    owners AS (SELECT s, t, CASE WHEN count(DISTINCT entity_id) = 1 THEN min(entity_id) END
                   AS entity_id
               FROM held GROUP BY s, t)"""


def _names(con: duckdb.DuckDBPyConnection) -> None:
    """Names from NER (mentions with no key from recognizers that find names), as their
    document reads them (``NAMES``: carried, typed and completed by the document context):
    an alias of a known entity links to it (a gazetteer entry, an author), whatever type
    the model gave it; any other name is a facet value of its own, ``name:TYPE:surface``,
    which filters only when ``CONFIRMED``."""
    if not con.execute("SELECT 1 FROM recognizer_info WHERE names LIMIT 1").fetchone():
        return  # no model that finds names has run (rule-based recognizers only)
    con.execute(  # as each document reads them: "Clinton" after "Bill Clinton" is him there
        f"""CREATE OR REPLACE TEMP TABLE named AS
           WITH m AS (
               SELECT m.doc_id, m.unit_hash, m.start_char, m.type, m.text, m.surface, m.how,
                      {FILTER_GRADE} AS grade
               FROM ({NAMES}) m JOIN recognizer_info r ON r.name = m.recognizer AND r.names),
           {OWNERS}
           SELECT m.*, o.entity_id FROM m
           LEFT JOIN owners o ON o.s = lower(m.surface) AND o.t = lower(m.text)"""
    )
    if not con.execute("SELECT 1 FROM named LIMIT 1").fetchone():
        con.execute("DROP TABLE named")
        return  # the models named nothing: seven statements less
    position_table(con)
    con.execute(  # a name cut short ("Pozuelo Monfort") inside one that signs is the signer
        """UPDATE named SET entity_id = k.entity_id FROM (
               SELECT m.unit_hash, m.start_char, m.end_char, coalesce(pm.entity_id, m.key)
                   AS entity_id
               FROM mentions m LEFT JOIN person_map pm ON pm.key = m.key
               WHERE m.type = 'PERSON' AND starts_with(m.key, 'person:')) k
           WHERE named.entity_id IS NULL AND k.unit_hash = named.unit_hash
             AND k.start_char <= named.start_char
             AND named.start_char + length(named.text) <= k.end_char"""
    )
    link_spellings(con)  # "Jeremy Bícha", "Remove Andreas Henriksson": the signer
    _keys(con, "name_slugs", "SELECT surface FROM named WHERE entity_id IS NULL", slug)
    con.execute(  # any other name is one of its own, of the type the corpus gives it
        f"""UPDATE named
           SET entity_id = 'name:' || lower(coalesce(s.voted, named.type)) || ':' || s.k
           FROM ({VOTED}) s WHERE named.entity_id IS NULL AND s.x = named.surface"""
    )
    con.execute(  # labelled by its most written surface; of two as written, the first
        """INSERT INTO entities
           SELECT entity_id, upper(split_part(entity_id, ':', 2)),
                  first(surface ORDER BY n DESC, surface), 'name', NULL
           FROM (SELECT entity_id, surface, count(*) AS n FROM named
                 WHERE entity_id NOT IN (SELECT entity_id FROM entities) GROUP BY ALL)
           GROUP BY entity_id"""
    )
    con.execute(
        """INSERT INTO aliases SELECT DISTINCT entity_id, surface FROM named
           WHERE starts_with(entity_id, 'name:')"""
    )
    _coded(con)
    con.execute(  # a model's name filters only with evidence; unconfirmed, it boosts
        f"""INSERT INTO links
           WITH shown AS (  -- documents that show code
               SELECT DISTINCT pl.doc_id FROM placements pl JOIN units u USING (unit_id)
               WHERE u.kind = 'code' OR u.code_spans IS NOT NULL),
           placed AS (
               SELECT pl.doc_id, pl.unit_id, n.entity_id, n.grade, n.type, n.how,
                      lower(n.surface) AS s, coalesce(p.chain, pl.ordinal) AS chain,
                      coalesce(p.base, 0) + n.start_char AS pos,
                      pl.doc_id IN (SELECT doc_id FROM shown) AS shows_code,
                      {SHOUTED} AS shouted, n.type = 'PERSON' AND NOT contains(n.surface, ' ')
                          AND {OPENS} AS opener
               FROM named n JOIN units u USING (unit_hash)
               JOIN placements pl ON pl.unit_id = u.unit_id AND pl.doc_id = n.doc_id
               LEFT JOIN positions p ON p.doc_id = pl.doc_id AND p.ordinal = pl.ordinal),
           seen AS (  -- places in the document: a name in the overlap of two windows, or
                      -- found there by two recognizers, is named once. Named twice: the
                      -- long form found twice, or its short form ("Clinton" carried from
                      -- "Bill Clinton") found twice, as before the context carried it; not
                      -- once each ("Tera Term", then "Term"), nor by a short form where the
                      -- document shows code (one-word persons there are mostly noise:
                      -- "Gaussian" of "Gaussian Mixture Model"). A name the document wrote
                      -- in is no place (the model did not see it there); a retyped one was
                      -- found as two types, so it is not one type. A one-word person's name
                      -- where a line or sentence opens, where any word is capitalized, is no
                      -- place either: "* Convert package build to dh" names no one (CoNLL
                      -- held-out PERSON precision 0.863 -> 0.924, one right name fewer)
               SELECT doc_id, s, shows_code,
                      greatest(count(DISTINCT (chain, pos)) FILTER (how IN ('found', 'typed')
                                                                    AND NOT opener),
                               count(DISTINCT (chain, pos)) FILTER (how = 'carried'
                                                                    AND NOT shows_code)) AS k,
                      count(DISTINCT type) + bool_or(how = 'typed')::INTEGER AS types,
                      s IN (SELECT s FROM coded) AS code
               FROM placed GROUP BY doc_id, s, shows_code)
           SELECT p.doc_id, p.unit_id, p.entity_id, bool_or(p.grade AND {CONFIRMED})
           FROM placed p JOIN seen e USING (doc_id, s)
           GROUP BY p.doc_id, p.unit_id, p.entity_id"""
    )
    _not_names(con)
    for table in ("named", "name_slugs", "positions", "coded"):
        con.execute(f"DROP TABLE {table}")


# Whether a mention at ``n.start_char`` of ``u.text`` opens a line or a sentence, where any
# word is capitalized (annotate/names.py ``_opens``, over the 40 characters before it).
OPENS = r"""regexp_matches(
    substr(u.text, greatest(n.start_char - 39, 1), least(n.start_char, 40)),
    '(?:^|\n|[.!?:;]\s)[\W\d]*$')"""


# The weekday and month words of a written date, as a model takes them for a name: the
# weekdays and their abbreviations, the months' abbreviations only (May, June and April
# name people too), from the dates recognizer's own words.
CALENDAR = (
    frozenset(WEEKDAYS)
    | {d[:3] for d in WEEKDAYS}
    | {"tues", "thur", "thurs"}
    | (frozenset(MONTHS) - set(MONTH_NAMES))
)


def _not_names(con: duckdb.DuckDBPyConnection) -> None:
    """A one-word name a model found only where any word is capitalized ("Older entries
    have been removed", "* Convert the package") is a word that opens a line, not a name,
    when nothing confirms it or its documents write it in lower case too; a person's name
    with no word of two letters ("C++") is none either, nor one of only a date's weekday
    and month words ("Thu Mar" of "Thu Mar 5 10:12:00 2009", as changelogs date entries):
    no entity."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE openers AS
            WITH opening AS (
                SELECT n.entity_id, lower(any_value(n.surface)) AS w
                FROM named n JOIN units u USING (unit_hash)
                WHERE starts_with(n.entity_id, 'name:') AND NOT contains(n.surface, ' ')
                GROUP BY n.entity_id HAVING bool_and({OPENS}))
            SELECT entity_id FROM opening o
            WHERE entity_id NOT IN (SELECT entity_id FROM links WHERE filter)
               OR EXISTS (  -- or written in lower case where it is named ("convert")
                   SELECT 1 FROM named n JOIN placements pl USING (doc_id)
                   JOIN units u ON u.unit_id = pl.unit_id
                   WHERE n.entity_id = o.entity_id AND contains(u.text, ' ' || o.w || ' '))"""
    )
    wordless = [  # a person's name has a word: "C++" is no one
        (e,)
        for e, surface in con.execute(
            "SELECT DISTINCT entity_id, surface FROM named WHERE starts_with(entity_id, "
            "'name:person:')"
        ).fetchall()
        if not words(surface) or set(words(surface)) <= CALENDAR
    ]
    if wordless:
        select, params = rows_select(["entity_id"], wordless)
        con.execute(f"INSERT INTO openers {select}", params)
    for table in ("links", "aliases", "entities"):
        con.execute(f"DELETE FROM {table} WHERE entity_id IN (SELECT entity_id FROM openers)")
    con.execute("DROP TABLE openers")


def _coded(con: duckdb.DuckDBPyConnection) -> None:
    """A temporary table ``coded(s)`` of the names (lower case) made only of words the
    corpus writes as code."""
    surfaces = [s for (s,) in con.execute("SELECT DISTINCT lower(surface) FROM named").fetchall()]
    parts = {s: words(s) for s in surfaces}
    found = code_words(con, {w for ws in parts.values() for w in ws})
    coded = [(s,) for s, ws in parts.items() if ws and all(w in found for w in ws)]
    select, params = rows_select(["s"], coded)
    con.execute(f"CREATE OR REPLACE TEMP TABLE coded AS {select}", params)


SHORT_FORM_TYPES = ("ORG", "PERSON", "GPE", "FAC", "PRODUCT", "PROJECT", "SOFTWARE", "EVENT")


def long_names(con: duckdb.DuckDBPyConnection, docs: str) -> list[tuple]:
    """``(doc_id, first ordinal, key, type, text, filter)`` of each keyed name of two words
    or more, of a type with short forms, in the documents the SQL predicate ``docs`` (over
    ``pl.doc_id``) admits: the names ``_carried`` carries."""
    return con.execute(  # as precise as its own link in that document
        f"""SELECT pl.doc_id, min(pl.ordinal), m.key, e.type, m.text,
                   bool_or(coalesce({FILTER_GRADE}, false))
            FROM mentions m LEFT JOIN recognizer_info r ON r.name = m.recognizer
            JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
            JOIN entities e ON e.entity_id = m.key
            WHERE e.type IN {SHORT_FORM_TYPES} AND contains(m.text, ' ') AND {docs}
            GROUP BY ALL"""
    ).fetchall()


def _carried(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """Link the short forms of a keyed name (a gazetteer entry's, an identifier's) to its
    entity in the passages of the same document from its first full mention on (one sense
    per discourse), unless the short form is another entity's alias. A model's names are
    carried by the document context (``annotate/names.py``), which reads them in place."""
    rows = long_names(con, within(scoped))
    if not rows:
        return  # no keyed name of two words or more
    # per document, each short form with the keys it stands for: (first ordinal, key, grade)
    wanted: dict[int, dict[str, list[tuple[int, str, bool]]]] = {}
    owners = dict(  # a bare NER name ("Apple", unlinked) does not own its surface
        con.execute(
            "SELECT alias, min(entity_id) FROM aliases WHERE NOT starts_with(entity_id, 'name:') "
            "GROUP BY 1"
        ).fetchall()
    )
    for doc_id, first, key, type_, text, grade in rows:
        short = short_form(text, type_)
        if short and owners.get(short, key) == key:
            wanted.setdefault(doc_id, {}).setdefault(short, []).append((first, key, grade))
    if not wanted:
        return
    found = set()
    finders = {doc_id: Words(shorts) for doc_id, shorts in wanted.items()}  # one pass a unit
    for doc_id, ordinal, unit_id, text in con.execute(
        """SELECT pl.doc_id, pl.ordinal, pl.unit_id, u.text FROM placements pl
           JOIN units u USING (unit_id) WHERE list_contains(?, pl.doc_id)""",
        [list(wanted)],
    ).fetchall():
        for short in {text[a:b] for a, b in finders[doc_id].spans(text)}:
            for first, key, grade in wanted[doc_id][short]:
                if ordinal >= first:
                    found.add((doc_id, unit_id, key, grade))  # as precise as its long form
    found -= set(
        con.execute(
            f"SELECT doc_id, unit_id, entity_id, filter FROM links WHERE {within(scoped, 'doc_id')}"
        ).fetchall()
    )
    if found:
        select, params = rows_select(["doc_id", "unit_id", "entity_id", "filter"], list(found))
        con.execute(f"INSERT INTO links {select}", params)


def _dates(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """Document dates, and the calendar dates each passage mentions (a relative date as
    resolved in its document) or its section gives it (``entities/sections.py``), as day
    intervals. A document dated only by the first date
    written at its top (``annotate/context.py``) whose passages carry dates of their own
    in two places or more (a changelog's entries, a log) has no date of its own here: its
    newest entry's date is no date of its other entries (``--date-from any`` would give
    every passage of it that year). Its top passage keeps the date as a mention."""
    rows = con.execute(
        "SELECT doc_id, NULL, doc_date FROM documents WHERE status = 'ok' AND doc_date IS NOT NULL"
        f" AND {within(scoped, 'doc_id')}"
    ).fetchall()
    written = {
        d for (d,) in con.execute(
            "SELECT doc_id FROM doc_context WHERE recognizer = 'dates'"
        ).fetchall()
    }  # fmt: skip
    mentioned = con.execute(
        f"""SELECT DISTINCT pl.doc_id, pl.unit_id, coalesce(dm.value, m.value)
            FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
            JOIN recognizer_info r ON r.name = m.recognizer AND {FILTER_GRADE}
            LEFT JOIN doc_mentions dm ON dm.doc_id = pl.doc_id AND dm.unit_hash = m.unit_hash
                AND dm.recognizer = m.recognizer AND dm.version = m.version
                AND dm.start_char = m.start_char
            WHERE m.type IN {DATE_TYPES} AND {within(scoped)}"""
    ).fetchall()
    mentioned += section_dates(con, DATE_TYPES, within(scoped))
    spans = {v: interval(v) for v in {r[2] for r in rows + mentioned}}
    dated = Counter(d for d, u in {(d, u) for d, u, v in mentioned if spans[v]})
    rows = [r for r in rows if not (r[0] in written and dated[r[0]] >= 2)] + mentioned
    out = list({(d, u, *spans[v]) for d, u, v in rows if spans[v]})
    if out:
        select, params = rows_select(["doc_id", "unit_id", "lo", "hi"], out)
        con.execute(f"INSERT INTO passage_dates {select}", params)


def _quantities(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """The quantities each passage mentions, from recognizers precise enough to filter: one
    row per distinct value, read once in Python (``stored``) and joined back by value."""
    values = con.execute(
        f"""SELECT DISTINCT m.type, m.value FROM mentions m
            JOIN recognizer_info r ON r.name = m.recognizer AND {FILTER_GRADE}
            JOIN units u USING (unit_hash)
            WHERE m.type IN {QUANTITY_TYPES} AND m.value IS NOT NULL
              AND {units_within(scoped)}"""
    ).fetchall()
    rows = [(t, v, *q) for t, v in values if (q := stored(t, v))]
    if not rows:
        return
    select, params = rows_select(["type", "value", "dimension", "unit", "lo", "hi"], rows)
    con.execute(
        f"""INSERT INTO passage_quantities
            SELECT DISTINCT u.unit_id, q.dimension, q.unit, q.lo, q.hi
            FROM mentions m JOIN recognizer_info r ON r.name = m.recognizer AND {FILTER_GRADE}
            JOIN ({select}) q ON q.type = m.type AND q.value = m.value
            JOIN units u USING (unit_hash) WHERE {units_within(scoped)}""",
        params,
    )


@dataclass
class Repair:
    """What the consistency step found and fixed."""

    swept: int = 0
    replayed: int = 0


def repair(con: duckdb.DuckDBPyConnection, index: Index, settle_layer: bool = True) -> Repair:
    """Sweep orphaned units, replay the gazetteer log, and rebuild an entity layer an
    earlier run left stale (so even a command that then refuses its arguments repairs);
    cheap when nothing is wrong. ``settle_layer=False``: the caller settles at its end
    (and on a refusal), so the layer is not built twice (``kbx index``)."""
    done = Repair(swept=sweep(con), replayed=journal.sync(con, index.journal_path))
    if settle_layer:
        settle(con)
    return done


def settle(con: duckdb.DuckDBPyConnection) -> bool:
    """Bring the entity layer level with the writes since it was built: the stale
    documents' rows alone where the writes were documents' and the rest is unchanged
    (``entities/incremental.py``), else whole (a write that is not a document's, an older
    kbx's layer: ``LAYER_VERSION``); and its facets' arrays with it where a reader will map
    them (``worth_mapping``). Returns whether it did."""
    from kbx.entities.incremental import update  # it builds with this module's statements

    built = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [LAYER_KEY]).fetchone()
    dirty = con.execute("SELECT value FROM kbx_meta WHERE key = ?", [ENTITIES_DIRTY]).fetchone()
    if dirty is None and built == (LAYER_VERSION,):
        return False
    if dirty == (DIRTY_ALL,) or built != (LAYER_VERSION,) or update(con) is None:
        refresh(con)
    if worth_mapping(con):
        facet_arrays.refresh(con)
    return True
