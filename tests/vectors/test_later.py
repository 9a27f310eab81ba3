"""The vectors pass in two stages: every unit's first window, then the later ones. Killed
in the second, every unit is searchable by meaning already, the table says what is left,
search ranks by the windows there are, and the next pass finishes the same as a clean one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from inprocess import run_cli

from kbx import api
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
from kbx.vectors import matrix
from kbx.vectors.model import from_folder
from kbx.vectors.rank import dense_rank
from kbx.vectors.run import embed, standing

DOCS = {  # two units whose meaning lies past their first window (8 tokens), one short
    "a.md": "# A\n\n" + "bread " * 30 + "and one automobile.\n",
    "b.md": "# B\n\n" + "loaf " * 30 + "and one microkernel.\n",
    "c.md": "# C\n\nRed notes.\n",
}
RECIPE = {"max_tokens": 8, "max_windows": 9}

KILLED = """
import sys
from pathlib import Path
from kbx.store.db import Index
from kbx.vectors import run
from kbx.vectors.model import from_folder
run.BATCH_UNITS = 1
run.embed(Index.for_root(sys.argv[1]), from_folder(Path(sys.argv[2])))
"""


def _folder(root: Path) -> Index:
    root.mkdir(parents=True)
    for name, text in DOCS.items():
        (root / name).write_text(text)
    index(root, registry=Registry([]))
    return Index.for_root(root)


def _killed_at(idx: Index, model: Path, point: str) -> None:
    env = {"KBX_KILL_AT": point, "PYTHONPATH": ":".join(sys.path)}
    env["KBX_CACHE_DIR"] = os.environ["KBX_CACHE_DIR"]  # the run's, not the user's
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(idx.root), str(model)], env=env, capture_output=True
    )
    assert done.returncode == 137, done.stderr.decode()[-2000:]


def _top(idx: Index, enc, query: str, mapped: bool) -> tuple[str, float]:
    """The unit ``query`` ranks first by meaning: its file and cosine."""
    with idx.reader() as con:
        (unit, score), *_ = dense_rank(con, enc, query, limit=3, db=idx.db if mapped else None)
        path = con.execute(
            "SELECT path FROM placements JOIN documents USING (doc_id) WHERE unit_id = ?", [unit]
        ).fetchone()[0]
    return path, round(score, 4)


def _vectors(idx: Index) -> list[tuple]:
    with idx.reader() as con:
        return con.execute(
            """SELECT unit_hash, version, list_sort(list(vector::VARCHAR)) FROM vectors
               GROUP BY ALL ORDER BY ALL"""
        ).fetchall()


def test_a_pass_gives_every_unit_its_first_window_before_any_later_one(tmp_path, make_model):
    model = make_model(tmp_path / "m", RECIPE)
    enc = from_folder(model)
    idx = _folder(tmp_path / "docs")
    _killed_at(idx, model, "vectors.later:1")  # the first later batch in, one unit's
    with idx.reader() as con:
        s = standing(con, enc)
        assert (s.current, s.todo, s.pending) == (3, 0, 1)  # all searchable, one to finish
        assert matrix.load(con, idx.db, enc.name, enc.version) is not None  # the first stage's
        assert not matrix.holds_all(con, idx.db, enc.name, enc.version)
    (v,) = api.status(idx).vectors
    assert v["units"] == 3 and v["pending_units"] == 1 and v["pending"] >= 4
    line = f"{v['pending']} later windows of 1 units to come (`kbx embed`)"
    assert line in run_cli("status", cwd=idx.root).stdout
    # the mapped matrix holds the first windows alone (bread, loaf: neither reads as a car
    # or a kernel); the SQL scan reads a.md's later windows, and skips b.md's to come
    assert _top(idx, enc, "car", mapped=True)[1] < 0.3
    assert _top(idx, enc, "kernel", mapped=True)[1] < 0.3
    path, score = _top(idx, enc, "car", mapped=False)
    assert path == "a.md" and score > 0.3
    assert _top(idx, enc, "kernel", mapped=False)[1] < 0.3

    report = embed(idx, enc)
    assert (report.units, report.first_windows, report.pending) == (0, 0, 0)
    assert report.windows == v["pending"]  # exactly the windows it said were to come
    with idx.reader() as con:
        assert standing(con, enc).pending == 0
        assert matrix.holds_all(con, idx.db, enc.name, enc.version)
    for query, path in (("car", "a.md"), ("kernel", "b.md")):
        found = _top(idx, enc, query, mapped=True)
        assert found == _top(idx, enc, query, mapped=False) and found[0] == path
    assert api.status(idx).vectors[0]["pending"] == 0
    assert "to come" not in run_cli("status", cwd=idx.root).stdout

    clean = _folder(tmp_path / "clean")
    whole = embed(clean, enc)
    assert whole.first_windows == whole.units == 3 and whole.pending == 0
    assert whole.windows == v["windows"] + report.windows  # each window once in all
    assert 0 < whole.first_seconds <= whole.seconds
    assert _vectors(clean) == _vectors(idx)  # resumed = done in one go


def test_a_pass_killed_before_its_last_export_exports_on_the_next(tmp_path, make_model):
    model = make_model(tmp_path / "m", RECIPE)
    enc = from_folder(model)
    idx = _folder(tmp_path / "docs")
    _killed_at(idx, model, "vectors.later:2")  # both later batches in, the export not
    with idx.reader() as con:
        assert standing(con, enc).pending == 0
        assert not matrix.holds_all(con, idx.db, enc.name, enc.version)
    assert _top(idx, enc, "car", mapped=True)[1] < 0.3  # what the first stage exported
    report = embed(idx, enc)
    assert (report.units, report.windows) == (0, 0)  # nothing to embed, but the export
    with idx.reader() as con:
        assert matrix.holds_all(con, idx.db, enc.name, enc.version)
    assert _top(idx, enc, "car", mapped=True)[0] == "a.md"


def test_kbx_embed_says_when_every_passage_was_searchable(tmp_path, make_model):
    idx = _folder(tmp_path / "docs")
    make_model(idx.root / "model", RECIPE)
    (idx.root / "kbx.toml").write_text('[dense]\nmodel = "model"\n')
    r = run_cli("embed", cwd=idx.root)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("3 passages embedded with model (")
    assert "all searchable by meaning after" in r.stdout and "to come" not in r.stdout
