"""The direction of imports, as a test: the flow runs one way, and the CLI sees one surface."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"tests", "benchmarks", "examples", ".venv", "docs"}


def _modules() -> dict[str, set[str]]:
    """Each kbx module, and the kbx modules it imports."""
    found = {}
    tops = [p for p in ROOT.iterdir() if p.name not in SKIP and not p.name.startswith(".")]
    paths = [p for top in tops for p in ([top] if top.is_file() else top.rglob("*.py"))]
    for path in paths:  # not a walk of the root, which would go through the venv too
        rel = path.relative_to(ROOT)
        if path.suffix != ".py" or any(p.startswith(".") or p == "build" for p in rel.parts):
            continue
        name = ".".join(["kbx", *rel.with_suffix("").parts]).removesuffix(".__init__")
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
        found[name] = {m for m in imported if m == "kbx" or m.startswith("kbx.")}
    return found


MODULES = _modules()


def _in(module: str, room: str) -> bool:
    return module == room or module.startswith(room + ".")


LEAVES = (
    "kbx.errors",
    "kbx.config",
    "kbx.analysis",
    "kbx.timex",
    "kbx.extract",
    "kbx.recognizers",
    "kbx.gazetteer",
    "kbx.linking",
    "kbx.source",
    "kbx.api_json",
    "kbx.languages",
    "kbx.wordchars",
    "kbx.densest",
    "kbx.options",
    "kbx.faces",
    "kbx.present",
)
# The flow, bottom to top: each room may import the rooms before it, never one after it.
ORDER = [
    "kbx.store",
    "kbx.annotate",
    "kbx.vectors",
    "kbx.entities",
    "kbx.search",
    "kbx.export",
    "kbx.indexing",
    "kbx.library",
    "kbx.api",
    "kbx.serve",
    "kbx.cli",
]
WHY = {
    "kbx.store": "the DuckDB layer knows no recognizer, entity or query",
    "kbx.annotate": "running recognizers does not depend on what is made of their mentions",
    "kbx.vectors": "a unit's vector is made from its text alone: no mention, entity or query",
    "kbx.entities": "the entity layer is built from mentions, not from the read path",
    "kbx.search": "the read path never writes: it imports no write command",
    "kbx.export": "an export reads the store as search does: it imports no write command",
    "kbx.indexing": "the write commands are below the one surface",
    "kbx.library": "the typed library calls the commands; the faces reach it through kbx.api",
    "kbx.api": "nothing below the faces (serve, cli) knows them",
    "kbx.serve": "the server is a face like the CLI, which starts it",
}
RULES = [  # (who, may not import, why)
    *(
        (leaf, room, "leaves are pure: no database, no command")
        for leaf in LEAVES
        for room in ORDER
    ),
    *((who, later, WHY[who]) for i, who in enumerate(ORDER[:-1]) for later in ORDER[i + 1 :]),
    # the vectors stage stands beside the recognizers: neither runs through the other
    ("kbx.vectors", "kbx.annotate", "a unit's vector does not depend on its mentions"),
    # search reads the entity layer only through its lookups
    *(
        ("kbx.search", f"kbx.entities.{m}", "search reads entities through entities.lookup")
        for m in ("build", "gazetteer", "resolve")
    ),
]


@pytest.mark.parametrize(("who", "banned", "why"), RULES)
def test_imports_run_one_way(who, banned, why):
    wrong = sorted(
        f"{m} imports {i}"
        for m, imports in MODULES.items()
        if _in(m, who)
        for i in imports
        if _in(i, banned)
    )
    assert wrong == [], why


@pytest.mark.parametrize(
    ("face", "allowed"),
    [
        ("kbx.cli", ("kbx.api", "kbx.errors", "kbx.cli")),
        ("kbx.serve", ("kbx.api", "kbx.errors", "kbx.serve")),
    ],
)
def test_the_faces_see_only_the_api_and_the_errors(face, allowed):
    wrong = sorted(
        f"{m} imports {i}"
        for m, imports in MODULES.items()
        if _in(m, face) and m != "kbx.cli.serve"  # which starts the server
        for i in imports
        if i != "kbx" and not any(_in(i, a) for a in allowed)
    )
    assert wrong == []


def test_only_the_serve_command_imports_the_server():
    starts = sorted(
        m
        for m, imports in MODULES.items()
        if not _in(m, "kbx.serve") and any(_in(i, "kbx.serve") for i in imports)
    )
    assert starts == ["kbx.cli.serve"]
    allowed = ("kbx.api", "kbx.errors", "kbx.cli", "kbx.serve")
    assert all(any(_in(i, a) for a in allowed) for i in MODULES["kbx.cli.serve"] - {"kbx"})


def test_the_rules_see_the_code():
    assert "kbx.indexing.ingest" in MODULES and "kbx.store.db" in MODULES["kbx.indexing.ingest"]
    assert all(any(_in(m, room) for m in MODULES) for room in (*LEAVES, *ORDER))
