"""One person per person: the names that sign with an address, merged by what they share.

A byline recognizer (``recognizers/bylines.py``) keys each signing name ``person:SLUG`` and
each address ``email:ADDRESS``; a name written right beside an address (``Name <mail>``,
``mail (Name)``) signs with it. A person signs under two spellings with one address
("Moritz Muehlenhoff", "Moritz Mühlenhoff") or with two addresses under one spelling
(``jbicha@debian.org``, ``jbicha@ubuntu.com``, one key): two names that sign with one
address and share a word of three letters or more are one person, and the names linked
that way are one connected group, one entity. A mailing list's address, beside the names
of many people, joins none of them. It is the gazetteer entry that has
one of its names as an alias, when exactly one does (a person people curated stays
theirs), else ``person:SLUG`` of its most written name, labelled with that name; its
addresses are listed in its ``meta``. The address stays an entity of its own (EMAIL).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict

import duckdb

from kbx.entities.lookup import FILTER_GRADE
from kbx.entities.scope import within
from kbx.entities.vocabulary import words
from kbx.gazetteer.entries import slug
from kbx.store.db import rows_select

# A signing name beside its address: the address opens right after the name (" <", '" <')
# or the name in parentheses right after the address (" (").
_BESIDE = """e.start_char BETWEEN p.end_char AND p.end_char + 3
             OR p.start_char BETWEEN e.end_char AND e.end_char + 3"""


def signing(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, list[str] | None, int]]:
    """``(key, surface, addresses beside it, mentions)`` of each signing name as written,
    in a stable order: all that ``merge_people`` decides by."""
    return con.execute(
        f"""SELECT p.key, p.value, list_sort(list(DISTINCT e.key) FILTER (WHERE e.key IS NOT NULL)),
                   count(*)
            FROM mentions p LEFT JOIN mentions e ON e.unit_hash = p.unit_hash
                AND e.recognizer = p.recognizer AND starts_with(e.key, 'email:')
                AND ({_BESIDE})
            WHERE p.type = 'PERSON' AND starts_with(p.key, 'person:')
            GROUP BY p.key, p.value ORDER BY p.key, p.value"""
    ).fetchall()


def merge_people(con: duckdb.DuckDBPyConnection) -> None:
    """Fold the ``person:`` entities of one person into one and leave the TEMP TABLE
    ``person_map(key, entity_id)``: each person key the layer links by its group's entity
    (empty when no name signs)."""
    con.execute("CREATE OR REPLACE TEMP TABLE person_map (key VARCHAR, entity_id VARCHAR)")
    rows = signing(con)
    if not rows:
        return
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    written: dict[str, Counter] = defaultdict(Counter)  # person key -> its surfaces
    signers: dict[str, set[str]] = defaultdict(set)  # address -> the person keys beside it
    for key, surface, addresses, n in rows:
        written[key][surface or key] += n
        for address in addresses or []:
            signers[address].add(key)
    named = {k: {w for s in c for w in words(s) if len(w) > 2} for k, c in written.items()}
    for keys in signers.values():  # a list's address is shared by people of other names
        for a, b in itertools.combinations(sorted(keys), 2):
            if named[a] & named[b]:
                parent[find(a)] = find(b)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in written:
        groups[find(key)].append(key)
    addresses: dict[str, set[str]] = defaultdict(set)
    for address, keys in signers.items():
        for key in keys:
            addresses[find(key)].add(address.removeprefix("email:"))
    curated = _curated(con, {s for c in written.values() for s in c})
    mapping, labels = [], []
    for root, keys in groups.items():
        surfaces = sum((written[k] for k in keys), Counter())
        owners = {curated[s] for s in surfaces if s in curated}
        name, _ = min(surfaces.items(), key=lambda x: (-x[1], x[0]))
        by_key = {k: sum(written[k].values()) for k in keys}
        main = min(owners) if len(owners) == 1 else min(by_key, key=lambda k: (-by_key[k], k))
        mapping += [(k, main) for k in keys]
        emails = sorted(addresses[root])
        if main.startswith("person:"):
            labels.append((main, name, json.dumps({"emails": emails}) if emails else None))
    select, params = rows_select(["key", "entity_id"], mapping)
    con.execute(f"INSERT INTO person_map {select}", params)
    con.execute(  # the group's other names are its aliases; their own entities go
        """INSERT INTO aliases SELECT DISTINCT m.entity_id, a.alias FROM aliases a
           JOIN person_map m ON m.key = a.entity_id WHERE m.key <> m.entity_id
           EXCEPT SELECT entity_id, alias FROM aliases"""
    )
    con.execute(
        """DELETE FROM aliases WHERE entity_id IN
           (SELECT key FROM person_map WHERE key <> entity_id)"""
    )
    con.execute(
        """DELETE FROM entities WHERE entity_id IN
           (SELECT key FROM person_map WHERE key <> entity_id)"""
    )
    if labels:
        select, params = rows_select(["entity_id", "label", "meta"], labels)
        con.execute(
            f"""UPDATE entities SET type = 'PERSON', label = x.label, meta = x.meta,
                    source = 'byline'
                FROM ({select}) x WHERE entities.entity_id = x.entity_id""",
            params,
        )


def link_spellings(con: duckdb.DuckDBPyConnection) -> None:
    """Link a model's names (TEMP TABLE ``named``, unlinked rows) that are a signer's name
    up to accents and case ("Jeremy Bícha" for Jeremy Bicha), or that with one word at
    either end that no signer's name has ("Remove Andreas Henriksson", "Colin Watson
    Closes": a line's verb glued on) are: the signer, not a name of its own. A signer's
    name of one word takes none: the word is anyone's ("Linux" would take every "Linux"
    of the corpus), as for an alias (``OWNERS`` in ``entities/build.py``)."""
    signers = {
        key.removeprefix("person:"): entity_id
        for key, entity_id in con.execute(
            """SELECT DISTINCT m.key, coalesce(pm.entity_id, m.key) FROM mentions m
               LEFT JOIN person_map pm ON pm.key = m.key
               WHERE m.type = 'PERSON' AND starts_with(m.key, 'person:')"""
        ).fetchall()
    }
    if not signers:
        return
    named = {w for k in signers for w in k.split("-")}  # the words of signers' names
    found = []
    for (surface,) in con.execute(
        "SELECT DISTINCT surface FROM named WHERE entity_id IS NULL"
    ).fetchall():
        parts = slug(surface).split("-")
        for rest, extra in ((parts, None), (parts[1:], parts[0]), (parts[:-1], parts[-1])):
            if len(rest) > 1 and extra not in named and (owner := signers.get("-".join(rest))):
                found.append((surface, owner))
                break
    if found:
        select, params = rows_select(["surface", "entity_id"], found)
        con.execute(
            f"""UPDATE named SET entity_id = x.entity_id FROM ({select}) x
                WHERE named.entity_id IS NULL AND named.surface = x.surface""",
            params,
        )


def _curated(con: duckdb.DuckDBPyConnection, surfaces: set[str]) -> dict[str, str]:
    """Per surface, the one gazetteer entry with it as an alias (case aside), if one."""
    return {
        s: ids[0]
        for s, ids in con.execute(
            """SELECT t.s, list(DISTINCT a.entity_id) FROM (SELECT unnest(?) AS s) t
               JOIN aliases a ON lower(a.alias) = lower(t.s)
               JOIN entities e ON e.entity_id = a.entity_id AND e.source = 'gazetteer'
               GROUP BY t.s""",
            [sorted(surfaces)],
        ).fetchall()
        if len(ids) == 1
    }


def signed(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """Who wrote which passages, from the names that sign them (AUTHOR mentions, as
    ``person_map`` folds them): one that ``closes`` wrote its document from the line after
    the signature before it (a changelog's entry, a commit), one that ``opens`` wrote its
    passage and those after it, up to the next that opens or the next closing signature
    (a byline, an article's authors, a Debian entry's ``[ Name ]`` block). Filter-grade
    recognizers only; written to ``authored`` for the documents of the build
    (``entities/scope.py``)."""
    rows = con.execute(
        rf"""SELECT pl.doc_id, pl.ordinal, coalesce(pm.entity_id, m.key), m.value,
                   regexp_full_match(substr(u.text, m.end_char + 1), '[^\n]*\s*')
            FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
            JOIN recognizer_info r ON r.name = m.recognizer AND {FILTER_GRADE}
            LEFT JOIN person_map pm ON pm.key = m.key
            WHERE m.type = 'AUTHOR' AND m.key IS NOT NULL AND {within(scoped)}
            ORDER BY pl.doc_id, pl.ordinal, m.start_char"""
    ).fetchall()
    if not rows:
        return
    by_doc: dict[int, list[tuple]] = defaultdict(list)
    for doc_id, *rest in rows:
        by_doc[doc_id].append(tuple(rest))
    units: dict[int, list[int]] = defaultdict(list)  # each document's units, in order
    for doc_id, unit_id in con.execute(
        "SELECT doc_id, unit_id FROM placements WHERE list_contains(?, doc_id) "
        "ORDER BY doc_id, ordinal",
        [list(by_doc)],
    ).fetchall():
        units[doc_id].append(unit_id)
    out = set()
    for doc_id, signs in by_doc.items():
        placed = units[doc_id]
        start = 0  # where the text a closing signature signs begins
        openers = sorted({o for o, _, role, _ in signs if role == "opens"})
        for i, (ordinal, entity_id, role, last) in enumerate(signs):
            if role == "closes":
                out.update((doc_id, u, entity_id) for u in placed[start : ordinal + 1])
                start = ordinal + 1 if last else ordinal
            elif role == "opens":  # a Debian block's "[ Name ]" ends with its entry
                end = next((o for o in openers if o > ordinal), len(placed))
                closing = next((s[0] for s in signs[i + 1 :] if s[2] == "closes"), end)
                out.update((doc_id, u, entity_id) for u in placed[ordinal : min(end, closing + 1)])
    select, params = rows_select(["doc_id", "unit_id", "entity_id"], sorted(out))
    con.execute(f"INSERT INTO authored {select}", params)
