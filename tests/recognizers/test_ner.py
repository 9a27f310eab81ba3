"""Named entities: spaCy (the real en_core_web_sm pipeline) and GLiNER (a tiny model built
here, whose predictions are random: spans, offsets, batching, versions and storage are
checked, not accuracy); configuration through kbx.toml; names linked to entities."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest
from inprocess import run_cli

from kbx.annotate.plan import plan
from kbx.annotate.setup import registry_for
from kbx.config import load_config
from kbx.entities import gazetteer as gz
from kbx.errors import BadArgument, GlinerUnavailable, ModelMissing
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers import base
from kbx.recognizers.base import check_spans, surface
from kbx.recognizers.gliner_ner import GlinerRecognizer
from kbx.recognizers.registry import Registry
from kbx.recognizers.spacy_ner import BOOST_ONLY, VERSION, SpacyRecognizer
from kbx.search.filters import Filters
from kbx.search.search import search
from kbx.store.db import Index

TEXTS = [
    "Apple Inc. hired Ryan Dahl in San Francisco last spring.",
    "",
    "Nothing to see here.",
    "The Linux Foundation met in Berlin; Microsoft sent two engineers.",
]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """GLiNER remembers its weights' digests in the user's cache folder: each test has its
    own (kbx and the processes it starts), where every run added to ~/.cache/kbx."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def spacy_ner() -> SpacyRecognizer:
    return SpacyRecognizer()


def test_spacy_finds_names_with_exact_spans(spacy_ner):
    found = spacy_ner.recognize(TEXTS)
    assert len(found) == len(TEXTS) and found[1] == [] and found[2] == []
    for text, ms in zip(TEXTS, found, strict=True):
        check_spans(text, ms, "spacy")
    first = {(m.text, m.type) for m in found[0]}
    assert {("Apple Inc.", "ORG"), ("Ryan Dahl", "PERSON"), ("San Francisco", "GPE")} <= first
    assert all(m.type != "DATE" for ms in found for m in ms)  # left to the date recognizer
    assert {m.value for m in found[3]} >= {"Linux Foundation", "Berlin"}  # "The" dropped


def test_spacy_declares_its_model_and_what_only_boosts(spacy_ner):
    info = spacy_ner.info
    assert info.version.startswith(f"{VERSION}+en_core_web_sm") and info.version.endswith("3.8.0")
    assert set(info.boost_types) == set(BOOST_ONLY) and info.filter and info.names
    assert spacy_ner.load().pipe_names == ["ner"]  # tagger, parser and the rest do not run


def test_every_run_of_the_same_pipeline_shares_one_load(tmp_path, monkeypatch):
    """A server re-indexes on every change with recognizers built anew: the pipeline
    loads once per process, however many recognizers and runs there are."""
    import spacy

    calls, real = [], spacy.load
    monkeypatch.setattr(spacy, "load", lambda *a, **k: calls.append(a) or real(*a, **k))
    monkeypatch.setattr(base, "_LOADED", {})
    first, second = SpacyRecognizer(), SpacyRecognizer()
    assert first.load() is second.load() and len(calls) == 1
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nRyan Dahl wrote Node.js in Berlin.\n")
    index(root)
    (root / "a.md").write_text("# A\n\nRyan Dahl wrote Deno in Berlin.\n")
    report = index(root)
    assert "spacy" in {r.name for r in report.recognizers} and len(calls) == 1


def test_gliner_models_of_two_folders_are_two_models(tiny_gliner, tmp_path, monkeypatch):
    monkeypatch.setattr(base, "_LOADED", {})
    other = shutil.copytree(tiny_gliner, tmp_path / "other")
    (other / "gliner_config.json").write_text((other / "gliner_config.json").read_text() + " ")
    a = GlinerRecognizer(str(tiny_gliner), labels=["dataset"])
    b = GlinerRecognizer(str(tiny_gliner), labels=["software"], threshold=0.2)
    c = GlinerRecognizer(str(other), labels=["dataset"])
    assert a.load() is b.load()  # the labels and threshold are the call's, not the model's
    assert c.load() is not a.load()


def test_a_missing_spacy_model_names_what_to_install():
    with pytest.raises(ModelMissing, match="en_core_web_xl.*not installed.*kbx\\[ner\\]"):
        SpacyRecognizer("en_core_web_xl")


def test_kbx_toml_disables_and_configures_recognizers(tmp_path):
    (tmp_path / "kbx.toml").write_text(
        '[recognizers]\ndisable = ["quantities"]\n\n[recognizers.spacy]\nmodel = "nope_sm"\n'
    )
    registry = Registry.load(load_config(tmp_path))
    names = {r.info.name for r in registry}
    assert "quantities" not in names and "spacy" not in names
    (why,) = [w for n, w in registry.broken if n == "spacy"]
    assert "'nope_sm' (kbx.toml) is not installed" in why
    assert [n for n, _ in registry.off] == ["gliner"]  # no model configured: quietly off
    (tmp_path / "kbx.toml").write_text("[recognizers\n")
    with pytest.raises(BadArgument, match="kbx.toml: not valid TOML"):
        load_config(tmp_path)


def test_names_link_to_authors_and_gazetteer_entries_or_stand_alone(tmp_path, spacy_ner):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text(
        "---\nauthor: Ryan Dahl\n---\nRyan Dahl wrote Node.js. He met Microsoft engineers "
        "in Berlin.\n"
    )
    (root / "b.md").write_text("# Other\n\nMicrosoft opened an office in Berlin.\n")
    idx = Index.for_root(root)
    registry = registry_for(idx, Registry([spacy_ner]))
    index(root, registry=registry)
    gz.add(idx, "Microsoft Corporation", "ORG", ["Microsoft"], entry_id="Q2283")
    con = duckdb.connect(str(idx.db), read_only=True)
    links = con.execute(
        "SELECT d.path, l.entity_id FROM links l JOIN documents d USING (doc_id) "
        "WHERE l.unit_id IS NOT NULL ORDER BY ALL"
    ).fetchall()
    con.close()
    assert ("a.md", "person:ryan-dahl") in links  # the text's name is the author
    assert ("a.md", "name:gpe:berlin") in links and ("b.md", "name:gpe:berlin") in links
    # "Microsoft" is now a gazetteer alias: the gazetteer's own mention and spaCy's agree
    assert ("b.md", "Q2283") in links
    assert not any(e.startswith("name:org:microsoft") for _, e in links)
    with pytest.raises(BadArgument, match="cannot filter"):  # named once in each document:
        search(idx, "office", filters=Filters(entities=["Berlin"]))  # never all passages
    persons = search(idx, "engineers office", filters=Filters(types=["PERSON"])).hits
    assert [h.path for h in persons] == ["a.md"]


def test_search_says_when_ner_has_not_run_everywhere(tmp_path, spacy_ner):
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"d{i}.md").write_text(f"# D{i}\n\nBerlin office number {i}.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([spacy_ner]))
    con = duckdb.connect(str(idx.db))
    con.execute("DELETE FROM runs WHERE unit_hash IN (SELECT unit_hash FROM runs LIMIT 1)")
    con.close()
    r = search(idx, "office", facets=True)
    assert r.hits and r.notes == [
        "spacy has run on 2 of 3 passages; names in the rest are not searchable yet "
        "(run `kbx reprocess`)"
    ]
    reprocess(idx, Registry([spacy_ner]))
    assert search(idx, "office", facets=True).notes == []


def test_gliner_spans_batches_and_windows(tiny_gliner):
    g = GlinerRecognizer(str(tiny_gliner), labels=["dataset", "software"], threshold=0.0)
    long = "the kernel dataset " * 400  # longer than the model's window
    texts = ["the kernel dataset is software", "", long]
    found = g.recognize(texts)
    assert len(found) == 3 and found[1] == []
    for text, ms in zip(texts, found, strict=True):
        check_spans(text, ms, "gliner")
        assert {m.type for m in ms} <= {"DATASET", "SOFTWARE"}
        assert all(m.value == surface(m.text) for m in ms)  # the label is the type
        assert all(0.0 <= m.confidence <= 1.0 for m in ms)
    assert max(m.end for m in found[2]) > len(long) - 40  # the last window was read too
    one_by_one = [g.recognize([t])[0] for t in texts[:2]]
    assert one_by_one == found[:2]  # batching changes nothing


def test_gliner_version_follows_model_labels_and_threshold(tiny_gliner):
    base = GlinerRecognizer(str(tiny_gliner), labels=["dataset"]).info
    assert not base.filter and not base.fork_safe and base.names
    assert GlinerRecognizer(str(tiny_gliner), labels=["dataset"]).info.version == base.version
    assert GlinerRecognizer(str(tiny_gliner), labels=["software"]).info.version != base.version
    other = GlinerRecognizer(str(tiny_gliner), labels=["dataset"], threshold=0.7)
    assert other.info.version != base.version
    with pytest.raises(GlinerUnavailable, match="not a GLiNER model folder"):
        GlinerRecognizer(str(tiny_gliner.parent))


def test_gliner_from_kbx_toml_is_stored_and_a_label_change_reruns_only_it(tmp_path, tiny_gliner):
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(4):
        (root / f"d{i}.md").write_text(f"# D{i}\n\nthe kernel dataset {i} is software.\n")
    toml = root / "kbx.toml"
    settings = '[recognizers]\ndisable = ["spacy", "acronyms"]\n\n[recognizers.gliner]\n'
    toml.write_text(settings + f'model = "{tiny_gliner}"\nlabels = ["dataset"]\nthreshold = 0.0\n')
    r = run_cli("index", str(root), "--json")
    assert r.returncode == 0, r.stderr
    idx = Index.for_root(root)
    con = duckdb.connect(str(idx.db), read_only=True)
    gliner_runs = con.execute("SELECT count(*) FROM runs WHERE recognizer = 'gliner'").fetchone()
    types = con.execute("SELECT DISTINCT type FROM mentions WHERE recognizer = 'gliner'").fetchall()
    dates = con.execute("SELECT max(ran_at) FROM runs WHERE recognizer = 'dates'").fetchone()
    con.close()
    assert gliner_runs == (4,) and types == [("DATASET",)]
    toml.write_text(settings + f'model = "{tiny_gliner}"\nlabels = ["software"]\nthreshold = 0.0\n')
    registry = registry_for(idx)
    stale = {p.name: p.todo for p in plan(idx, registry)}
    assert stale["gliner"] == 4 and stale["dates"] == 0 and stale["identifiers"] == 0
    reprocess(idx, registry)
    con = duckdb.connect(str(idx.db), read_only=True)
    assert con.execute(
        "SELECT DISTINCT type FROM mentions WHERE recognizer = 'gliner'"
    ).fetchall() == [("SOFTWARE",)]
    assert con.execute("SELECT max(ran_at) FROM runs WHERE recognizer = 'dates'").fetchone() == (
        dates
    )
    con.close()


def test_a_short_form_carries_an_ner_name_within_the_document(tmp_path, spacy_ner):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text(
        "# News\n\nOn Monday, Apple Inc. opened a store in Berlin.\n\n"
        "## Later\n\nThe queue at the store was long, and Apple hired more staff.\n"
    )
    idx = Index.for_root(root)
    index(root, registry=Registry([spacy_ner]))
    con = duckdb.connect(str(idx.db), read_only=True)
    headings = con.execute(
        "SELECT DISTINCT u.heading_path[-1] FROM links l JOIN units u USING (unit_id) "
        "WHERE l.entity_id = 'name:org:apple-inc'"
    ).fetchall()
    con.close()
    assert set(headings) == {("News",), ("Later",)}  # "Apple" there is Apple Inc.


def test_gliner_version_follows_the_weights_content_not_their_size(tmp_path, tiny_gliner):
    copy = tmp_path / "retrained"
    shutil.copytree(tiny_gliner, copy)
    base = GlinerRecognizer(str(copy), labels=["dataset"]).info.version
    weights = max((p for p in copy.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # same shape and size, other values
    weights.write_bytes(bytes(data))
    assert GlinerRecognizer(str(copy), labels=["dataset"]).info.version != base
    cached = json.loads((tmp_path / "cache" / "kbx" / "file-digests.json").read_text())
    assert any(k.startswith(str(weights.resolve())) for k in cached)  # read once, remembered


@pytest.mark.parametrize(
    ("span", "code"),
    [
        ("Rich Trott", False),
        ("McDonald", False),
        ("GitHub", False),
        ("Jean-Luc Picard", False),
        ("Apple Inc.", False),
        ("setImmediate", True),
        ("LogTimestampFormat", True),
        ("SSL_OP_SINGLE_DH_USE", True),
        ("tr=.2", True),
        ("┃", True),
        ("https://example.org", True),
        ("a1b2c3d4e5f6", True),
    ],
)
def test_spans_that_look_like_code_are_not_names(span, code):
    from kbx.recognizers.spacy_ner import looks_like_code

    assert looks_like_code(span) is code


def test_a_names_span_leaves_out_a_leading_the_and_a_trailing_score():
    from kbx.recognizers.spacy_ner import _trimmed

    def name(text: str, type_: str) -> str:
        a, b = _trimmed(text, type_)
        return text[a:b]

    assert name("the United States", "GPE") == "United States"
    assert name("The Hague", "GPE") == "The Hague"  # "The" and one word: the name itself
    assert name("Mexico 2-0", "GPE") == "Mexico" and name("Ajax 2-1", "ORG") == "Ajax"
    assert name("Chandana 2", "PERSON") == "Chandana"
    assert name("Channel 4", "ORG") == "Channel 4" and name("Apollo 13", "EVENT") == "Apollo 13"
