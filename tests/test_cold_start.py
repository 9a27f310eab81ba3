"""A command imports what it needs when it runs: the CLI and the search path never load the
NER models, the HTTP clients, the quantity and date libraries or the format parsers."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "spacy", "torch", "gliner", "requests", "httpx", "httpx2", "habanero", "pyalex",
    "pint", "dateparser", "markdown_it", "yaml", "pypdf", "pdfminer", "bs4", "lxml",
    "kbx.extract.document", "kbx.recognizers.dates", "kbx.linking.resolvers", "rich.progress",
    "kbx.recognizers.quantities",  # its patterns compile in a few tenths of a second
)  # fmt: skip


def _loaded(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    modules = set(json.loads(out.stdout.splitlines()[-1]))
    return sorted(m for m in HEAVY if m in modules)


def test_importing_the_cli_loads_nothing_heavy():
    assert _loaded("import kbx.cli.app") == []


def test_the_search_path_loads_nothing_heavy():
    code = "from kbx import api\napi.search, api.Index, api.Filters, api.grep, api.entities"
    assert _loaded(code) == []


def test_the_probe_sees_a_heavy_import():  # the two tests above could fail
    assert "kbx.extract.document" in _loaded("from kbx import api; api.read")
