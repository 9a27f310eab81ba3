"""Wikidata entities imported into an index: the card's example end to end, provenance,
shared aliases that link to nothing until pinned, all or nothing, and re-imports."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import duckdb
import pytest
from helpers import die_at
from inprocess import run_cli
from wikidata_fixtures import ADA, APPLE, APPLE_CORPS, FRUIT, entity, write_dump, write_entity_data

from kbx.entities import gazetteer as gz
from kbx.entities import imports
from kbx.entities.imports import import_file
from kbx.entities.lookup import entity as entity_detail
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.store.db import Index

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'

DOCS = {
    "news/2022-suppliers.md": "---\ntitle: Supplier news\ndate: 2022-03-01\n---\n# Supplier\n\n"
    "Apple announced a new supplier approval process for its factories.\n",
    "news/2019-suppliers.md": "---\ntitle: Old news\ndate: 2019-03-01\n---\n# Old news\n\n"
    "Apple Computer reviewed its supplier approval process.\n",
    "farm/orchard.md": "---\ntitle: Orchard report\ndate: 2022-09-01\n---\n# Orchard report\n\n"
    "The apple trees passed the supplier approval for the new fertilizer; the apple "
    "harvest is up.\n",
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The documents indexed once; each test gets a copy (``root``)."""
    root = tmp_path_factory.mktemp("wikidata") / "root"
    for rel, text in DOCS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "kbx.toml").write_text(RULES_ONLY)
    assert run_cli("index", str(root)).returncode == 0
    return root


@pytest.fixture
def root(indexed, tmp_path):
    return shutil.copytree(indexed, tmp_path / "root")


def _hits(root, *args: str) -> list[str]:
    r = run_cli("search", "supplier approval", *args, "--json", cwd=root)
    assert r.returncode == 0, r.stderr
    return [h["path"] for h in json.loads(r.stdout)["hits"]]


def _table(root, sql: str):
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_cards_example_end_to_end(root, tmp_path):
    """After importing Q312 from Wikidata's JSON, ``--entity Q312 --after 2021`` finds the
    company in the documents of 2021 on, and not the apple trees of the orchard."""
    f = write_entity_data(tmp_path / "Q312.json", [APPLE])
    r = run_cli("gazetteer", "import", str(f), "--format", "wikidata", "--dump-date",
                "2024-05-01", "--by", "agent:t", "--json", cwd=root)  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["added"], report["read"], report["dump_date"]) == (1, 1, "2024-05-01")
    assert set(_hits(root)) == set(DOCS)  # the words are in all three
    assert _hits(root, "--entity", "Q312", "--after", "2021") == ["news/2022-suppliers.md"]
    assert set(_hits(root, "--entity", "Apple Computer")) == {
        "news/2019-suppliers.md",
        "news/2022-suppliers.md",
    }
    e = entity_detail(Index.for_root(root), "Q312")
    assert (e.type, e.label) == ("ORG", "Apple Inc.")
    assert set(e.aliases) == {"Apple Inc.", "Apple", "Apple Computer"}
    (log,) = e.provenance
    assert (log["action"], log["by"]) == ("add", "agent:t")
    assert log["note"] == "Wikidata Q312.json, dump of 2024-05-01"
    r = run_cli("entity", "Q312", cwd=root)
    assert "add by agent:t: Wikidata Q312.json, dump of 2024-05-01" in r.stdout


def test_a_shared_alias_links_to_neither_until_pinned(root, tmp_path):
    idx = Index.for_root(root)
    import_file(idx, write_dump(tmp_path / "a.json", [APPLE]))
    r = import_file(idx, write_dump(tmp_path / "b.json.gz", [APPLE_CORPS]))
    assert (r.added, r.shared_aliases) == (1, 1)
    assert r.shared == [{"alias": "apple", "entries": ["Q213710", "Q312"]}]
    assert _hits(root, "--entity", "Q312", "--after", "2021") == []  # "Apple": whose?
    assert _hits(root, "--entity", "Q312") == ["news/2019-suppliers.md"]  # "Apple Computer"
    with pytest.raises(BadArgument, match=r"'Apple' names 2 entities: Q213710 .*; Q312 "):
        entity_detail(idx, "Apple")

    r = run_cli("gazetteer", "add", "Apple", "--id", "Q312", "--type", "ORG", "--pin",
                "--by", "agent:t", cwd=root)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _hits(root, "--entity", "Q312", "--after", "2021") == ["news/2022-suppliers.md"]
    assert entity_detail(idx, "Apple").entity_id == "Q312"
    assert "Apple" not in entity_detail(idx, "Q213710").aliases  # in this index, Q312's
    assert "Apple" in gz.show(idx, "Q213710")["aliases"]  # the gazetteer keeps it

    (root / ".kbx" / "index.duckdb").unlink()  # the pin is a line of the log: it comes back
    assert run_cli("index", str(root)).returncode == 0
    assert _hits(root, "--entity", "Q312", "--after", "2021") == ["news/2022-suppliers.md"]


def test_a_hand_edit_still_refuses_a_taken_alias(root, tmp_path):
    idx = Index.for_root(root)
    import_file(idx, write_dump(tmp_path / "a.json", [APPLE]))
    with pytest.raises(BadArgument, match=r"'Apple' is already an alias of Q312 \(Apple Inc.\)$"):
        gz.add(idx, "Apple", "ORG", entry_id="Q213710")


def test_a_bad_line_imports_nothing_unless_skipped(root, tmp_path):
    f = write_dump(
        tmp_path / "d.json.bz2",
        [APPLE, "{not json", ADA, entity("Q1", {"fr": "x"}, classes=["Q5"])],
    )
    log = root / ".kbx" / "gazetteer.jsonl"
    before = log.read_bytes() if log.exists() else b""
    r = run_cli("gazetteer", "import", str(f), "-f", "wikidata", cwd=root)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "error: d.json.bz2: 2 bad entities, first at line 3: not JSON (Expecting property "
        "name enclosed in double quotes); nothing was imported (fix them, or pass --skip-bad "
        "to import the rest)"
    )
    assert _table(root, "SELECT count(*) FROM gazetteer") == [(0,)]
    assert (log.read_bytes() if log.exists() else b"") == before

    r = run_cli("gazetteer", "import", str(f), "-f", "wikidata", "--skip-bad", "--json", cwd=root)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["added"], report["bad"]) == (2, 2)
    assert [(b["line"], b["qid"]) for b in report["bad_lines"]] == [(3, None), (5, "Q1")]
    assert _table(root, "SELECT entry_id FROM gazetteer ORDER BY 1") == [("Q312",), ("Q7259",)]


def test_bad_arguments_are_one_line(root, tmp_path):
    for args, code, message in [
        (["nope.json", "-f", "wikidata"], 2, "error: no such file: nope.json"),
        (["x.json", "-f", "xml"], 2, "error: unknown format 'xml'; choose from wikidata, csv"),
        (["x.json", "--lang", "de"], 2, "error: --lang is for --format wikidata or csv"),
        (["x.json", "-f", "wikidata", "--dump-date", "May"], 2, "error: --dump-date 'May': "
         "write it as YYYY-MM-DD"),
    ]:  # fmt: skip
        (root / "x.json").write_text(json.dumps(APPLE))
        r = run_cli("gazetteer", "import", *args, cwd=root)
        assert (r.returncode, r.stderr.strip()) == (code, message), args


def test_a_reimport_adds_only_what_is_new(root, tmp_path):
    idx = Index.for_root(root)
    f = write_dump(tmp_path / "d.json", [APPLE, ADA, FRUIT])
    first = import_file(idx, f, default_type="PRODUCT")
    assert (first.added, first.unmapped) == (3, 0)
    again = import_file(idx, f, default_type="PRODUCT")
    assert (again.added, again.unchanged, again.merged) == (0, 3, 0)
    grown = entity("Q312", {"en": "Apple Inc."}, {"en": ["Apple Computer Company"]}, ["Q4830453"])
    r = import_file(idx, write_dump(tmp_path / "e.json", [grown]))
    assert (r.added, r.merged) == (0, 1)
    assert gz.show(idx, "Q312")["aliases"][-1] == "Apple Computer Company"
    gz.retract(idx, "Q7259", "ann", "not in these documents")
    person = entity("Q312", {"en": "Apple Inc."}, classes=["Q5"])
    r = import_file(idx, write_dump(tmp_path / "f.json", [ADA]))
    assert (r.retracted, r.added) == (1, 0)  # a retraction is not undone by a re-import
    with pytest.raises(BadArgument, match="line 2 .Q312.: Q312 is a ORG in the gazetteer, PERSON"):
        import_file(idx, write_dump(tmp_path / "g.json", [person]))


def test_a_dump_piped_on_standard_input(root, tmp_path, monkeypatch):
    """``lbzip2 -dc dump.json.bz2 | kbx gazetteer import - …``: bz2 arrives compressed or not."""
    data = write_dump(tmp_path / "d.json.bz2", [APPLE, ADA]).read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    idx = Index.for_root(root)
    with pytest.raises(BadArgument, match="reading standard input: give --dump-date"):
        import_file(idx, Path("-"))
    r = import_file(idx, Path("-"), dump_date="2024-05-01", only_types=["PERSON"])
    assert (r.file, r.added, r.filtered) == ("standard input", 1, 1)
    (log,) = entity_detail(idx, "Q7259").provenance
    assert log["note"] == "Wikidata standard input, dump of 2024-05-01"


def test_a_sparql_csv_imports_with_its_types(root, tmp_path):
    f = tmp_path / "query.csv"
    f.write_text(
        "qid,label,aliases,type\n"
        "http://www.wikidata.org/entity/Q312,Apple Inc.,Apple|Apple Computer,Q4830453\n"
        "Q7259,Ada Lovelace,,PERSON\n"
    )
    r = run_cli("gazetteer", "import", str(f), "--format", "csv", cwd=root)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("imported query.csv (SPARQL CSV, dump of ")
    assert _hits(root, "--entity", "Q312", "--after", "2021") == ["news/2022-suppliers.md"]


def test_an_import_killed_after_its_log_is_written_is_replayed(root, tmp_path):
    idx = Index.for_root(root)
    f = write_dump(tmp_path / "d.json", [APPLE, ADA])
    assert die_at("journal.appended", import_file, idx, f) == 137
    assert _table(root, "SELECT count(*) FROM gazetteer") == [(0,)]  # never committed
    r = run_cli("gazetteer", "add", "Fertilizer", "--type", "PRODUCT", "--by", "t", cwd=root)
    assert r.returncode == 0, r.stderr  # the next writer replays the log first
    assert _table(root, "SELECT entry_id FROM gazetteer ORDER BY 1") == [
        ("Q312",),
        ("Q7259",),
        ("gz:fertilizer",),
    ]
    assert _hits(root, "--entity", "Q312", "--after", "2021") == ["news/2022-suppliers.md"]


def test_an_import_killed_between_its_batches_leaves_nothing(root, tmp_path, monkeypatch):
    idx = Index.for_root(root)
    monkeypatch.setattr(imports, "BATCH", 1)  # one entity a batch, in the forked child too
    log = root / ".kbx" / "gazetteer.jsonl"
    before = log.read_bytes() if log.exists() else b""
    assert (
        die_at("import.batch:2", import_file, idx, write_dump(tmp_path / "d.json", [APPLE, ADA]))
        == 137
    )
    assert (log.read_bytes() if log.exists() else b"") == before  # no half import to replay
    r = run_cli("gazetteer", "list", "--json", cwd=root)
    assert json.loads(r.stdout) == {"entries": []}


def test_a_name_spacy_finds_under_a_shared_alias_lists_the_candidates(tmp_path):
    """The real spaCy pipeline: "Apple" as an ORG, shared by two entries, stays
    ``name:org:apple``, and ``kbx entity`` lists both as candidates."""
    root = tmp_path / "ner"
    root.mkdir()
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["gliner", "acronyms", "gazetteer"]\n')
    (root / "a.md").write_text(
        "# News\n\nApple said on Monday that Apple would open a store in Paris.\n"
    )
    idx = Index.for_root(root)
    index(root)
    import_file(idx, write_dump(tmp_path / "a.json", [APPLE, APPLE_CORPS]))
    e = entity_detail(idx, "name:org:apple")
    assert [c["entity_id"] for c in e.candidates] == ["Q213710", "Q312"]
    r = run_cli("entity", "name:org:apple", cwd=root)
    assert "not linked: 'Apple' is an alias of Q213710 (ORG Apple Corps), Q312" in r.stdout
    gz.add(idx, "Apple", "ORG", entry_id="Q312", pin=True)
    assert entity_detail(idx, "Apple").entity_id == "Q312"
    with pytest.raises(BadArgument, match="no entity named 'name:org:apple'"):
        entity_detail(idx, "name:org:apple")
