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

from kbx.annotate.plan import PlanRow
from kbx.annotate.setup import registry_for
from kbx.entities.gazetteer import EditReport, default_actor
from kbx.entities.gazetteer import add as gazetteer_add
from kbx.entities.gazetteer import check as gazetteer_check
from kbx.entities.gazetteer import export as gazetteer_export
from kbx.entities.gazetteer import import_entries as gazetteer_import
from kbx.entities.gazetteer import listing as gazetteer_list
from kbx.entities.gazetteer import retract as gazetteer_retract
from kbx.entities.gazetteer import show as gazetteer_show
from kbx.entities.lookup import EntityDetail, EntityRow, entities, entity
from kbx.entities.resolve import ResolveReport, resolve
from kbx.gazetteer.entries import TYPES as GAZETTEER_TYPES
from kbx.indexing.ingest import IndexReport, index
from kbx.indexing.reprocess import ReprocessReport, purge, reprocess
from kbx.search.filters import Filters
from kbx.search.grep import GrepMatch, GrepResult, grep
from kbx.search.mentions import MentionRow, RecognizerRow, mentions, recognizers
from kbx.search.read import Excerpt, read
from kbx.search.search import Hit, SearchResult, search
from kbx.search.status import Status, status
from kbx.store.db import Index

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
