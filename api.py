"""The Python API: one surface for the CLI, a server and anyone scripting kbx.

``kbx.Index`` (``kbx/library.py``) is the typed surface a script wants: its methods are
the commands. This module is what the faces (``cli/``, ``serve/``) see: each command's
definition (``kbx.options``: the options object the faces are generated from),
``perform`` (the one library function per command, taking that object), the functions
the commands are made of, each taking an ``Index`` and returning a result dataclass whose
``to_json`` is the command's ``--json``, and the presenters. Errors are the named ones in
``kbx.errors``, each with its exit code. Nothing here opens a connection of its own.

    from kbx import api
    idx = api.Index.find()
    hits = api.search(idx, "supplier approval", filters=api.Filters(after="2021")).hits

A command imports only the rooms it needs: the names below load on first use, so
``kbx search`` never pays for the parsers, the HTTP clients or the NER models. Type
checkers see every name (the imports under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kbx import present  # the text presenters: a pure leaf, loaded at once
from kbx.faces import Param
from kbx.faces import build as build_options
from kbx.faces import given as given_options
from kbx.faces import on as options_on
from kbx.faces import schema as options_schema
from kbx.options import (  # the definitions: a pure leaf, loaded at once
    CLI,
    COMMANDS,
    EVERY,
    HTTP,
    MCP,
    SERVED,
    Command,
    EmbedOptions,
    EntitiesOptions,
    EntityOptions,
    ExportOptions,
    Filters,
    GazetteerAddOptions,
    GazetteerCheckOptions,
    GazetteerExportOptions,
    GazetteerImportOptions,
    GazetteerListOptions,
    GazetteerRetractOptions,
    GazetteerShowOptions,
    GrepOptions,
    IndexOptions,
    McpOptions,
    MentionsOptions,
    ReadOptions,
    RecognizersOptions,
    ReprocessOptions,
    ResolveOptions,
    SearchOptions,
    ServeOptions,
    StatusOptions,
    interrupted,
)

if TYPE_CHECKING:
    from kbx.annotate.plan import PlanRow
    from kbx.annotate.setup import registry_for
    from kbx.api_json import json_text, to_json
    from kbx.config import FILE as CONFIG_FILE
    from kbx.config import Config, load_config
    from kbx.entities.gazetteer import EditReport, default_actor
    from kbx.entities.gazetteer import add as gazetteer_add
    from kbx.entities.gazetteer import check as gazetteer_check
    from kbx.entities.gazetteer import export as gazetteer_export
    from kbx.entities.gazetteer import import_entries as gazetteer_import
    from kbx.entities.gazetteer import listing as gazetteer_list
    from kbx.entities.gazetteer import retract as gazetteer_retract
    from kbx.entities.gazetteer import show as gazetteer_show
    from kbx.entities.imports import ImportReport
    from kbx.entities.imports import import_file as gazetteer_import_file
    from kbx.entities.lookup import EntityDetail, EntityRow, entities, entity
    from kbx.entities.resolve import ResolveReport, resolve
    from kbx.export.run import FORMATS as EXPORT_FORMATS
    from kbx.export.run import ExportReport, export
    from kbx.gazetteer.entries import TYPES as GAZETTEER_TYPES
    from kbx.indexing.embedding import embed
    from kbx.indexing.ingest import VECTORS_STAGE, IndexReport, index
    from kbx.indexing.reprocess import ReprocessReport, purge, reprocess
    from kbx.library import Index, perform
    from kbx.linking.resolvers import Settings as ResolveSettings
    from kbx.search.grep import GrepMatch, GrepResult, grep
    from kbx.search.mentions import MentionRow, RecognizerRow, mentions, recognizers
    from kbx.search.read import Excerpt, read
    from kbx.search.search import Hit, SearchResult, search
    from kbx.search.status import Status, status
    from kbx.vectors.run import VectorReport

_WHERE = {  # name -> (module, attribute)
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
    "ReprocessReport": ("kbx.indexing.reprocess", "ReprocessReport"),
    "purge": ("kbx.indexing.reprocess", "purge"),
    "reprocess": ("kbx.indexing.reprocess", "reprocess"),
    "Index": ("kbx.library", "Index"),
    "perform": ("kbx.library", "perform"),
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
    "Status": ("kbx.search.status", "Status"),
    "status": ("kbx.search.status", "status"),
    "VectorReport": ("kbx.vectors.run", "VectorReport"),
    "embed": ("kbx.indexing.embedding", "embed"),
    "CONFIG_FILE": ("kbx.config", "FILE"),
    "Config": ("kbx.config", "Config"),
    "load_config": ("kbx.config", "load_config"),
    "ResolveSettings": ("kbx.linking.resolvers", "Settings"),
    "json_text": ("kbx.api_json", "json_text"),
    "to_json": ("kbx.api_json", "to_json"),
}
# Plumbing for the server and the watcher, not for scripts: no part of __all__.
_PLUMBING = {
    "_cursor": ("kbx.store.db", "cursor"),
    "_stay_warm": ("kbx.store.arrays", "stay_warm"),
    "_walk": ("kbx.source.walk", "walk"),
    "_walk_of": ("kbx.indexing.ingest", "walk_of"),
    "_Found": ("kbx.source.walk", "Found"),
}

__all__ = [  # every public name; the plumbing above is left out
    "CLI",
    "COMMANDS",
    "CONFIG_FILE",
    "Config",
    "Command",
    "EVERY",
    "EXPORT_FORMATS",
    "EditReport",
    "EntitiesOptions",
    "ReprocessOptions",
    "EmbedOptions",
    "ResolveOptions",
    "RecognizersOptions",
    "IndexOptions",
    "EntityDetail",
    "EntityOptions",
    "EntityRow",
    "Excerpt",
    "ExportOptions",
    "ExportReport",
    "Filters",
    "GAZETTEER_TYPES",
    "GazetteerAddOptions",
    "GazetteerImportOptions",
    "GazetteerCheckOptions",
    "GazetteerExportOptions",
    "GazetteerShowOptions",
    "GazetteerListOptions",
    "GazetteerRetractOptions",
    "GrepMatch",
    "GrepOptions",
    "GrepResult",
    "HTTP",
    "Hit",
    "ImportReport",
    "Index",
    "IndexReport",
    "MCP",
    "MentionRow",
    "MentionsOptions",
    "ServeOptions",
    "McpOptions",
    "Param",
    "PlanRow",
    "ReadOptions",
    "RecognizerRow",
    "ReprocessReport",
    "ResolveSettings",
    "ResolveReport",
    "SERVED",
    "SearchOptions",
    "SearchResult",
    "Status",
    "StatusOptions",
    "VECTORS_STAGE",
    "VectorReport",
    "build_options",
    "default_actor",
    "embed",
    "entities",
    "entity",
    "export",
    "gazetteer_add",
    "gazetteer_check",
    "gazetteer_export",
    "gazetteer_import",
    "gazetteer_import_file",
    "gazetteer_list",
    "gazetteer_retract",
    "gazetteer_show",
    "given_options",
    "grep",
    "index",
    "interrupted",
    "json_text",
    "load_config",
    "mentions",
    "options_on",
    "options_schema",
    "perform",
    "present",
    "purge",
    "read",
    "recognizers",
    "registry_for",
    "reprocess",
    "resolve",
    "search",
    "status",
    "to_json",
]


def __getattr__(name: str) -> object:
    try:
        module, attr = _WHERE.get(name) or _PLUMBING[name]
    except KeyError:
        raise AttributeError(f"module 'kbx.api' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return __all__
