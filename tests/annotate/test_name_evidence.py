"""Which names in context filter (entities/build.py ``_names``): a short form the model
found counts as a place of its long form, a name written in or retyped is no evidence."""

from __future__ import annotations

import duckdb
import pytest

from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.registry import Registry
from kbx.recognizers.spacy_ner import SpacyRecognizer
from kbx.store.db import Index


class Told:
    """Finds the names it is told, each where its unit holds the trigger word."""

    def __init__(self, finds: dict[str, list[tuple[str, str]]]):
        self.info = RecognizerInfo(name="told", version="1", types=("PERSON", "ORG"), names=True)
        self.finds = finds

    def recognize(self, texts: list[str]) -> list[list[Mention]]:
        out = []
        for t in texts:
            found = []
            for trigger, names in self.finds.items():
                if trigger in t:
                    for name, type_ in names:
                        at = t.index(name)
                        found.append(Mention(at, at + len(name), type_, name))
            out.append(sorted(found, key=lambda m: m.start))
        return out


def _filtering(tmp_path, text: str, recognizer, name: str = "a.md") -> dict[tuple, bool]:
    """Index one document; (entity, the passage's last word) -> whether the link filters."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / name).write_text(text)
    idx = Index.for_root(root)
    index(root, registry=Registry([recognizer]))
    con = duckdb.connect(str(idx.db), read_only=True)
    try:
        rows = con.execute(
            """SELECT l.entity_id, u.text, l.filter FROM links l JOIN units u USING (unit_id)"""
        ).fetchall()
    finally:
        con.close()
    return {(e, text.rstrip(".\n").split()[-1]): f for e, text, f in rows}


def _prose(*lines: str) -> str:
    return "".join(f"# Part {n}\n\n{line}\n\n" for n, line in enumerate(lines))


ADA = "name:person:ada-lovelace"


def test_a_short_form_after_a_filter_grade_long_form_filters(tmp_path):
    got = _filtering(
        tmp_path,
        _prose("Ada Lovelace wrote.", "Ada Lovelace read.", "Lovelace spoke."),
        Told({"wrote": [("Ada Lovelace", "PERSON")], "read": [("Ada Lovelace", "PERSON")],
              "spoke": [("Lovelace", "PERSON")]}),
    )  # fmt: skip
    assert got == {(ADA, "wrote"): True, (ADA, "read"): True, (ADA, "spoke"): True}


def test_a_short_form_named_twice_confirms_its_long_form(tmp_path):
    got = _filtering(
        tmp_path,
        _prose("Ada Lovelace wrote.", "Lovelace spoke.", "Lovelace left."),
        Told({"wrote": [("Ada Lovelace", "PERSON")], "spoke": [("Lovelace", "PERSON")],
              "left": [("Lovelace", "PERSON")]}),
    )  # fmt: skip
    assert got == {(ADA, "wrote"): True, (ADA, "spoke"): True, (ADA, "left"): True}


def test_a_name_written_in_does_not_confirm_it(tmp_path):
    got = _filtering(
        tmp_path,
        _prose("Ada Lovelace wrote.", "Ada Lovelace spoke.", "Lovelace left."),
        Told({"wrote": [("Ada Lovelace", "PERSON")]}),  # the others are written in
    )
    assert set(got.values()) == {False} and (ADA, "spoke") in got and (ADA, "left") in got


def test_a_name_found_as_two_types_does_not_filter_once_retyped(tmp_path):
    got = _filtering(
        tmp_path,
        _prose("Ada Lovelace wrote.", "Ada Lovelace read.", "Ada Lovelace ran."),
        Told({w: [("Ada Lovelace", "ORG" if w == "ran" else "PERSON")]
              for w in ("wrote", "read", "ran")}),
    )  # fmt: skip
    assert got == {(ADA, "wrote"): False, (ADA, "read"): False, (ADA, "ran"): False}


def test_where_code_is_shown_a_carried_one_word_person_is_no_place(tmp_path):
    got = _filtering(
        tmp_path,
        _prose("Gaussian Mixture Model, fit with `gmm.fit`.", "Gaussian ones.", "Gaussian twos."),
        Told({"fit": [("Gaussian Mixture Model", "PERSON")], "ones": [("Gaussian", "PERSON")],
              "twos": [("Gaussian", "PERSON")]}),
    )  # fmt: skip
    assert set(got.values()) == {False} and len(got) == 3


@pytest.fixture(scope="module")
def spacy_ner() -> SpacyRecognizer:
    return SpacyRecognizer()


def test_spacys_surname_after_the_full_name_filters(tmp_path, spacy_ner):
    text = (
        "President Bill Clinton flew to Chicago on Monday.\n\n"
        "Clinton told reporters in Chicago that the talks went well.\n\n"
        "Clinton will return to Washington on Friday.\n"
    )
    got = _filtering(tmp_path, text, spacy_ner, "a.txt")
    assert got[("name:person:bill-clinton", "Friday")] is True
    assert not any(e.endswith(":clinton") for e, _ in got)
