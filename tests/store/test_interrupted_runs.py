"""A run cut anywhere, by Ctrl-C or ``kill -9``, with the spaCy pass and the names pass in
it: the next ``kbx index`` brings every table (terms, names context and entity layer
included) to what a fresh build of the same files holds. The moments are drawn at random
(seeded, so a failure reruns) over the whole length of a real run, not only at the named
kill points that ``test_consistency`` walks."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import attached, ctrl_c_reaches

from kbx.indexing.ingest import index
from kbx.store.consistency import contents as store_contents
from kbx.store.db import Index

pytestmark = pytest.mark.slow  # a real run with the model, four times over

MODEL = '[recognizers]\ndisable = ["gliner"]\n'  # rules, spaCy and the names pass
PEOPLE = ["Maya Okafor", "Ryan Dahl", "Ada Lovelace", "Grace Hopper", "Linus Torvalds"]


def _files() -> dict[str, str]:
    """Notes that name people in full and then by surname, over several units each, so the
    names pass has work in every document and the model pass runs several batches."""
    out = {}
    for i in range(12):
        a, b = PEOPLE[i % 5], PEOPLE[(i + 2) % 5]
        sections = [
            f"## Part {j}\n\n{a} met {b} in Lisbon on {j + 1} March 2022 to review the "
            f"release. {b.split()[-1]} agreed, and {a.split()[-1]} wrote it up."
            for j in range(4)
        ]
        out[f"note{i:02}.md"] = f"# Note {i}\n\n" + "\n\n".join(sections) + "\n"
    return out


def _contents(root: Path) -> dict[str, list]:
    with attached(Index.for_root(root).db) as con:
        return store_contents(con)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, list], float]:
    """The files, what a fresh build of them holds, and how long a ``kbx index`` of them
    takes in a child process (the span the interruptions are drawn over)."""
    root = tmp_path_factory.mktemp("corpus") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(MODEL)
    for name, text in _files().items():
        (root / name).write_text(text)
    fresh = tmp_path_factory.mktemp("fresh") / "docs"
    shutil.copytree(root, fresh)
    index(fresh, workers=1)
    built = _contents(fresh)
    assert any("'spacy'" in row for row in built["runs"]), "the model pass must run here"
    timed = tmp_path_factory.mktemp("timed") / "docs"
    shutil.copytree(root, timed)
    started = time.monotonic()
    _kbx_index(timed).wait(timeout=300)
    return root, built, time.monotonic() - started


def _kbx_index(root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kbx", "index", str(root), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=ctrl_c_reaches,
    )


@pytest.mark.parametrize(
    ("seed", "how"),
    [(1, signal.SIGINT), (2, signal.SIGINT), (3, signal.SIGKILL), (4, signal.SIGKILL)],
)
def test_a_run_cut_at_a_random_moment_is_made_whole_by_the_next(corpus, tmp_path, seed, how):
    files, fresh, seconds = corpus
    root = tmp_path / "docs"
    shutil.copytree(files, root)
    delay = random.Random(seed).uniform(0.1, 0.9) * seconds
    run = _kbx_index(root)
    time.sleep(delay)
    run.send_signal(how)
    run.wait(timeout=120)
    rerun = _kbx_index(root)
    assert rerun.wait(timeout=300) == 0
    assert _contents(root) == fresh, f"cut by {how.name} after {delay:.2f} s of {seconds:.2f}"
