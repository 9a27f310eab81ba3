"""Names carried through a document (issue 18): short forms, one type per name, names
written in where the model missed them, per document, redone when the inputs change."""

from __future__ import annotations

import re

import duckdb
import pytest

from kbx.annotate import context
from kbx.annotate.names import Found, Unit, in_context
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.registry import Registry
from kbx.recognizers.spacy_ner import SpacyRecognizer
from kbx.store.db import Index


def _unit(text: str, *found: tuple[str, str]) -> Unit:
    """A unit whose model found each ``(text, type)`` at its first place."""
    return Unit(
        f"h{hash(text)}",
        text,
        tuple(Found(text.index(t), text.index(t) + len(t), ty, t, t, "m") for t, ty in found),
    )


def _typed(names) -> list[tuple[str, str, str, str]]:
    return [(n.text, n.type, n.surface, n.how) for n in names]


def test_a_short_form_after_its_long_form_stands_for_it():
    long = ("Bill Clinton", "PERSON"), ("Apple Inc.", "ORG")
    units = [
        _unit("Clinton left early.", ("Clinton", "GPE")),  # before the long form: as found
        _unit("Bill Clinton met Apple Inc. staff.", *long),
        _unit("Clinton said Apple would grow.", ("Clinton", "GPE"), ("Apple", "PERSON")),
    ]
    got = _typed(in_context(units))
    assert ("Clinton", "GPE", "Clinton", "found") in got
    assert ("Clinton", "PERSON", "Bill Clinton", "carried") in got
    assert ("Apple", "ORG", "Apple Inc.", "carried") in got


def test_one_type_for_one_name_by_a_clear_majority():
    units = [
        _unit("Arbil fell.", ("Arbil", "GPE")),
        _unit("They took Arbil.", ("Arbil", "ORG")),
        _unit("Near Arbil, and Budapest.", ("Arbil", "GPE"), ("Budapest", "ORG")),
        _unit("In Budapest.", ("Budapest", "GPE")),
    ]
    got = _typed(in_context(units))
    assert [t for x, t, _, _ in got if x == "Arbil"] == ["GPE", "GPE", "GPE"]
    assert ("Arbil", "GPE", "Arbil", "typed") in got
    assert sorted(t for x, t, _, _ in got if x == "Budapest") == ["GPE", "ORG"]  # a tie


def test_a_distinctive_name_is_written_in_where_the_model_missed_it():
    units = [
        _unit(
            "LEICESTERSHIRE WIN AT THE OVAL",
        ),
        _unit("At home, Leicestershire beat Somerset.", ("Leicestershire", "ORG")),
        _unit("Men 's 200 metres: Leicestershire again, and Simmons.", ("Men", "ORG")),
        _unit("Men and men."),
    ]
    got = _typed(in_context(units, authors=["Phil Simmons"]))
    assert ("LEICESTERSHIRE", "ORG", "Leicestershire", "added") in got  # a headline's capitals
    assert ("Leicestershire", "ORG", "Leicestershire", "added") in got
    assert ("Simmons", "PERSON", "Phil Simmons", "added") in got  # an author's short form
    assert [x for x, *_ in got].count("Men") == 1  # a word written in lower case too


class Letters:
    """Calls each capitalized word or pair a PERSON; its version is set per test."""

    def __init__(self, version: str = "1", type_: str = "PERSON"):
        self.info = RecognizerInfo(
            name="letters", version=version, types=("PERSON", "ORG"), names=True
        )
        self.type = type_

    def recognize(self, texts):
        words = r"[A-Z]\w+(?: [A-Z]\w+)?"
        return [
            [Mention(*m.span(), self.type, m.group()) for m in re.finditer(words, t)
             if m.group() not in ("Intro", "Later")]
            for t in texts
        ]  # fmt: skip


def _names(idx: Index) -> list[tuple]:
    con = duckdb.connect(str(idx.db), read_only=True)
    try:
        return con.execute(
            f"""SELECT d.path, n.text, n.type, n.surface, n.how FROM ({context.NAMES}) n
                JOIN documents d USING (doc_id) ORDER BY ALL"""
        ).fetchall()
    finally:
        con.close()


def test_a_unit_two_documents_share_is_read_in_each(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for name, who in (("a.md", "Bill"), ("b.md", "Hillary")):
        (root / name).write_text(
            f"# Intro\n\n{who} Clinton visited Ohio.\n\n# Later\n\nClinton spoke today.\n"
        )
    idx = Index.for_root(root)
    index(root, registry=Registry([Letters()]))
    con = duckdb.connect(str(idx.db), read_only=True)
    (shared,) = con.execute(
        "SELECT unit_hash FROM units WHERE contains(text, 'spoke') GROUP BY ALL"
    ).fetchone()
    mentions = con.execute(
        "SELECT text, type FROM mentions WHERE unit_hash = ?", [shared]
    ).fetchall()
    con.close()
    assert mentions == [("Clinton", "PERSON")]  # the unit's mention stays as recognized
    got = _names(idx)
    assert ("a.md", "Clinton", "PERSON", "Bill Clinton", "carried") in got
    assert ("b.md", "Clinton", "PERSON", "Hillary Clinton", "carried") in got


def test_names_are_redone_when_a_recognizer_or_the_rules_change(tmp_path, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Intro\n\nAda Lovelace wrote.\n\n# Later\n\nLovelace spoke.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([Letters()]))
    assert ("a.md", "Lovelace", "PERSON", "Ada Lovelace", "carried") in _names(idx)
    reprocess(idx, Registry([Letters("2", "ORG")]))
    assert ("a.md", "Lovelace", "ORG", "Lovelace", "found") in _names(idx)  # no ORG short form
    con = duckdb.connect(str(idx.db))
    (version,) = con.execute(
        "SELECT version FROM doc_context WHERE recognizer = 'names'"
    ).fetchone()
    assert version == f"{context.NAMES_VERSION};letters 2 2"  # version 2 ran on 2 units
    monkeypatch.setattr(context, "NAMES_VERSION", "test")
    assert context.document_names(con) == 1 and context.document_names(con) == 0
    con.close()


def test_names_read_from_a_pass_cut_short_are_read_again_when_it_finishes(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Intro\n\nAda Lovelace wrote.\n\n# Later\n\nLovelace spoke.\n")
    idx = Index.for_root(root)
    registry = Registry([Letters()])
    index(root, registry=registry)
    con = duckdb.connect(str(idx.db))  # as a pass stopped before the first unit left it
    (first,) = con.execute("SELECT unit_hash FROM units WHERE contains(text, 'Ada')").fetchone()
    con.execute("DELETE FROM runs WHERE unit_hash = ?", [first])
    con.execute("DELETE FROM mentions WHERE unit_hash = ?", [first])
    assert context.document_names(con) == 1  # read from the one unit that ran
    con.close()
    assert ("a.md", "Lovelace", "PERSON", "Lovelace", "found") in _names(idx)
    index(root, registry=registry)  # the next run finishes the pass: the names follow
    assert ("a.md", "Lovelace", "PERSON", "Ada Lovelace", "carried") in _names(idx)


@pytest.fixture(scope="module")
def spacy_ner() -> SpacyRecognizer:
    return SpacyRecognizer()


def test_spacys_short_form_links_to_the_long_forms_entity(tmp_path, spacy_ner):
    root = tmp_path / "docs"
    root.mkdir()
    text = (
        "President Bill Clinton flew to Chicago on Monday.\n\n"
        "Clinton told reporters in Chicago that the talks went well.\n"
    )
    (root / "a.txt").write_text(text)
    idx = Index.for_root(root)
    index(root, registry=Registry([spacy_ner]))
    con = duckdb.connect(str(idx.db), read_only=True)
    mentions = con.execute("SELECT text, type FROM mentions ORDER BY start_char").fetchall()
    linked = {e for (e,) in con.execute("SELECT entity_id FROM links").fetchall()}
    (unit_text,) = con.execute("SELECT text FROM units").fetchone()
    con.close()
    raw = spacy_ner.recognize([unit_text])[0]
    assert mentions == [(m.text, m.type) for m in raw]  # the unit's mentions as recognized
    assert "name:person:bill-clinton" in linked
    assert not any(e.endswith(":clinton") for e in linked)  # "Clinton" is him here
