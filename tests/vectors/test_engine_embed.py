"""The vectors stage on a Dask cluster (issue 20): with ``[engine]`` in kbx.toml, ``kbx
embed`` sends its batches to the cluster's workers, which load the model once each, and
commits them here; the vectors equal the local pass's, row for row. A real LocalCluster of
two worker processes, as tests/test_engine.py runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from inprocess import run_cli

from kbx import api
from kbx.errors import EngineUnavailable
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

DOCS = {  # enough units for several batches of 16 (vectors/run.py BATCH_UNITS)
    f"note{i}.md": "".join(
        f"## Part {j}\n\nThe red car {i} and bread {j}; a vehicle, a loaf, a kernel.\n\n"
        for j in range(4)
    )
    for i in range(12)
}


def _folder(root: Path, model: Path, engine: str = "") -> Index:
    root.mkdir(parents=True)
    for name, text in DOCS.items():
        (root / name).write_text(text)
    shutil.copytree(model, root / "model")
    (root / "kbx.toml").write_text(f'[dense]\nmodel = "model"\n{engine}')
    index(root, registry=Registry([]))
    return Index.for_root(root)


def _vectors(idx: Index) -> list[tuple]:
    with idx.reader() as con:
        return con.execute(
            "SELECT unit_hash, model, version, vector FROM vectors ORDER BY unit_hash, rowid"
        ).fetchall()


def _models_loaded() -> int:
    from kbx.vectors import setup

    return len(setup._LOADED)


def test_embed_on_the_cluster_equals_the_local_pass_row_for_row(cluster, tmp_path, tiny_model):
    here = _folder(tmp_path / "here", tiny_model)
    there = _folder(
        tmp_path / "there",
        tiny_model,
        f'[engine]\nkind = "dask"\naddress = "{cluster.scheduler_address}"\n',
    )
    local, remote = api.embed(here), api.embed(there)
    assert local.units == remote.units > 32  # more than two batches, so several in flight
    assert (local.windows, local.off, remote.off) == (remote.windows, None, None)
    a, b = _vectors(here), _vectors(there)
    assert [r[:3] for r in a] == [r[:3] for r in b]
    assert np.allclose([r[3] for r in a], [r[3] for r in b], atol=1e-6)
    loaded = cluster.get_client().run(_models_loaded)
    assert sorted(loaded.values()) == [1, 1]  # each worker loaded the model, once
    assert api.embed(there).units == 0  # and a second pass asks the cluster nothing


def test_an_unreachable_cluster_is_one_line_and_no_vector_is_written(tmp_path, tiny_model):
    idx = _folder(
        tmp_path / "docs",
        tiny_model,
        '[engine]\nkind = "dask"\naddress = "tcp://127.0.0.1:9"\ntimeout = 0.5\n',
    )
    with pytest.raises(EngineUnavailable, match="cannot reach the Dask scheduler"):
        api.embed(idx)
    assert _vectors(idx) == []
    r = run_cli("embed", cwd=idx.root)
    assert r.returncode == 1 and r.stderr.startswith("error: cannot reach the Dask scheduler")
