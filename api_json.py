"""The JSON of each command: one function per command turns its result into the object that
``kbx COMMAND --json`` prints and that ``kbx serve`` answers, so the two cannot drift.

Reached through ``kbx.api`` (``api.to_json``), the one surface the CLI and the server see.
It knows the results only by their fields: it imports nothing from kbx.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any


def _fields(result: Any) -> dict:
    return dataclasses.asdict(result)


def _entities(rows: list) -> dict:
    return {"entities": [dataclasses.asdict(r) for r in rows]}


SHAPES: dict[str, Callable[[Any], dict]] = {
    "search": _fields,
    "grep": _fields,
    "read": _fields,
    "status": _fields,
    "entity": _fields,
    "entities": _entities,
    "gazetteer add": _fields,
    "gazetteer retract": _fields,
}


def to_json(command: str, result: Any) -> dict:
    """The ``--json`` object of ``command`` (``"search"``, ``"gazetteer add"``, …) for the
    result its API function returned."""
    return SHAPES[command](result)


def json_text(obj: object) -> str:
    """One JSON object as the CLI prints it: UTF-8 kept, dates and paths as strings."""
    return json.dumps(obj, ensure_ascii=False, default=str)
