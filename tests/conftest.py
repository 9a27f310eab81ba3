"""Shared fixtures."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import POSTS, copy_index, make_tiny_gliner, registry_with_gazetteer, write_corpus

from kbx.indexing.ingest import index
from kbx.store import arrays
from kbx.store.db import Index

PLUGIN = Path(__file__).parent / "plugin"
_SITE = pytest.StashKey[Path]()

# The tiers (docs/TESTING.md): markers given here, by module, test or fixture, so a test
# file need not say. `make test` runs every test; `make test-fast` leaves out these three.
SLOW = {  # crash and fuzz runs, and the heaviest property and fault tests
    "store/test_consistency.py",  # a writer killed at each named point, then repaired
    "store/test_faults.py",  # kill -9 mid-transaction; readers waiting on a writer
    "store/test_fuzz.py",  # the fuzz matrix's fast subset (benchmarks/fuzz.py: all of it)
    "store/test_hostile.py",  # pipes, names not UTF-8, YAML bombs, deep nesting, bad imports
    "store/test_resolve_faults.py",  # every HTTP fault resolve meets, with its time limits
    "extract/test_citations.py",  # properties over each format's real parser
    "extract/test_analysis_unicode.py::test_every_code_point_alone_and_inside_a_word",
}
CHROMIUM = {"serve/test_page.py"}  # Debian's Chromium through Playwright
TORCH = {"tiny_gliner"}  # fixtures that need torch (GLiNER)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by them
def pytest_collection_modifyitems(config, items) -> None:
    """Mark each test ``slow``, ``chromium`` or ``torch`` as the sets above say."""
    here = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(here):
            continue
        module = item.path.relative_to(here).as_posix()
        if module in SLOW or f"{module}::{getattr(item, 'originalname', item.name)}" in SLOW:
            item.add_marker(pytest.mark.slow)
        if module in CHROMIUM:
            item.add_marker(pytest.mark.chromium)
        if TORCH & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.torch)


@pytest.fixture(autouse=True)
def cold() -> Iterator[None]:
    """Every test, and every fixture made between tests, runs as a cold process would: a
    server's ``stay_warm`` (which makes writes export the mapped files and reads map them),
    even one a module's fixture started, does not leak into the next test."""
    arrays.WARM = False
    yield
    arrays.WARM = False


@pytest.fixture
def warm(monkeypatch) -> None:
    """As in a server: writes export the mapped files and reads map them, at any size."""
    monkeypatch.setattr(arrays, "WARM", True)


def pytest_configure(config) -> None:
    """Make the test plugin installed for this run only: a dist-info with its entry point
    in a temporary folder on the path of this process and of the ``kbx`` subprocesses the
    tests start. Nothing enters the environment a user's ``kbx`` runs in."""
    site = config.stash[_SITE] = Path(tempfile.mkdtemp(prefix="kbx-test-plugin-"))
    info = site / "kbx_test_plugin-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kbx-test-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[kbx.recognizers]\nacronyms = kbx_test_plugin:AcronymRecognizer\n"
    )
    # Indexes here are small and the workers fill the cores: DuckDB on one thread spends
    # less on handing out tasks (docs/TESTING.md), in this process and the kbx it starts
    os.environ.setdefault("KBX_DUCKDB_THREADS", "1")
    os.environ["KBX_CACHE_DIR"] = str(site / "cache")  # models' optimized copies
    paths = [str(site), str(PLUGIN)]
    sys.path[:0] = paths
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [*paths, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    _compile_package()


def _compile_package() -> None:
    """Byte-compile kbx's modules once for the ``kbx`` processes the tests start: where
    PYTHONDONTWRITEBYTECODE is set (as on this machine), each child would compile what it
    imports again, about 0.25 s of CPU each (a no-op when the caches are current)."""
    import compileall

    import kbx

    root = Path(kbx.__file__).parent
    for path in root.iterdir():  # the package's own rooms, not the venv or the tests
        if path.suffix == ".py":
            compileall.compile_file(path, quiet=1)
        elif (path / "__init__.py").is_file() and path.name not in ("tests", "benchmarks"):
            compileall.compile_dir(path, quiet=1)


def pytest_unconfigure(config) -> None:
    """The run's plugin folder goes with the run (one was left in the temp folder per run)."""
    site = config.stash.get(_SITE, None)
    if site is not None:
        shutil.rmtree(site, ignore_errors=True)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder with one document of each format, an ignored draft and a hidden folder."""
    return write_corpus(tmp_path / "docs")


@pytest.fixture(scope="session")
def indexed_corpus_template(tmp_path_factory) -> Path:
    """``corpus`` as ``index(corpus)`` leaves it (the recognizers a user gets), once per run."""
    root = write_corpus(tmp_path_factory.mktemp("corpus") / "docs")
    index(root)
    return root


@pytest.fixture
def indexed_corpus(indexed_corpus_template: Path, tmp_path: Path) -> Path:
    """``corpus`` after ``index(corpus)``, at the same place: a copy of one build per run."""
    return copy_index(indexed_corpus_template, tmp_path / "docs").root


@pytest.fixture(scope="session")
def posts_template(tmp_path_factory) -> Path:
    """The folder of ``posts`` and its index, built once per run."""
    root = tmp_path_factory.mktemp("posts") / "posts-root"
    for rel, text in POSTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for i in range(12):  # filler, so that an edit has units to leave alone
        (root / "filler" / f"f{i}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / "filler" / f"f{i}.md").write_text(f"# Filler {i}\n\nNothing named here, {i}.\n")
    index(root, registry=registry_with_gazetteer(Index.for_root(root)))
    return root


@pytest.fixture
def posts(posts_template: Path, tmp_path: Path) -> Index:
    """Dated, authored, categorized posts naming OpenSSL, CVEs, a DOI and Apple; and filler:
    indexed with identifiers, dates and the gazetteer (a copy of one build per run)."""
    return copy_index(posts_template, tmp_path / "posts-root")


@pytest.fixture(scope="session")
def tiny_gliner(tmp_path_factory) -> Path:
    """A tiny GLiNER model folder, built once per run (nothing large is committed)."""
    return make_tiny_gliner(tmp_path_factory.mktemp("gliner"))


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes and their scheduler, for the whole module
    (a real Dask cluster: the engine tests, tests/test_engine.py and the vectors')."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as c:
        yield c
