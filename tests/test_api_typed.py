"""The library a script sees is typed: the README's Python example type-checks under mypy
(its results' fields known, not ``object``), a mistake in it does not, and it runs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kbx

ROOT = Path(__file__).resolve().parent.parent


def _example() -> str:
    """The README's Python example: the indented block of its Python API section."""
    section = (ROOT / "README.md").read_text().split("## Python API", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"\n((?:    .*\n|\n)*?    import kbx\n(?:    .*\n|\n)+)", section)
    assert block, "the README's Python API section has no example"
    return "\n".join(line[4:] for line in block.group(1).splitlines()).strip() + "\n"


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    (tmp_path / "path").mkdir(exist_ok=True)
    link = tmp_path / "path" / "kbx"  # the package as mypy finds it (the install is editable)
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    (tmp_path / "example.py").write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
         "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), "example.py"],
        cwd=tmp_path, env={"MYPYPATH": str(tmp_path / "path"), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.skipif(not shutil.which("mypy", path=str(Path(sys.executable).parent)),
                    reason="mypy is in the test extra")  # fmt: skip
def test_the_readmes_example_type_checks(tmp_path):
    code = _example()
    assert "kbx.Index" in code and ".search(" in code
    checked = _mypy(tmp_path, code + "reveal_type(r.hits[0].start_line)\n")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert 'Revealed type is "int"' in checked.stdout  # a field's type, not Any
    wrong = _mypy(tmp_path, code + "r.hits[0].no_such_field\nidx.search(3)\n")
    assert wrong.returncode == 1
    assert '"Hit" has no attribute "no_such_field"' in wrong.stdout
    assert 'incompatible type "int"; expected "str"' in wrong.stdout


def test_the_readmes_example_runs(tmp_path, monkeypatch):
    (tmp_path / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner"]\n')
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log.md").write_text("# Run\n\nERR_4021 on 2022-01-03.\n")
    (tmp_path / "cedar.md").write_text("# Cedar\n\nSupplier approval, signed 4 March 2021.\n")
    kbx.index(tmp_path)
    monkeypatch.chdir(tmp_path)
    printed: list[tuple] = []
    exec(_example(), {"print": lambda *a: printed.append(a)})
    assert printed[0][:3] == ("cedar.md", 1, 3)
    assert printed[-1][:2] == ("logs/a.log.md", 3)


def test_plumbing_is_not_part_of_the_surface():
    from kbx import api

    public = set(dir(api)) | set(kbx.__all__)
    assert not public & {"cursor", "stay_warm", "walk", "walk_of", "Found"}
    assert {"Index", "Filters", "perform", "SearchOptions", "COMMANDS"} <= set(dir(api))
    assert {m for m in dir(kbx.Index) if not m.startswith("_")} >= {
        "search", "grep", "read", "status", "entities", "entity", "mentions", "recognizers",
        "gazetteer_add", "gazetteer_retract", "export", "resolve", "embed", "reprocess",
    }  # fmt: skip
