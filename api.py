"""The Python API: one surface for the CLI, a server and anyone scripting kbx.

Each command is one function here, taking an ``Index`` (``Index.find()`` from a folder, or
``Index.for_root(path)``) and returning a result dataclass whose ``dataclasses.asdict`` is
the command's ``--json``. Errors are the named ones in ``kbx.errors``, each with its exit
code. Nothing here opens a connection of its own: the rooms below do, briefly.

    from kbx import api
    idx = api.Index.find()
    hits = api.search(idx, "supplier approval", filters=api.Filters(after="2021")).hits
"""

from __future__ import annotations

from kbx.gazetteer.entries import TYPES as GAZETTEER_TYPES
from kbx.store.db import Index
from kbx.store.entities import EntityDetail, EntityRow, entities, entity
from kbx.store.filters import Filters
from kbx.store.gazetteer import EditReport, default_actor, registry_for
from kbx.store.gazetteer import add as gazetteer_add
from kbx.store.gazetteer import check as gazetteer_check
from kbx.store.gazetteer import export as gazetteer_export
from kbx.store.gazetteer import import_entries as gazetteer_import
from kbx.store.gazetteer import listing as gazetteer_list
from kbx.store.gazetteer import retract as gazetteer_retract
from kbx.store.gazetteer import show as gazetteer_show
from kbx.store.grep import GrepMatch, GrepResult, grep
from kbx.store.ingest import IndexReport, index
from kbx.store.mentions import MentionRow, RecognizerRow, mentions, purge, recognizers
from kbx.store.read import Excerpt, read
from kbx.store.reprocess import PlanRow, ReprocessReport, reprocess
from kbx.store.resolve import ResolveReport, resolve
from kbx.store.search import Hit, SearchResult, search
from kbx.store.status import Status, status

__all__ = [
    "GAZETTEER_TYPES",
    "EditReport",
    "EntityDetail",
    "EntityRow",
    "Excerpt",
    "Filters",
    "GrepMatch",
    "GrepResult",
    "Hit",
    "Index",
    "IndexReport",
    "MentionRow",
    "PlanRow",
    "RecognizerRow",
    "ReprocessReport",
    "ResolveReport",
    "SearchResult",
    "Status",
    "default_actor",
    "entities",
    "entity",
    "gazetteer_add",
    "gazetteer_check",
    "gazetteer_export",
    "gazetteer_import",
    "gazetteer_list",
    "gazetteer_retract",
    "gazetteer_show",
    "grep",
    "index",
    "mentions",
    "purge",
    "read",
    "recognizers",
    "registry_for",
    "reprocess",
    "resolve",
    "search",
    "status",
]
