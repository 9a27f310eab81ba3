"""The spool's folders: locked by the pass that writes them (an OS lock, through filelock),
removed by the next pass once that pass is gone, never while it runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from kbx.annotate.spool import LOCK, PREFIX, Spool, read, sweep


def _in_child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def test_a_running_pass_keeps_its_folder_and_a_closed_one_leaves_none(tmp_path):
    spool = Spool(tmp_path, f"{PREFIX}a")
    path = spool.write([("h1", "text one"), ("h2", "text two", ["A"], "prose", [[0, 1]], [3])])
    assert read(path) == [
        ("h1", "text one", None, None, None, None),
        ("h2", "text two", ["A"], "prose", [[0, 1]], [3]),
    ]
    assert sweep(tmp_path) == [] and spool.folder.is_dir()  # held here
    child = _in_child(
        f"from pathlib import Path\nfrom kbx.annotate.spool import sweep\n"
        f"print(sweep(Path({str(tmp_path)!r})))"
    )
    assert child.stdout.strip() == "[]" and spool.folder.is_dir(), child.stderr  # and there
    spool.done(path)
    assert not Path(path).exists()
    spool.close()
    assert list(tmp_path.iterdir()) == []


def test_the_folder_of_a_killed_pass_is_swept(tmp_path):
    child = _in_child(
        f"""
        import os
        from kbx.annotate.spool import Spool
        s = Spool(__import__("pathlib").Path({str(tmp_path)!r}), "{PREFIX}killed")
        s.write([("h", "t")])
        os._exit(9)  # no close: as a kill -9 leaves it
        """
    )
    assert child.returncode == 9, child.stderr
    assert (tmp_path / f"{PREFIX}killed" / LOCK).is_file()
    assert sweep(tmp_path) == [f"{PREFIX}killed"]
    assert list(tmp_path.iterdir()) == []


def test_a_folder_without_a_lock_file_and_other_folders_are_left_alone(tmp_path):
    (tmp_path / f"{PREFIX}nolock").mkdir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / LOCK).write_text("")
    assert sweep(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kbx-pass-nolock", "mine"]
