"""Faceted search: entities, types, dates, metadata and paths narrow search and grep; facet
counts describe every match; anything unknown is an error with suggestions."""

from __future__ import annotations

import re

import duckdb
import pytest
from helpers import Words, registry_with_gazetteer

from kbx.entities import gazetteer as gz
from kbx.entities.lookup import entities
from kbx.errors import BadArgument
from kbx.gazetteer.entries import slug
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.registry import Registry
from kbx.search.filters import Filters
from kbx.search.grep import grep
from kbx.search.search import search
from kbx.store.db import Index, mark_dirty
from kbx.store.schema import _V1, SCHEMA_VERSION


def _paths(idx: Index, query: str, **filters) -> set[str]:
    return {h.path for h in search(idx, query, k=100, exact=0, filters=Filters(**filters)).hits}


def test_identifier_entities_filter_by_id_and_by_name(posts):
    assert _paths(posts, "fixes", entities=["cve:CVE-2021-3449"]) == {"posts/2021-openssl.md"}
    assert _paths(posts, "fixes", entities=["CVE-2023-0286"]) == {"posts/2023-openssl.md"}
    assert _paths(posts, "kernel", entities=["doi:10.1145/1629575.1629596"]) == {
        "posts/2023-release.md"
    }
    # two entities: both must be named
    assert _paths(posts, "fixes", entities=["CVE-2021-3449", "CVE-2023-0286"]) == set()


def test_authors_are_person_entities_of_the_whole_document(posts):
    assert _paths(posts, "cedar openssl", entities=["Ann Lee"]) == {
        "posts/2021-openssl.md",
        "posts/2023-release.md",
    }
    assert _paths(posts, "openssl", entities=["person:bo-chen"]) == {"posts/2023-openssl.md"}
    assert _paths(posts, "openssl", types=["PERSON"]) == {
        "posts/2021-openssl.md",
        "posts/2023-openssl.md",
    }


def test_authors_in_any_script_are_distinct_people(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for i, name in enumerate(["山田太郎", "Иван Петров", "José Núñez"]):
        (root / f"{i}.md").write_text(f"---\nauthor: {name}\n---\n# Note {i}\n\nA note.\n")
    index(root, registry=registry_with_gazetteer(Index.for_root(root)))
    people = {e.entity_id for e in entities(Index.for_root(root), type_="PERSON")}
    assert people == {"person:山田太郎", "person:иван-петров", "person:jose-nunez"}


def test_an_author_and_a_gazetteer_entry_of_one_name_share_its_slug(tmp_path):
    # compatibility forms (ligature, digraph) fold in Python's NFKD; an SQL copy kept them
    root = tmp_path / "docs"
    root.mkdir()
    names = ["Ǆemal ﬁsher", "²nd Author"]
    for i, name in enumerate(names):
        (root / f"{i}.md").write_text(f"---\nauthor: {name}\n---\n# Note {i}\n\nA note.\n")
    index(root, registry=registry_with_gazetteer(Index.for_root(root)))
    people = {e.entity_id for e in entities(Index.for_root(root), type_="PERSON")}
    assert (
        people
        == {"person:" + slug(n) for n in names}
        == {"person:dzemal-fisher", "person:2nd-author"}
    )


def test_a_write_in_progress_is_said_while_the_layer_is_stale(posts):
    def notes() -> list[str]:
        return search(posts, "openssl", facets=True).notes

    assert not any("being written" in n for n in notes())
    with posts.writer() as con:  # what every write does first, in its own transaction
        mark_dirty(con)
    assert any("entity, type and date filters" in n for n in notes())
    assert any(
        "being written" in n for n in search(posts, "x", filters=Filters(after="2021")).notes
    )
    # the next writing command rebuilds the layer (one with nothing else to do: the recognizers
    # posts was built with)
    index(posts.root, registry=registry_with_gazetteer(posts))
    assert not any("being written" in n for n in notes())


def test_a_gazetteer_alias_joins_an_author_to_its_entry(posts):
    gz.add(posts, "Ann Lee", "PERSON", ["A. Lee"], entry_id="Q42")
    assert _paths(posts, "release", entities=["A. Lee"]) == {"posts/2023-release.md"}


def test_unknown_and_ambiguous_names_are_errors_with_suggestions(posts):
    with pytest.raises(BadArgument, match=r"no entity named 'Ann Le'; did you mean 'Ann Lee'"):
        _paths(posts, "x", entities=["Ann Le"])
    gz.add(posts, "Apple Inc.", "ORG", ["Apple"], entry_id="Q312")
    gz.add(posts, "Apple Records", "ORG", ["Apple Corps"], entry_id="Q213710")
    gz.add(posts, "Apple Fan", "PERSON", entry_id="Q999")  # the author's name, now an alias
    with pytest.raises(BadArgument, match="unknown mention type 'planet'; choose from .*DOI"):
        _paths(posts, "x", types=["planet"])
    assert _paths(posts, "orchard", entities=["apple"]) == {"posts/apple.md"}
    con = duckdb.connect(str(posts.db))
    con.execute("INSERT INTO aliases VALUES ('Q213710', 'Apple')")  # a second owner of "Apple"
    con.close()
    with pytest.raises(BadArgument, match=r"'Apple' names 2 entities: Q213710 .*; Q312 "):
        _paths(posts, "orchard", entities=["Apple"])


def test_a_short_form_carries_its_entity_within_the_document(posts, tmp_path):
    gz.add(posts, "Apple Inc.", "ORG", entry_id="Q312")  # "Apple" alone is no alias
    assert _paths(posts, "bus", entities=["Q312"]) == {"posts/apple.md"}
    hits = search(posts, "bus", filters=Filters(entities=["Q312"])).hits
    assert [h.heading_path[-1] for h in hits] == ["The bus"]
    # another document that says only "Apple" is not linked
    other = tmp_path / "posts-root" / "posts" / "pie.md"
    other.write_text("# Pie\n\nApple pie for the bus ride.\n")
    index(other.parents[1], registry=registry_with_gazetteer(posts))
    assert _paths(posts, "bus", entities=["Q312"]) == {"posts/apple.md"}


def test_dates_count_the_passage_and_its_document(posts):
    # 2023-openssl.md is dated 2023 and mentions 4 March 2019
    assert _paths(posts, "openssl", after="2023") == {"posts/2023-openssl.md"}
    assert _paths(posts, "openssl", after="2019", before="2019") == {"posts/2023-openssl.md"}
    assert _paths(posts, "openssl", after="2019", before="2019", date_from="document") == set()
    assert _paths(posts, "openssl", before="2022", date_from="document") == {
        "posts/2021-openssl.md"
    }
    assert _paths(posts, "openssl", after="2019-03-04", before="2019-03-04",
                  date_from="mentioned") == {"posts/2023-openssl.md"}  # fmt: skip
    # the release note mentions no date; its document's counts
    assert _paths(posts, "ships", after="2023-06", before="2023-06") == {"posts/2023-release.md"}
    for bad, message in [
        ({"after": "21"}, "--after '21': give a date as YYYY"),
        ({"before": "2021-13"}, "--before '2021-13'"),
        ({"after": "2022", "before": "2021"}, "--after 2022 is later than --before 2021"),
        ({"after": "2019-03-05", "before": "2019-03-04"}, "is later than"),
        ({"after": "2021", "date_from": "written"}, "--date-from 'written': choose from"),
    ]:
        with pytest.raises(BadArgument, match=message):
            _paths(posts, "openssl", **bad)


@pytest.mark.parametrize(
    ("after", "before", "paths"),
    [
        # --before D is inclusive at the precision written: the day, month or year D
        (None, "2021-05-01", {"posts/2021-openssl.md"}),  # the document's own day
        (None, "2021-04-30", set()),
        (None, "2021-05", {"posts/2021-openssl.md"}),
        (None, "2021-04", set()),
        (None, "2021", {"posts/2021-openssl.md"}),
        (None, "2020", set()),
        # --after D --before D: on D
        ("2021-05-01", "2021-05-01", {"posts/2021-openssl.md"}),
        ("2021-05-02", "2021-05-02", set()),
        ("2023-02", "2023-02", {"posts/2023-openssl.md"}),
        ("2023", "2023", {"posts/2023-openssl.md"}),
        ("2021", "2023", {"posts/2021-openssl.md", "posts/2023-openssl.md"}),
        # a year ends on 31 December, a month on its last day (December and February too)
        ("2020-12", "2021-02", set()),
    ],
)
def test_before_is_inclusive_and_after_with_before_the_same_means_on_that_date(
    posts, after, before, paths
):
    assert _paths(posts, "openssl", after=after, before=before, date_from="document") == paths


def test_metadata_fields_filter_and_unknown_ones_say_what_exists(posts):
    assert _paths(posts, "openssl cedar", meta=["category=vulnerability"]) == {
        "posts/2021-openssl.md",
        "posts/2023-openssl.md",
    }
    assert _paths(posts, "openssl cedar", meta=["category!=vulnerability"]) == {
        "posts/2023-release.md"
    }
    assert _paths(posts, "orchard", meta=["tags=TECH"]) == {"posts/apple.md"}  # a list field
    with pytest.raises(BadArgument, match="no document has the metadata field 'topic'; fields: "):
        _paths(posts, "x", meta=["topic=a"])
    with pytest.raises(BadArgument, match="values of category: vulnerability"):
        _paths(posts, "x", meta=["category=vulnerabilty"])
    with pytest.raises(BadArgument, match="write KEY=VALUE"):
        _paths(posts, "x", meta=["category"])


def test_grep_takes_the_same_filters(posts):
    g = grep(posts, r"CVE-\d+-\d+", filters=Filters(after="2023", date_from="document"))
    assert [m.match for m in g.matches] == ["CVE-2023-0286"]
    g = grep(posts, "OpenSSL", filters=Filters(entities=["Bo Chen"], path="posts/*"))
    assert {m.path for m in g.matches} == {"posts/2023-openssl.md"}


def test_boost_only_mentions_raise_scores_instead_of_filtering(posts):
    reg = registry_with_gazetteer(posts)
    reg.register(Words())  # boost-only WORD mentions of "cedar"
    reprocess(posts, reg)
    plain = search(posts, "release ships", k=10, exact=0).hits
    boosted = search(posts, "release ships", k=10, exact=0, filters=Filters(types=["WORD"])).hits
    assert {h.path for h in boosted} == {h.path for h in plain}  # nothing filtered out
    score = {h.path: h.score for h in plain}
    (cedar,) = [h for h in boosted if "Cedar" in h.text]
    assert cedar.score == pytest.approx(score[cedar.path] * 1.5, rel=1e-3)


class Products:
    """Finds "Cedar" as a PRODUCT, boost-only as spaCy's PRODUCT is."""

    info = RecognizerInfo(
        name="products", version="1", types=("PRODUCT",), boost_types=("PRODUCT",)
    )

    def recognize(self, texts):
        return [
            [Mention(m.start(), m.end(), "PRODUCT", "Cedar") for m in re.finditer("Cedar", t)]
            for t in texts
        ]


def test_a_type_only_boost_grade_recognizers_find_boosts_with_a_gazetteer_present(posts):
    gz.add(posts, "OpenSSL", "SOFTWARE")  # the gazetteer holds no PRODUCT entry
    reg = registry_with_gazetteer(posts)
    reg.register(Products())
    reprocess(posts, reg)
    plain = search(posts, "release ships", k=10, exact=0).hits
    asked = search(posts, "release ships", k=10, exact=0, filters=Filters(types=["PRODUCT"])).hits
    assert asked and {h.path for h in asked} == {h.path for h in plain}  # boosted, not dropped
    gz.add(posts, "Cedar Suite", "PRODUCT")  # now a filter-grade source of PRODUCT exists
    narrowed = search(posts, "release ships", k=10, exact=0, filters=Filters(types=["PRODUCT"]))
    assert len(narrowed.hits) < len(plain)  # a filter now: only gazetteer PRODUCTs count
    assert all("Cedar Suite" in h.text for h in narrowed.hits)


def test_facets_count_every_match_not_only_those_shown(posts):
    gz.add(posts, "OpenSSL", "SOFTWARE")
    r = search(posts, "openssl", k=1, facets=True)
    f = r.facets
    assert len(r.hits) == 1 and f.passages == 2
    by_id = {v["entity_id"]: v["count"] for v in f.entities.values}
    assert by_id["gz:openssl"] == 2
    assert by_id["person:ann-lee"] == 1 and by_id["person:bo-chen"] == 1
    types = {v["type"]: v["count"] for v in f.types.values}
    assert types["SOFTWARE"] == 2 and types["CVE"] == 2 and types["DATE"] == 1
    years = {v["year"]: v["count"] for v in f.years.values}
    assert years == {2021: 1, 2023: 1, 2019: 1}
    assert (f.first_date, f.last_date) == ("2019-03-04", "2023-02-01")
    narrowed = search(posts, "openssl", facets=True, filters=Filters(after="2023")).facets
    assert narrowed.passages == 1
    assert {v["year"] for v in narrowed.years.values} == {2023}  # only the dates it kept
    assert narrowed.first_date >= "2023-01-01"


def test_a_version_1_index_is_migrated(tmp_path):
    root = tmp_path / "old"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSee doi:10.1145/1629575.1629596.\n")
    (root / ".kbx").mkdir()
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"))
    con.execute(_V1)
    con.execute("INSERT INTO kbx_meta VALUES ('schema_version', '1'), ('root', ?)", [str(root)])
    con.close()
    index(root)
    assert _paths(Index.for_root(root), "see", entities=["doi:10.1145/1629575.1629596"]) == {"a.md"}
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True)
    assert con.execute("SELECT value FROM kbx_meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    con.close()


class People:
    """A name recognizer as noisy as a small model: every capitalized word is a PERSON."""

    info = RecognizerInfo(name="people", version="1", types=("PERSON",), names=True)

    def recognize(self, texts):
        return [
            [
                Mention(m.start(), m.end(), "PERSON", m.group())
                for m in re.finditer(r"\b[A-Z]\w+(?: [A-Z]\w+)*", t)
            ]
            for t in texts
        ]


def test_a_models_names_filter_only_with_evidence(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# notes\n\nwe wrote it in Python last year.\n")
    (root / "b.md").write_text("# minutes\n\nmet Okafor today.\n\nlater Okafor agreed.\n")
    (root / "c.md").write_text("# review\n\nasked Lindqvist once.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([People()]))
    gz.add(idx, "Lindqvist", "PERSON")  # a gazetteer entry confirms a name seen once
    reg = registry_with_gazetteer(idx)
    reg.register(People())
    reprocess(idx, reg)
    people = search(idx, "python okafor lindqvist", k=10, filters=Filters(types=["PERSON"]))
    assert {h.path for h in people.hits} == {"b.md", "c.md"}  # "Python" once: not confirmed
    facets = search(idx, "python okafor lindqvist", k=10, facets=True).facets
    assert {v["type"]: v["count"] for v in facets.types.values}["PERSON"] == len(people.hits)


def test_a_short_form_is_only_as_confirmed_as_its_long_form(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# notes\n\nopened Tera Term first.\n\nthe Term window froze.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([People()]))
    got = search(idx, "term", k=10, filters=Filters(types=["PERSON"]))
    assert got.hits == []  # named once: neither "Tera Term" nor its short form filters
