"""One entity per person: signers merged by address and spelling, a model's names of them
linked to them, one type per name across the corpus, and names that cannot filter say so."""

from __future__ import annotations

import re

import duckdb
import pytest
from helpers import attached

from kbx.entities import gazetteer as gz
from kbx.entities.lookup import entities, entity
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.bylines import BylineRecognizer
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.filters import Filters
from kbx.search.grep import grep
from kbx.store.db import Index

# What a news model does on these files: a signer typed as a place, a name cut short, a
# verb at a line's opening taken for a person, one name typed two ways across documents.
MODEL = {
    "Jordi Mallach": "GPE",
    "Mallach": "PERSON",
    "Older": "PERSON",
    "Zorbo Quux": "PERSON",
    "Wim Quux": None,  # typed by file: see Names
    "Lone Name": "PERSON",
    "C++": "PERSON",
}


class Names:
    """A model's names, as they arrive: no key, ``names``; "Wim Quux" an ORG in b.txt."""

    info = RecognizerInfo(name="names", version="1", types=("PERSON", "GPE", "ORG"), names=True)

    def recognize(self, texts):
        pattern = re.compile("|".join(sorted(map(re.escape, MODEL), key=len, reverse=True)))
        out = []
        for t in texts:
            found = []
            for m in pattern.finditer(t):
                type_ = MODEL[m.group()] or ("ORG" if "org-doc" in t else "PERSON")
                found.append(Mention(*m.span(), type_, m.group()))
            out.append(found)
        return out


FILES = {
    "a.txt": "pkg (1.1) unstable; urgency=medium\n\n  * Fix. Jordi Mallach tested it; Zorbo "
    "Quux too.\n\n -- Jordi Mallach <jordi@debian.org>  Wed, 30 Nov 2022 18:22:03 +0100\n\n"
    "pkg (1.0) unstable; urgency=low\n\n  * Older entries have been removed; Jordi Mallach "
    "helped.\n\n"
    " -- Moritz Muehlenhoff <jmm@debian.org>  Tue, 01 Feb 2022 10:00:00 +0100\n",
    "b.txt": "org-doc\n\nWe met Wim Quux and Zorbo Quux; Wim Quux and Lone Name agreed. We "
    "like C++ and C++.\n\n"
    " -- Moritz Mühlenhoff <jmm@debian.org>  Mon, 03 Jan 2022 10:00:00 +0100\n\n"
    "Older entries have been removed.\n",
    "c.txt": "Jordi Mallach wrote; Zorbo Quux and Zorbo Quux replied, as did Wim Quux and "
    "Wim Quux.\n\n -- Jordi Mallach <jordi@ubuntu.com>  Fri, 05 May 2023 10:00:00 +0200\n",
}


@pytest.fixture(scope="module")
def idx(tmp_path_factory) -> Index:
    root = tmp_path_factory.mktemp("people")
    for name, text in FILES.items():
        (root / name).write_text(text)
    index(root, registry=Registry([BylineRecognizer(), DateRecognizer(), Names()]))
    return Index.for_root(root)


def _ids(idx: Index, sql: str, params=()) -> set:
    with attached(idx.db) as con:
        return set(con.execute(sql, list(params)).fetchall())


def test_one_person_under_two_spellings_or_two_addresses(idx):
    people = _ids(idx, "SELECT entity_id, label, meta FROM entities WHERE type = 'PERSON' "
                       "AND source = 'byline'")  # fmt: skip
    assert people == {
        ("person:jordi-mallach", "Jordi Mallach",
         '{"emails": ["jordi@debian.org", "jordi@ubuntu.com"]}'),
        ("person:moritz-muehlenhoff", "Moritz Muehlenhoff", '{"emails": ["jmm@debian.org"]}'),
    }  # fmt: skip
    assert ("person:moritz-muehlenhoff", "Moritz Mühlenhoff") in _ids(
        idx, "SELECT entity_id, alias FROM aliases"
    )
    emails = _ids(idx, "SELECT entity_id, type FROM entities WHERE type = 'EMAIL'")
    assert emails == {(f"email:{a}", "EMAIL") for a in
                      ("jordi@debian.org", "jordi@ubuntu.com", "jmm@debian.org")}  # fmt: skip


def test_a_models_names_of_a_signer_link_to_the_signer(idx):
    linked = _ids(
        idx,
        "SELECT d.path, l.filter FROM links l JOIN documents d USING (doc_id) "
        "WHERE l.entity_id = 'person:jordi-mallach'",
    )
    assert linked == {("a.txt", True), ("c.txt", True)}
    assert not _ids(idx, "SELECT 1 FROM entities WHERE entity_id LIKE 'name:%mallach%'")
    for written in ("Jordi Mallach", "jordi mallach", "Moritz Mühlenhoff"):
        got = grep(idx, "<", filters=Filters(entities=[written]))
        assert got.matches  # one entity: never "names 2 entities"


def test_one_type_per_name_across_the_corpus(idx):
    names = _ids(idx, "SELECT entity_id FROM entities WHERE source = 'name'")
    # "Zorbo Quux": PERSON everywhere; "Wim Quux": PERSON 2, ORG 2, no two-thirds vote
    assert {"name:person:zorbo-quux", "name:person:wim-quux", "name:org:wim-quux"} <= {
        e for (e,) in names
    }
    assert "name:person:older" not in {e for (e,) in names}  # a line's opening word
    assert "name:person:c" not in {e for (e,) in names}  # "C++", twice: no one's name


def test_a_name_nothing_confirms_refuses_to_filter_and_is_listed_last(idx):
    with pytest.raises(BadArgument, match="cannot filter"):
        grep(idx, "agreed", filters=Filters(entities=["Lone Name"]))
    rows = entities(idx, limit=100)
    flags = [r.confirmed for r in rows]
    assert flags == sorted(flags, reverse=True)
    assert [r.confirmed for r in rows if r.label == "Lone Name"] == [False]


def test_a_curated_entry_takes_the_signer(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text(FILES["a.txt"])
    idx = Index.for_root(root)
    index(root, registry=Registry([BylineRecognizer()]))
    gz.add(idx, "Jordi Mallach", "PERSON", ["Jordi Mallach"], entry_id="Q7")
    linked = _ids(idx, "SELECT DISTINCT entity_id FROM links WHERE entity_id LIKE 'person:j%' "
                       "OR entity_id = 'Q7'")  # fmt: skip
    assert linked == {("Q7",)}  # the person's names are the entry's: no person of their own


def _lines(idx: Index, **asked) -> set[tuple[str, int]]:
    got = grep(idx, r"<\S+@\S+>", filters=Filters(**asked))
    return {(m.path, m.start_line) for m in got.matches}


def test_author_keeps_what_a_person_signed_entity_what_names_them(idx):
    # each Debian entry is a section of its own, signed by its closing line
    assert _lines(idx, authors=["Jordi Mallach"]) == {("a.txt", 5), ("c.txt", 3)}
    named = {("a.txt", 5), ("a.txt", 11), ("c.txt", 3)}  # he helped with the 1.0 entry
    assert _lines(idx, entities=["Jordi Mallach"]) == named
    moritz = ["Moritz Mühlenhoff"]  # one person under both spellings
    assert _lines(idx, authors=moritz) == {("a.txt", 11), ("b.txt", 5)}
    assert _lines(idx, authors=moritz, after="2022-02", before="2022-02") == {("a.txt", 11)}
    # a changelog's newest date is no date of its older entries
    assert _lines(idx, authors=moritz, after="2022-11", before="2022-11") == set()
    with attached(idx.db) as con:
        written = con.execute(
            "SELECT DISTINCT u.heading_path[1] FROM authored a JOIN units u USING (unit_id) "
            "JOIN documents d USING (doc_id) "
            "WHERE a.entity_id = 'person:jordi-mallach' AND d.path = 'a.txt'"
        ).fetchall()
    assert written == [("pkg (1.1) unstable; urgency=medium",)]


def test_an_index_of_schema_8_reads_its_text_files_again_and_gains_authorship(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text(FILES["a.txt"])
    (root / "note.md").write_text("# Note\n\nBy the sea.\n")
    registry = Registry([BylineRecognizer(), DateRecognizer()])
    index(root, registry=registry)
    idx = Index.for_root(root)
    con = duckdb.connect(str(idx.db))  # as kbx wrote it at schema 8
    con.execute("DROP TABLE authored")
    con.execute("UPDATE kbx_meta SET value = '8' WHERE key = 'schema_version'")
    con.close()
    report = index(root, registry=registry)
    assert (report.unchanged, report.updated) == (1, 1)  # the Markdown file is not read again
    assert _lines(idx, authors=["Jordi Mallach"]) == {("a.txt", 5)}


def test_an_entity_lists_its_mentions_under_every_spelling(idx):
    written = {m["text"] for m in entity(idx, "Moritz Mühlenhoff").mentions}
    assert written == {"Moritz Muehlenhoff", "Moritz Mühlenhoff"}
    wim = {(m["path"], m["text"]) for m in entity(idx, "name:person:zorbo-quux").mentions}
    assert wim == {("a.txt", "Zorbo Quux"), ("b.txt", "Zorbo Quux"), ("c.txt", "Zorbo Quux")}


def test_a_lists_address_joins_no_two_people(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "log.txt").write_text(
        "pkg (2) unstable; urgency=low\n\n  * B.\n\n"
        " -- Alice Smith <team@lists.example.org>  Mon, 03 Jan 2022 10:00:00 +0100\n\n"
        "pkg (1) unstable; urgency=low\n\n  * A.\n\n"
        " -- Bob Jones <team@lists.example.org>  Mon, 03 Jan 2021 10:00:00 +0100\n"
    )
    index(root, registry=Registry([BylineRecognizer()]))
    idx = Index.for_root(root)
    people = _ids(idx, "SELECT entity_id, meta FROM entities WHERE type = 'PERSON'")
    assert people == {
        ("person:alice-smith", '{"emails": ["team@lists.example.org"]}'),
        ("person:bob-jones", '{"emails": ["team@lists.example.org"]}'),
    }


class Model:
    """A model that names what ``names`` lists, each as its type, wherever it is written."""

    def __init__(self, name: str, names: dict[str, str]):
        self.names = names
        self.pattern = re.compile("|".join(names))
        self.info = RecognizerInfo(name=name, version="1", types=tuple(sorted(set(names.values()))),
                                   names=True)  # fmt: skip

    def recognize(self, texts):
        return [[Mention(*m.span(), self.names[m.group()], m.group())
                 for m in self.pattern.finditer(t)] for t in texts]  # fmt: skip


def test_shouted_names_and_a_one_word_signers_word_are_not_that_person(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "COPYING").write_text(
        "THE SOFTWARE IS PROVIDED WITHOUT WARRANTY OF ANY KIND WHATSOEVER.\n\n"
        "IN NO EVENT SHALL THE AUTHORS BE LIABLE FOR ANY DAMAGES WHATSOEVER.\n\n"
        "Ada Byron wrote it. Ada Byron signs it.\n"
    )
    (root / "changelog").write_text(" -- Linux <linux@x.org>  Mon, 01 Jan 2024 10:00:00 +0100\n")
    (root / "notes.txt").write_text("It runs on Linux.\n\nLinux is a kernel.\n")
    (root / "NEWS").write_text("A write now fails with EPIPE.\n\nRetry on EPIPE, as before.\n")
    shouted = {"WHATSOEVER": "PERSON", "Linux": "ORG", "Ada Byron": "PERSON", "EPIPE": "PERSON"}
    index(root, registry=Registry([BylineRecognizer(), Model("shouted", shouted)]))
    idx = Index.for_root(root)
    confirmed = {r.label: r.confirmed for r in entities(idx, limit=100)}
    assert confirmed["WHATSOEVER"] is False  # twice, but in capitals all around
    assert confirmed["Ada Byron"] is True  # twice in ordinary text: confirmed as before
    assert confirmed["EPIPE"] is False  # one word in capitals amid lower case: a constant
    linked = _ids(idx, "SELECT d.path FROM links l JOIN documents d USING (doc_id) "
                       "WHERE l.entity_id = 'person:linux'")  # fmt: skip
    assert linked == {("changelog",)}  # where it signs; not every "Linux" of the corpus


def test_a_dates_weekday_and_month_are_no_person(tmp_path):
    """spaCy named "Thu Mar" and "Thu Aug" of changelog dates as people, confirmed by
    their repetition: the most passages of any wrong person on 150 unseen doc folders."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "ChangeLog").write_text(
        "Thu Mar 5 10:12:00 2009  Jane Roe\n\n\tFix the build.\n\n"
        "Thu Mar 12 09:00:00 2009  Jane Roe\n\n\tJune Carter reported it; June Carter tested.\n"
    )
    index(root, registry=Registry([Model("dated", {"Thu Mar": "PERSON", "June Carter": "PERSON"})]))
    labels = {r.label for r in entities(Index.for_root(root), limit=100)}
    assert "Thu Mar" not in labels and "June Carter" in labels  # a month's name can be one


def test_a_one_word_name_only_where_a_line_opens_is_confirmed_by_nothing(tmp_path):
    """spaCy's "Convert" of changelog items ("* Convert package build to dh") was a
    confirmed person, named twice; where every word opening a line is capitalized, a
    one-word name there is no evidence of a name (CoNLL held-out PERSON precision 0.863
    -> 0.924, one right name fewer)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "changelog").write_text(
        "pkg (1.1-1) unstable; urgency=medium\n\n  * Convert package build to dh.\n"
        "  * Convert to source format 3.0 (quilt).\n  * Thanks to Hilda for testing, and\n"
        "    to Hilda again for the review.\n"
    )
    index(root, registry=Registry([Model("openers", {"Convert": "PERSON", "Hilda": "PERSON"})]))
    confirmed = {r.label: r.confirmed for r in entities(Index.for_root(root), limit=100)}
    assert confirmed.get("Convert") is not True and confirmed["Hilda"] is True
