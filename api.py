"""The Python API: one surface for the CLI, a server and anyone scripting kbx.

Each command is one function here, taking an ``Index`` (``Index.find()`` from a folder, or
``Index.for_root(path)``) and returning a result dataclass whose ``dataclasses.asdict`` is
the command's ``--json``. Errors are the named ones in ``kbx.errors``, each with its exit
code. Nothing here opens a connection of its own: the rooms below do, briefly.

    from kbx import api
    idx = api.Index.find()
    hits = api.search(idx, "supplier approval", filters=api.Filters(after="2021")).hits

A command imports only the rooms it needs: the names below load on first use, so
``kbx search`` never pays for the parsers, the HTTP clients or the NER models.
"""

from __future__ import annotations

import importlib

_WHERE = {  # name -> (module, attribute)
    "failure_line": ("kbx.annotate.failures", "shown"),
    "PlanRow": ("kbx.annotate.plan", "PlanRow"),
    "registry_for": ("kbx.annotate.setup", "registry_for"),
    "EditReport": ("kbx.entities.gazetteer", "EditReport"),
    "default_actor": ("kbx.entities.gazetteer", "default_actor"),
    "gazetteer_add": ("kbx.entities.gazetteer", "add"),
    "gazetteer_check": ("kbx.entities.gazetteer", "check"),
    "gazetteer_export": ("kbx.entities.gazetteer", "export"),
    "gazetteer_import": ("kbx.entities.gazetteer", "import_entries"),
    "gazetteer_list": ("kbx.entities.gazetteer", "listing"),
    "gazetteer_retract": ("kbx.entities.gazetteer", "retract"),
    "gazetteer_show": ("kbx.entities.gazetteer", "show"),
    "ImportReport": ("kbx.entities.imports", "ImportReport"),
    "gazetteer_import_file": ("kbx.entities.imports", "import_file"),
    "EntityDetail": ("kbx.entities.lookup", "EntityDetail"),
    "EntityRow": ("kbx.entities.lookup", "EntityRow"),
    "entities": ("kbx.entities.lookup", "entities"),
    "entity": ("kbx.entities.lookup", "entity"),
    "ResolveReport": ("kbx.entities.resolve", "ResolveReport"),
    "resolve": ("kbx.entities.resolve", "resolve"),
    "EXPORT_FORMATS": ("kbx.export.run", "FORMATS"),
    "ExportReport": ("kbx.export.run", "ExportReport"),
    "export": ("kbx.export.run", "export"),
    "GAZETTEER_TYPES": ("kbx.gazetteer.entries", "TYPES"),
    "IndexReport": ("kbx.indexing.ingest", "IndexReport"),
    "index": ("kbx.indexing.ingest", "index"),
    "VECTORS_STAGE": ("kbx.indexing.ingest", "VECTORS_STAGE"),
    "walk_of": ("kbx.indexing.ingest", "walk_of"),
    "ReprocessReport": ("kbx.indexing.reprocess", "ReprocessReport"),
    "purge": ("kbx.indexing.reprocess", "purge"),
    "reprocess": ("kbx.indexing.reprocess", "reprocess"),
    "Filters": ("kbx.search.filters", "Filters"),
    "GrepMatch": ("kbx.search.grep", "GrepMatch"),
    "GrepResult": ("kbx.search.grep", "GrepResult"),
    "grep": ("kbx.search.grep", "grep"),
    "MentionRow": ("kbx.search.mentions", "MentionRow"),
    "RecognizerRow": ("kbx.search.mentions", "RecognizerRow"),
    "mentions": ("kbx.search.mentions", "mentions"),
    "recognizers": ("kbx.search.mentions", "recognizers"),
    "Excerpt": ("kbx.search.read", "Excerpt"),
    "read": ("kbx.search.read", "read"),
    "Hit": ("kbx.search.search", "Hit"),
    "SearchResult": ("kbx.search.search", "SearchResult"),
    "search": ("kbx.search.search", "search"),
    "stay_warm": ("kbx.store.arrays", "stay_warm"),
    "Status": ("kbx.search.status", "Status"),
    "status": ("kbx.search.status", "status"),
    "Index": ("kbx.store.db", "Index"),
    "cursor": ("kbx.store.db", "cursor"),
    "VectorReport": ("kbx.vectors.run", "VectorReport"),
    "embed": ("kbx.indexing.embedding", "embed"),
    "CONFIG_FILE": ("kbx.config", "FILE"),
    "Found": ("kbx.source.walk", "Found"),
    "walk": ("kbx.source.walk", "walk"),
    "json_text": ("kbx.api_json", "json_text"),
    "to_json": ("kbx.api_json", "to_json"),
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    try:
        module, attr = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'kbx.api' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return __all__
