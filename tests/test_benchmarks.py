"""``python -m benchmarks``: the registry names scripts that are there, and a run puts the
line with its date, commit, load and command under the title of each section it writes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _dispatcher():
    spec = importlib.util.spec_from_file_location(
        "benchmarks_main", REPO / "benchmarks" / "__main__.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_registered_benchmark_is_a_script_and_the_list_names_it():
    bm = _dispatcher()
    assert [
        b.name for b in bm.REGISTRY if not (REPO / "benchmarks" / f"{b.name}.py").is_file()
    ] == []
    assert all(b.about and len(b.about) <= 75 for b in bm.REGISTRY)
    assert not [b.name for b in bm.REGISTRY if b.writes and b.section]  # one place or the other
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert all(f"  {b.name} " in out for b in bm.REGISTRY)
    assert max(len(line) for line in out.splitlines()) <= 100


def test_a_section_gets_the_run_line_under_its_title_once():
    bm = _dispatcher()
    once = bm.stamped("## Speed\n\nCommand: `x`.\n\n| a |\n", "Run: one.")
    assert once == "## Speed\n\nRun: one.\n\nCommand: `x`.\n\n| a |\n"
    assert bm.stamped(once, "Run: two.") == once.replace("one", "two")


def test_a_script_writing_its_section_is_stamped(tmp_path, monkeypatch, capsys):
    bm = _dispatcher()
    doc = tmp_path / "DOC.md"
    doc.write_text("# B\n\n## Fake\n\nold\n\n## Next\n\nkept\n")
    script = tmp_path / "fake.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\nfrom common import write_section\n"
        "write_section(Path(sys.argv[1]), '## Fake', '## Fake\\n\\nnew\\n', '# B\\n')\n"
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        assert bm.run("fake", [str(doc)], script) == 0
    finally:
        sys.modules.pop("common", None)
    text = doc.read_text()
    assert text.startswith("# B\n\n## Fake\n\nRun: ") and text.endswith(
        "\n\nnew\n\n## Next\n\nkept\n"
    )
    assert "command `python -m benchmarks fake " in text and "at the end" in text
    assert capsys.readouterr().out.startswith("Run: ")


def test_every_section_the_registry_names_is_in_the_benchmarks_doc():
    bm = _dispatcher()
    doc = (REPO / "docs" / "BENCHMARKS.md").read_text("utf-8").splitlines()
    titles = {line for line in doc if line.startswith("## ")}
    assert [b.section for b in bm.REGISTRY if b.section and b.section not in titles] == []
