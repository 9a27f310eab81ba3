"""A command imports what it needs when it runs: the CLI and the search path never load the
NER models, the HTTP clients, the quantity and date libraries or the format parsers; a text
search never loads rich; a process builds only the command it runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import typer

from kbx.cli.app import app, only
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry

HEAVY = (
    "spacy", "torch", "gliner", "requests", "httpx", "httpx2", "habanero", "pyalex",
    "pint", "dateparser", "markdown_it", "markdown_it_pyrs", "yaml", "pypdf", "pdfminer",
    "bs4", "lxml",
    "kbx.extract.document", "kbx.recognizers.dates", "kbx.linking.resolvers", "rich.progress",
    "kbx.recognizers.quantities",  # its patterns compile in a few tenths of a second
    "rich",  # tens of milliseconds; only help, errors, bars and some commands' text need it
)  # fmt: skip


def _modules(code: str, cwd: Path | None = None) -> set[str]:
    """The modules a fresh Python holds after running ``code``."""
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _loaded(code: str, cwd: Path | None = None) -> list[str]:
    modules = _modules(code, cwd)
    return sorted(m for m in HEAVY if m in modules)


def test_importing_the_cli_loads_nothing_heavy():
    modules = _modules("import kbx.cli.app")
    assert sorted(m for m in HEAVY if m in modules) == []
    assert not modules & {"duckdb", "numpy", "pydantic"}  # loaded when a command runs


def test_a_text_search_loads_nothing_heavy(tmp_path):
    (tmp_path / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    (tmp_path / "a.md").write_text("# Pumps\n\nPrime the pump before the first run.\n")
    index(tmp_path, registry=Registry([]))
    run = (
        "import contextlib, io\nfrom kbx.cli.app import main\n"
        "sys.argv = ['kbx', 'search', 'the pump']\nwith contextlib.suppress(SystemExit), "
        "contextlib.redirect_stdout(io.StringIO()) as out:\n    main()\n"
        "assert 'a.md' in out.getvalue(), out.getvalue()"
    )
    modules = _modules(run, cwd=tmp_path)
    assert sorted(m for m in HEAVY if m in modules) == []
    assert "pydantic" not in modules  # typer 0.29 coerces parameters through it (pyproject)
    # a small index is ranked in SQL: numpy (tens of ms to import) only with the mapped
    # files of a large one (search/bm25.py); the offset maps read without it (textmap)
    assert "numpy" not in modules


def test_a_filtered_json_search_on_a_small_index_loads_no_numpy(tmp_path):
    (tmp_path / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    (tmp_path / "a.md").write_text("# Pumps\n\nPrime the pump before the first run.\n")
    index(tmp_path, registry=Registry([]))
    run = (
        "import contextlib, io\nfrom kbx.cli.app import main\n"
        "sys.argv = ['kbx', 'search', 'pump', '--path', '*.md', '--json']\n"
        "with contextlib.suppress(SystemExit), "
        "contextlib.redirect_stdout(io.StringIO()) as out:\n    main()\n"
        "assert '\"a.md\"' in out.getvalue(), out.getvalue()"
    )
    modules = _modules(run, cwd=tmp_path)
    assert sorted(m for m in HEAVY if m in modules) == []
    assert not modules & {"numpy", "pydantic"}


def test_a_process_builds_only_the_command_it_runs():
    names = {
        typer.main.get_command_name(c.name or c.callback.__name__) for c in app.registered_commands
    }
    names |= {g.name for g in app.registered_groups}
    assert {"search", "read", "gazetteer", "index"} <= names
    for name in names:  # each command reachable alone, under its own name
        built = typer.main.get_command(only(name))
        assert isinstance(built, typer.core.TyperGroup) and list(built.commands) == [name]
    assert only("--help") is app and only("serch") is app and only("") is app


def test_the_search_path_loads_nothing_heavy():
    code = "from kbx import api\napi.search, api.Index, api.Filters, api.grep, api.entities"
    assert _loaded(code) == []


def test_the_probe_sees_a_heavy_import():  # the two tests above could fail
    assert "kbx.extract.document" in _loaded("from kbx import api; api.read")


def test_an_unchanged_folders_index_compiles_no_recognizer_pattern(tmp_path):
    """The date and quantity patterns (about 130 ms to compile) wait for a text to read:
    ``kbx index`` of an unchanged folder, what an agent runs before searching, has none."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nFive kg on 4 March 2021.\n")
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner"]\n')
    index(root)
    probe = (
        "from kbx.indexing.ingest import index\n"
        "from kbx.recognizers import dates, quantities\n"
        f"index({str(root)!r})\n"
        "print(dates._expressions.cache_info().currsize,"
        " quantities._quantity.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["0", "0"]
    (root / "a.md").write_text("# A\n\nSix kg on 5 March 2021.\n")
    changed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert changed.stdout.split()[-2:] == ["1", "1"]  # the probe sees a compile


def test_a_text_search_on_a_large_index_loads_numpy_and_nothing_heavy(tmp_path, monkeypatch):
    """A large index is ranked over its mapped postings: numpy then pays for itself (and
    only then); the parsers, models and HTTP clients stay unloaded all the same."""
    from kbx.store import arrays

    monkeypatch.setattr(arrays, "WARM", False)
    monkeypatch.setattr(arrays, "MAPPED_MIN_BYTES", 64)  # this folder counts as large
    (tmp_path / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    for i in range(30):
        (tmp_path / f"p{i}.md").write_text(f"# Pump {i}\n\nPrime pump {i} before run {i}.\n")
    index(tmp_path, registry=Registry([]))
    run = (
        "import contextlib, io\nfrom kbx.store import arrays\narrays.MAPPED_MIN_BYTES = 64\n"
        "from kbx.cli.app import main\nsys.argv = ['kbx', 'search', 'prime pump']\n"
        "with contextlib.suppress(SystemExit), "
        "contextlib.redirect_stdout(io.StringIO()) as out:\n    main()\n"
        "assert '.md' in out.getvalue(), out.getvalue()"
    )
    modules = _modules(run, cwd=tmp_path)
    assert sorted(m for m in HEAVY if m in modules) == []
    assert "kbx.store.postings_file" in modules and "numpy" in modules  # the mapped ranking
