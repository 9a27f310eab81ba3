"""The dask engine on a real cluster of two worker processes on this machine: a pass run
there equals the local one row for row, a worker killed mid-pass costs only its batch, a
killed pass resumes, and an engine that cannot run is one clear line with nothing written."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from engine_recognizers import MARK, Dying, Fussy, Raising, Where
from helpers import unchanged
from inprocess import run_cli
from kbx_test_plugin import AcronymRecognizer

from kbx.annotate import run as run_module
from kbx.annotate.engine import connect, install_line
from kbx.config import EngineConfig, load_config
from kbx.errors import BadArgument, EngineUnavailable
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

N_DOCS = 12
BATCH = 3  # units per batch: four batches per recognizer
RULES = '[recognizers]\ndisable = ["spacy", "gliner"]\n'


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The corpus indexed once with the identifiers recognizer; tests work on copies."""
    root = _corpus(tmp_path_factory.mktemp("engine") / "built")
    index(root, registry=Registry([IdentifierRecognizer()]))
    return root


def _copies(built: Path, *dests: Path, toml: str = RULES) -> list[Path]:
    """Copies of the built index and its files (reprocess reads the index, not the root)."""
    for dest in dests:
        shutil.copytree(built, dest)
        (dest / "kbx.toml").write_text(toml)
    return list(dests)


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    monkeypatch.setattr(run_module, "BATCH_UNITS", BATCH)


def _corpus(root: Path, toml: str = RULES) -> Path:
    root.mkdir(parents=True)
    for i in range(N_DOCS):
        (root / f"doc{i:02}.md").write_text(
            f"# Doc {i}\n\nThe cedar grove of NASA, row {i}, on 4 March 2021"
            + (f" ({MARK})" if i == 7 else "")
            + (". See doi:10.1145/1629575.1629596" if i % 5 == 0 else "")
            + ".\n"
        )
    (root / "kbx.toml").write_text(toml)
    return root


def _rules() -> list:
    return [IdentifierRecognizer(), AcronymRecognizer()]


def _tables(root: Path) -> tuple[list, list]:
    """Every mention, and every run but for when it ran, in one order."""
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    try:
        mentions = con.execute("SELECT * FROM mentions ORDER BY ALL").fetchall()
        runs = con.execute("SELECT * EXCLUDE (ran_at) FROM runs ORDER BY ALL").fetchall()
    finally:
        con.close()
    return mentions, runs


def _plugins(cluster) -> list[str]:
    return [p for p in cluster.scheduler.worker_plugins if p.startswith("kbx-pass-")]


def test_a_pass_on_the_cluster_equals_the_local_pass_though_a_worker_dies(cluster, built, tmp_path):
    flag = tmp_path / "died"
    a, b = _copies(built, tmp_path / "a", tmp_path / "b")
    remote = reprocess(
        Index.for_root(a),
        Registry([*_rules(), Dying(flag)]),
        redo_all=True,
        engine="dask",
        address=cluster.scheduler_address,
    )
    assert flag.is_file(), "no worker met the marked unit"
    with pytest.raises(ProcessLookupError):  # the worker that met it is gone
        os.kill(int(flag.read_text()), 0)
    local = reprocess(Index.for_root(b), Registry([*_rules(), Dying(flag)]), redo_all=True)
    assert _tables(a) == _tables(b)
    mentions, runs = _tables(a)
    assert {r[1] for r in runs} == {"acronyms", "dying", "identifiers"}
    assert len(runs) == 3 * N_DOCS and all(r[4] is None for r in runs)  # none failed
    assert len([m for m in mentions if m[1] == "dying"]) == N_DOCS
    assert [(d.name, d.units, d.mentions) for d in remote.done] == [
        (d.name, d.units, d.mentions) for d in local.done
    ]
    assert _plugins(cluster) == []  # the workers let the pass's recognizers go


def test_a_unit_a_recognizer_raises_on_fails_alone_on_the_cluster(cluster, built, tmp_path):
    """A batch that raises on a worker is tried there unit by unit (issue 40): the marked
    unit fails, with its error, and the batch's other units keep their mentions."""
    (a,) = _copies(built, tmp_path / "a")
    report = reprocess(
        Index.for_root(a), Registry([Raising()]), engine="dask", address=cluster.scheduler_address
    )
    (done,) = report.done
    assert done.units == N_DOCS and [why for _, why in done.failures] == [
        "RuntimeError: a rule's bug"
    ]
    assert [(f["path"], f["stage"], f["error"]) for f in report.failures] == [
        ("doc07.md", "recognize", "RuntimeError: a rule's bug")
    ]
    mentions, runs = _tables(a)
    assert len([m for m in mentions if m[1] == "raising"]) == N_DOCS - 1
    assert len([r for r in runs if r[1] == "raising" and r[4] is None]) == N_DOCS - 1


def test_kbx_index_runs_the_model_pass_on_the_engine_kbx_toml_names(cluster, tmp_path):
    toml = f'{RULES}\n[engine]\nkind = "dask"\naddress = "{cluster.scheduler_address}"\n'
    root = _corpus(tmp_path / "docs", toml)
    report = index(root, registry=Registry([IdentifierRecognizer(), Where()]))
    (where,) = [d for d in report.recognizers if d.name == "where"]
    assert where.units == N_DOCS
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    values = con.execute("SELECT DISTINCT value FROM mentions WHERE recognizer = 'where'")
    assert values.fetchall() == [("dask-worker",)]
    con.close()


def test_an_interrupted_pass_resumes_and_a_dead_clients_models_are_let_go(cluster, built, tmp_path):
    a, b = _copies(built, tmp_path / "a", tmp_path / "b")
    gone = connect(EngineConfig("dask", cluster.scheduler_address))
    gone.start([AcronymRecognizer()])  # a pass whose process dies without a word
    gone.client.close()
    (left,) = _plugins(cluster)

    def interrupt(name: str, done: int, total: int) -> None:
        if done >= 3 * BATCH:  # Ctrl-C after the third batch committed
            raise KeyboardInterrupt

    remote = ["dask", cluster.scheduler_address]
    with pytest.raises(KeyboardInterrupt):
        reprocess(
            Index.for_root(a),
            Registry([AcronymRecognizer()]),
            progress=interrupt,
            engine=remote[0],
            address=remote[1],
        )
    assert _acronym_runs(a) == 3 * BATCH  # what it committed, and nothing more
    assert left not in _plugins(cluster)
    rest = reprocess(
        Index.for_root(a), Registry([AcronymRecognizer()]), engine=remote[0], address=remote[1]
    )
    assert rest.done[0].units == N_DOCS - 3 * BATCH
    reprocess(Index.for_root(b), Registry([AcronymRecognizer()]))
    assert _tables(a) == _tables(b)
    assert _plugins(cluster) == []


def test_a_scheduler_lost_mid_pass_is_one_line_and_the_next_pass_resumes(cluster, built, tmp_path):
    from distributed import LocalCluster

    a, b = _copies(built, tmp_path / "a", tmp_path / "b")
    doomed = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)

    def lose(name: str, done: int, total: int) -> None:
        if done == BATCH:  # the first batch is committed: the cluster goes away
            doomed.close()

    with pytest.raises(EngineUnavailable) as e:
        reprocess(
            Index.for_root(a),
            Registry([AcronymRecognizer()]),
            progress=lose,
            address=doomed.scheduler_address,
        )
    assert str(e.value).startswith(f"lost the Dask scheduler at {doomed.scheduler_address}")
    assert "the next run resumes from it" in str(e.value)
    assert _acronym_runs(a) == BATCH
    reprocess(Index.for_root(a), Registry([AcronymRecognizer()]), address=cluster.scheduler_address)
    reprocess(Index.for_root(b), Registry([AcronymRecognizer()]))
    assert _tables(a) == _tables(b)


def _acronym_runs(root: Path) -> int:
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM runs WHERE recognizer = 'acronyms'").fetchone()[0]
    finally:
        con.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_is_one_line_and_the_index_is_unchanged(built, tmp_path):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    toml = f'{RULES}\n[engine]\nkind = "dask"\naddress = "{address}"\ntimeout = 0.5\n'
    (root,) = _copies(built, tmp_path / "docs", toml=toml)
    with unchanged(Index.for_root(root)) as idx:
        with pytest.raises(EngineUnavailable) as e:
            reprocess(idx, Registry(_rules()), redo_all=True)
        assert str(e.value).startswith(f"cannot reach the Dask scheduler at {address} within 0.5 s")
        assert "check that it runs and the address" in str(e.value)
        r = run_cli("reprocess", "--all", cwd=root)
        assert r.returncode == 1
        assert r.stderr.split() == f"error: {e.value}".split()  # one line, as wide as it is
        r = run_cli("reprocess", "--all", "--engine", "local", "--spool", "/shared", cwd=root)
        assert r.returncode == 2 and "--spool is for a Dask cluster" in r.stderr


def test_kbx_index_with_an_unreachable_engine_says_the_files_are_in(tmp_path):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    toml = f'{RULES}\n[engine]\nkind = "dask"\naddress = "{address}"\ntimeout = 0.5\n'
    root = _corpus(tmp_path / "docs", toml)
    with pytest.raises(EngineUnavailable) as e:
        index(root, registry=Registry([IdentifierRecognizer(), Where()]))
    assert str(e.value).startswith(
        "every file is indexed and searchable, but the model pass did not run: cannot reach "
        f"the Dask scheduler at {address}"
    )
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    counts = con.execute(
        "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM runs "
        "WHERE recognizer = 'identifiers'), (SELECT count(*) FROM runs WHERE recognizer = 'where')"
    ).fetchone()
    con.close()
    assert counts == (N_DOCS, N_DOCS, 0)


def _spooled(cluster, spool: Path) -> str:
    return (
        f'{RULES}\n[engine]\nkind = "dask"\naddress = "{cluster.scheduler_address}"\n'
        f'spool = "{spool}"\n'
    )


def _passes(spool: Path) -> list[str]:
    return sorted(p.name for p in spool.glob("kbx-pass-*"))


RICH = {  # units with inline code spans and table cells, the columns a file must carry whole
    "inline.md": "# Setup\n\nRun `make NASA` for doi:10.1145/1629575.1629596.\n",
    "block.md": "# Build\n\n```\nNASA cedar 42\n```\n",
    "table.md": "# Sizes\n\n| name | doi |\n| --- | --- |\n| NASA cedar | 10.1145/3132747.31 |\n",
}


def test_batches_through_spool_files_equal_the_local_pass_row_for_row(cluster, tmp_path):
    flag, spool = tmp_path / "died", tmp_path / "spool"
    built = _corpus(tmp_path / "built")
    for name, text in RICH.items():
        (built / name).write_text(text)
    index(built, registry=Registry([IdentifierRecognizer()]))
    con = duckdb.connect(str(Index.for_root(built).db), read_only=True)
    layout = con.execute(
        "SELECT count(code_spans), count(breaks), count(*) FILTER (kind = 'code') FROM units"
    ).fetchone()
    con.close()
    assert layout == (1, 1, 1)  # each kind of layout rides in the files
    a, b = _copies(built, tmp_path / "a", tmp_path / "b", toml=_spooled(cluster, spool))
    seen: list[list[str]] = []

    def look(name: str, done: int, total: int) -> None:
        (folder,) = _passes(spool)  # this pass's own folder, locked while it runs
        seen.append(sorted(p.name for p in (spool / folder).glob("batch-*")))

    recognizers = lambda: Registry([*_rules(), Dying(flag), Fussy()])  # noqa: E731
    remote = reprocess(Index.for_root(a), recognizers(), redo_all=True, progress=look)
    assert flag.is_file(), "no worker met the marked unit"
    local = reprocess(Index.for_root(b), recognizers(), redo_all=True, engine="local")
    assert _tables(a) == _tables(b)
    fussy = [m[6] for m in _tables(a)[0] if m[1] == "fussy"]
    assert "NASA" in fussy and not any("42" in m for m in fussy)  # the rules held
    assert [(d.name, d.units, d.mentions) for d in remote.done] == [
        (d.name, d.units, d.mentions) for d in local.done
    ]
    assert "batch-000002.arrow" in seen[0]  # the batches went as files, each gone once back
    assert "batch-000001.arrow" not in seen[0]
    assert _passes(spool) == [] and _plugins(cluster) == []


KILLED = """
import sys
import kbx.annotate.run as run
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
from kbx_test_plugin import AcronymRecognizer
run.BATCH_UNITS = int(sys.argv[2])
reprocess(Index.for_root(sys.argv[1]), Registry([AcronymRecognizer()]))
"""


def test_a_killed_passs_spool_files_are_never_read_by_the_next_and_are_removed(
    cluster, built, tmp_path
):
    spool = tmp_path / "spool"
    a, b = _copies(built, tmp_path / "a", tmp_path / "b", toml=_spooled(cluster, spool))
    env = {**os.environ, "KBX_KILL_AT": "recognize.batch"}  # as kill -9 after the first commit
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env["PYTHONPATH"]])
    child = subprocess.run(
        [sys.executable, "-c", KILLED, str(a), str(BATCH)],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == 137, child.stderr.decode()[-2000:]
    (left,) = _passes(spool)
    assert sorted(p.name for p in (spool / left).glob("batch-*")) == [
        f"batch-00000{i}.arrow"
        for i in (2, 3, 4)  # in flight when it died
    ]
    assert _acronym_runs(a) == BATCH
    seen: list[list[str]] = []
    rest = reprocess(
        Index.for_root(a),
        Registry([AcronymRecognizer()]),
        progress=lambda *_: seen.append(_passes(spool)),
    )
    assert rest.done[0].units == N_DOCS - BATCH
    assert all(len(now) == 1 and left not in now for now in seen)  # swept before it began
    assert _passes(spool) == []
    reprocess(Index.for_root(b), Registry([AcronymRecognizer()]), engine="local")
    assert _tables(a) == _tables(b)


def test_a_spool_this_process_cannot_write_is_one_line_and_the_index_is_unchanged(
    cluster, built, tmp_path
):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    (root,) = _copies(built, tmp_path / "docs", toml=_spooled(cluster, blocked / "spool"))
    with unchanged(Index.for_root(root)) as idx, pytest.raises(EngineUnavailable) as e:
        reprocess(idx, Registry(_rules()), redo_all=True)
    assert str(e.value).startswith(f"cannot write the spool folder {blocked / 'spool'} (")
    assert str(e.value).endswith("a folder this process can write and every worker reads")


def test_engine_settings_are_checked_where_they_are_read(tmp_path):
    (tmp_path / "kbx.toml").write_text('[engine]\nkind = "ray"\n')
    with pytest.raises(BadArgument, match="engine kind 'ray': choose from local, dask"):
        load_config(tmp_path)
    (tmp_path / "kbx.toml").write_text('[engine]\nkind = "dask"\naddress = "10.0.0.5"\n')
    with pytest.raises(BadArgument, match="give tcp://HOST:PORT"):
        load_config(tmp_path)
    with pytest.raises(BadArgument, match="needs the scheduler's address"):
        EngineConfig().override("dask", None)
    with pytest.raises(BadArgument, match="with --engine dask"):
        EngineConfig().override("local", "tcp://127.0.0.1:8786")
    assert EngineConfig().override(None, "tcp://h:1") == EngineConfig("dask", "tcp://h:1")
    dask = EngineConfig("dask", "tcp://h:1", 2.0)
    assert dask.override("local", None) == EngineConfig("local", None, 2.0)
    (tmp_path / "kbx.toml").write_text(
        '[engine]\nkind = "dask"\naddress = "tcp://h:1"\nspool = "spool"\n'
    )
    with pytest.raises(BadArgument, match="engine spool 'spool': give the absolute path"):
        load_config(tmp_path)
    spooled = EngineConfig("dask", "tcp://h:1", 2.0, "/shared/spool")
    assert spooled.override(None, "tcp://g:2") == EngineConfig(
        "dask", "tcp://g:2", 2.0, "/shared/spool"
    )
    assert spooled.override("local", None) == EngineConfig("local", None, 2.0)
    assert dask.override(None, None, "/other") == EngineConfig("dask", "tcp://h:1", 2.0, "/other")
    with pytest.raises(BadArgument, match="--spool is for a Dask cluster"):
        dask.override("local", None, "/other")
    with pytest.raises(BadArgument, match="engine spool 'rel': give the absolute path"):
        dask.override(None, None, "rel")


def test_a_missing_engine_package_is_one_line_naming_what_to_install(monkeypatch):
    # no honest way to uninstall distributed for one test: block its import instead
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.delitem(sys.modules, "kbx.annotate.dask_engine", raising=False)
    with pytest.raises(EngineUnavailable) as e:
        connect(EngineConfig("dask", "tcp://127.0.0.1:8786"))
    assert str(e.value) == install_line("distributed")
    assert str(e.value) == (
        "the dask engine needs distributed, which is not installed: pip install "
        "'kbx[cluster]' (it brings dask, distributed and pyarrow)"
    )
    assert connect(EngineConfig()) is None  # the local engine needs nothing
