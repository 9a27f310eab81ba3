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


def plain(value: Any) -> Any:
    """``dataclasses.asdict``'s answer, without its deep copy of every leaf (0.6 of a
    warm search's 7 ms in the server, against 0.15): dataclasses become dicts of their
    fields, lists, tuples and dicts are rebuilt around plain values, anything else is
    shared as is."""
    if type(value) in _LEAVES:
        return value
    if isinstance(value, list):
        return [plain(v) for v in value]
    names = _NAMES.get(type(value))
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return {n: plain(getattr(value, n)) for n in names}
    if isinstance(value, tuple):
        return (
            type(value)(*map(plain, value))
            if hasattr(value, "_fields")
            else tuple(plain(v) for v in value)
        )
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


_NAMES: dict[type, tuple[str, ...]] = {}  # a dataclass's field names, found once
_LEAVES = frozenset({str, int, float, bool, type(None)})


def _fields(result: Any) -> dict:
    return plain(result)


def _entities(rows: list) -> dict:
    return {"entities": [plain(r) for r in rows]}


def _mentions(rows: list) -> dict:
    return {"mentions": [plain(r) for r in rows]}


def _recognizers(listing: tuple) -> dict:
    """The rows and the recognizers that could not be loaded (``(name, why)`` pairs)."""
    rows, broken = listing
    return {"recognizers": [plain(r) for r in rows],
            "unavailable": [{"name": n, "why": w} for n, w in broken]}  # fmt: skip


def _index(result: tuple) -> dict:
    """The index report, and the resolve report of ``kbx index --resolve`` (or None)."""
    report, resolved = result
    return plain(report) | ({"resolve": plain(resolved)} if resolved is not None else {})


def _reprocess(r: Any) -> dict:
    return {
        "plan": [plain(p) | {"todo": p.todo} for p in r.plan],
        "done": plain(r.done),
        "failures": plain(r.failures),
        "dry_run": r.dry_run,
        "seconds": r.seconds,
    }


def _search(r: Any) -> dict:
    """The result's fields, each hit saying what became of its file since it was indexed
    as ``since_indexed`` (unchanged, changed or deleted): the library's ``Hit.file``
    ("indexed" for a file untouched) read as the file's name or kind."""
    obj = plain(r)
    for h in obj["hits"]:
        state = h.pop("file")
        h["since_indexed"] = "unchanged" if state == "indexed" else state
    return obj


SHAPES: dict[str, Callable[[Any], dict]] = {
    "index": _index,
    "mentions": _mentions,
    "recognizers": _recognizers,
    "recognizers purge": lambda removed: {"purged": dict(removed)},
    "resolve": _fields,
    "embed": _fields,
    "reprocess": _reprocess,
    "export": _fields,
    "search": _search,
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
