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
    out = [f"{e['entity_id']}  {e['type']}  {e['label']}  (from {e['source']})"]
    if e["aliases"]:
        out.append(f"aliases: {' | '.join(e['aliases'])}")
    if (e.get("meta") or {}).get("emails"):  # the addresses a person signs with
        out.append(f"e-mail: {' | '.join(e['meta']['emails'])}")
    out += [f"{p['at']}  {p['action']} by {p['by']}" for p in e["provenance"]]
    for m in e["mentions"]:
        what = m["text"] if m["as"] == "text" else f"({m['as']})"
        at = f"{m['path']}:{m['line']}" if m["line"] else m["path"]  # an author: the document
        out.append("  ".join(p for p in (f"  {at} #{m['hash'][:12]}", m["doc_date"], what) if p))
    return "\n".join(out)


def edit(r: dict, verb: str) -> str:
    return (
        f"{verb} {', '.join(r['entry_ids'])}; gazetteer {r['version']}: {r['units_rerun']} units "
        f"re-run, {r['units_carried']} carried over, {r['mentions']} mentions"
    )
