"""The text block of each MCP tool's answer: the same lines the CLI prints for that
result (``kbx.present``, one presenter per result), so an agent reads what a person at
the terminal reads. What the CLI sends to standard error (a search's notes, a read's
warning) is part of the block here: a tool's answer is one text."""

from __future__ import annotations

from kbx import api

present = api.present


def _text(lines: list[str]) -> str:
    return "\n".join(lines)


def search(r: dict) -> str:
    """Every hit the tool's k asked for, its exact matches as the JSON holds them."""
    lines = present.search(r, exact=len(r["exact"]))
    return _text(lines + present.notes(r))


def grep(g: dict) -> str:
    return _text(present.grep(g))


def read(x: dict) -> str:
    return _text(present.read(x))


def entities(r: dict) -> str:
    return _text(present.entities(r))


def status(s: dict) -> str:
    return _text(present.status(s))


def entity(e: dict) -> str:
    return _text(present.entity(e))


def edit(r: dict, verb: str) -> str:
    return _text(present.edit(r, verb))
