"""``kbx search --mode``: by meaning and fused, through the library and the CLI, with the
filters narrowing every list; ``kbx embed`` builds the vectors the modes read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inprocess import run_cli

from kbx import api
from kbx.errors import BadArgument
from kbx.search.search import MODES

DOCS = {
    "fleet/cars.md": "# Cars\n\nThe red car is one vehicle.\n",
    "fleet/vans.md": "# Vans\n\nTwo vehicles and a vendor.\n",
    "kitchen/bread.md": "# Bread\n\nA loaf of bread, baking.\n",
}


@pytest.fixture
def folder(tmp_path: Path, tiny_model: Path) -> Path:
    root = tmp_path / "docs"
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "kbx.toml").write_text(
        '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n\n'
        f'[dense]\nmodel = "{tiny_model}"\n'
    )
    api.index(root)
    return root


def test_embed_then_hybrid_finds_a_passage_in_other_words(folder):
    idx = api.Index.for_root(folder)
    assert api.search(idx, "automobile vendor").mode == "bm25"  # no vectors yet
    assert (
        api.status(idx).vectors == [] and "vectors    none" in run_cli("status", cwd=folder).stdout
    )
    out = json.loads(run_cli("embed", "--json", cwd=folder).stdout)
    assert out["units"] == len(DOCS) and out["off"] is None
    (row,) = api.status(idx).vectors
    assert row["units"] == len(DOCS) and row["model"] == out["model"]
    words = api.search(idx, "automobile vendor", mode="bm25")
    assert [h.path for h in words.hits] == ["fleet/vans.md"] and words.mode == "bm25"
    both = api.search(idx, "automobile vendor")  # hybrid by default, once vectors exist
    assert [h.path for h in both.hits] == [
        h.path for h in api.search(idx, "automobile vendor", mode="hybrid").hits
    ]
    by_path = {h.path: h.ranks for h in both.hits}
    assert by_path["fleet/vans.md"]["bm25"] == 1  # in both lists
    assert by_path["fleet/cars.md"] == {"bm25": None, "dense": by_path["fleet/cars.md"]["dense"]}
    assert both.mode == "hybrid" and both.hits[0].path == "fleet/vans.md"
    dense = api.search(idx, "automobile", mode="dense", filters=api.Filters(path="kitchen/*"))
    assert [h.path for h in dense.hits] == ["kitchen/bread.md"]  # the filter narrows it too
    by_meaning = {h.path: h.ranks for h in api.search(idx, "vendor", mode="dense").hits}
    assert by_meaning["fleet/vans.md"]["bm25"] == 1  # the words found it too, and say where
    counted = {m: api.search(idx, "automobile vendor", mode=m, facets=True) for m in MODES}
    assert counted["bm25"].facets.passages == counted["bm25"].total == 1  # the words' match
    for m in ("dense", "hybrid"):  # and every passage shown: here the three
        assert counted[m].facets.passages == len(DOCS) and counted[m].total == 1
    first = api.search(idx, "automobile vendor", k=1, facets=True)  # the words' own match
    assert [h.path for h in first.hits] == ["fleet/vans.md"] and first.facets.passages == 1


def test_the_cli_says_the_mode_and_each_hits_ranks(folder):
    assert run_cli("embed", cwd=folder).returncode == 0
    got = json.loads(
        run_cli("search", "automobile vendor", "--mode", "hybrid", "--json", cwd=folder).stdout
    )
    assert got["mode"] == "hybrid" and all(
        set(h["ranks"]) == {"bm25", "dense"} for h in got["hits"]
    )
    text = run_cli("search", "automobile vendor", "--mode", "hybrid", cwd=folder).stdout
    assert "bm25 #1, dense #" in text
    counted = run_cli("search", "automobile vendor", "--facets", cwd=folder).stdout
    assert f"facets of {len(DOCS)} passages (the words' matches and the hits found" in counted
    words = run_cli("search", "automobile vendor", "--facets", "--mode", "bm25", cwd=folder)
    assert "facets of 1 matching passage\n" in words.stdout


def test_an_unknown_mode_and_a_mode_without_vectors_are_clear_errors(folder, tmp_path):
    idx = api.Index.for_root(folder)
    with pytest.raises(BadArgument, match="unknown mode 'semantic'; choose from bm25, dense"):
        api.search(idx, "car", mode="semantic")
    for mode in ("dense", "hybrid"):  # asked for, and no vectors yet
        with pytest.raises(BadArgument, match=rf"--mode {mode} needs vectors, .* `kbx embed`"):
            api.search(idx, "car", mode=mode)
    assert run_cli("embed", cwd=folder).returncode == 0
    (folder / "kbx.toml").write_text("[dense]\nenable = false\n")
    with pytest.raises(BadArgument, match=r"--mode dense needs dense retrieval, which is off"):
        api.search(idx, "car", mode="dense")


def test_with_the_model_off_an_embedded_index_says_so_and_ranks_by_words(folder):
    assert run_cli("embed", cwd=folder).returncode == 0
    (folder / "kbx.toml").write_text("[dense]\nenable = false\n")
    r = api.search(api.Index.for_root(folder), "automobile vendor")
    assert r.mode == "bm25" and [h.path for h in r.hits] == ["fleet/vans.md"]
    assert any("dense retrieval is off" in n and "(bm25)" in n for n in r.notes)


def test_a_runtime_that_cannot_load_leaves_the_words_and_says_so(folder, tmp_path):
    assert run_cli("embed", cwd=folder).returncode == 0
    broken = tmp_path / "broken" / "onnxruntime"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('DLL load failed')\n")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(broken.parent), *sys.path])}
    kbx = [sys.executable, "-m", "kbx", "search", "automobile vendor"]
    run = subprocess.run([*kbx, "--json"], cwd=folder, env=env, capture_output=True, text=True)
    got = json.loads(run.stdout)
    assert got["mode"] == "bm25" and [h["path"] for h in got["hits"]] == ["fleet/vans.md"]
    assert any("dense retrieval is off" in n and "(bm25)" in n for n in got["notes"])
    asked = subprocess.run([*kbx, "--mode", "hybrid"], cwd=folder, env=env, capture_output=True)
    assert asked.returncode != 0 and b"--mode hybrid needs dense retrieval" in asked.stderr


def test_kbx_index_embeds_what_it_adds_to_an_embedded_index(folder):
    idx = api.Index.for_root(folder)
    (folder / "fleet" / "bikes.md").write_text("# Bikes\n\nA crimson bicycle.\n")
    assert api.index(folder).vectors is None  # never embedded: no vectors pass, no model
    assert run_cli("embed", cwd=folder).returncode == 0
    (folder / "fleet" / "trucks.md").write_text("# Trucks\n\nA crimson vehicle.\n")
    shown = run_cli("index", ".", cwd=folder)
    assert shown.returncode == 0 and "vectors: 1 passages embedded" in shown.stdout
    with idx.reader() as con:
        lacking = "SELECT count(*) FROM units u WHERE NOT EXISTS (SELECT 1 FROM vectors v "
        assert con.execute(lacking + "WHERE v.unit_hash = u.unit_hash)").fetchone() == (0,)
    hits = {h.path: h.ranks for h in api.search(idx, "automobile").hits}
    assert hits["fleet/trucks.md"]["dense"] is not None  # by meaning: "vehicle"
    assert api.index(folder).vectors is None  # nothing added: nothing to embed
    with idx.writer() as con:  # a unit left without one, as by a `kbx embed` stopped early
        con.execute(
            """DELETE FROM vectors WHERE unit_hash IN (SELECT u.unit_hash FROM units u
               JOIN placements USING (unit_id) JOIN documents d USING (doc_id)
               WHERE d.path = 'kitchen/bread.md')"""
        )
    (folder / "fleet" / "vans.md").write_text("# Vans\n\nTwo crimson vehicles.\n")
    assert api.index(folder).vectors.units == 1  # what the run added: the rest is kbx embed's
    assert json.loads(run_cli("embed", "--json", cwd=folder).stdout)["units"] == 1


def test_kbx_index_leaves_vectors_of_another_model_to_kbx_embed(folder, make_model, tmp_path):
    assert run_cli("embed", cwd=folder).returncode == 0
    other = make_model(tmp_path / "other", seed=1)
    (folder / "kbx.toml").write_text(
        f'[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n\n[dense]\nmodel = "{other}"\n'
    )
    (folder / "fleet" / "trucks.md").write_text("# Trucks\n\nA crimson vehicle.\n")
    report = api.index(folder)
    assert report.vectors.units == 0 and "`kbx embed` embeds every passage" in report.vectors.off
    idx = api.Index.for_root(folder)
    with idx.reader() as con:
        (versions,) = con.execute("SELECT count(DISTINCT version) FROM vectors").fetchone()
    assert versions == 1  # the old model's vectors stand, none of the new model's
    r = api.search(idx, "automobile vendor")  # and search, by default, says so
    assert r.mode == "bm25" and any("no passage has a vector of" in n for n in r.notes)
    with pytest.raises(BadArgument, match="--mode hybrid needs vectors: no passage has"):
        api.search(idx, "automobile vendor", mode="hybrid")
