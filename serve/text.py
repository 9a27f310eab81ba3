"""The ``--json`` objects as text an agent reads well (facets and grep as the CLI prints
them, from ``kbx.present``): each passage or match leads with its
citation (``path:start-end`` and the first 12 digits of the file hash), the way to read
its lines follows from that, and what was left out is said with how to get it."""

from __future__ import annotations

from kbx import api


def _lines(a: int, b: int) -> str:
    return f"{a}" if a == b else f"{a}-{b}"


def _grep_lines(matches: list[dict], indent: str = "") -> list[str]:
    out = []
    for m in matches:
        out.append(
            f"{indent}{m['path']}:{_lines(m['start_line'], m['end_line'])} "
            f"#{m['hash'][:12]}  {m['text']}"
        )
        out += [f"{indent}    {c}" for c in m.get("context") or ()]
    return out


def search(r: dict) -> str:
    hits = r["hits"]
    out = [
        f"{r['total']} passages match {r['query']!r}; the best {len(hits)}:"
        if hits
        else f"no passage matches {r['query']!r}"
    ]
    for h in hits:
        where = " › ".join(h["heading_path"]) or (f"page {h['page']}" if h["page"] else "")
        state = "" if h["file"] == "indexed" else f" ({h['file']} since indexed)"
        cite = f"{h['path']}:{h['start_line']}-{h['end_line']} #{h['hash'][:12]}{state}"
        score = f"(score {h['score']:.2f}, {h['covered']}/{h['query_terms']} terms)"
        out.append("  ".join(p for p in (cite, where, score) if p))
        out.append(f"    {h['snippet']}")
        if h["also_in"]:
            out.append(f"    also in: {', '.join(h['also_in'])}")
    if r["left_out"]:
        out.append(f"{r['left_out']} more passages matched; raise k or add filters")
    if len(r["query"].split()) > 1:
        out.append(
            f"exact matches of {r['query']!r}: {r['exact_total']}"
            + (" (grep shows them all)" if r["exact"] else "")
        )
        out += _grep_lines(r["exact"], "  ")
    if r["facets"]:
        out += api.present_facets(r["facets"], r["mode"])  # as the CLI shows them
    out += [f"note: {n}" for n in r["notes"]]
    return "\n".join(out)


def grep(g: dict) -> str:
    """As ``kbx grep`` prints it (kbx.present)."""
    return "\n".join(api.present_grep(g))


def read(x: dict) -> str:
    head = f"{x['path']}:{_lines(x['start_line'], x['end_line'])} #{x['hash'][:12]}"
    if x["changed"]:
        head += " CHANGED since it was indexed: the cited lines may have moved"
    width = len(str(x["end_line"]))
    body = [f"{i:>{width}}  {line}" for i, line in enumerate(x["lines"], start=x["start_line"])]
    return "\n".join([head, *body])


def entities(r: dict) -> str:
    rows = [
        f"{e['entity_id']}  {e['type']}  {e['label']}  ({e['passages']} passages, "
        f"{e['documents']} docs)"
        + ("" if e.get("confirmed", True) else "  unconfirmed: cannot filter")
        + (f"  aliases: {' | '.join(e['aliases'])}" if e["aliases"] else "")
        for e in r["entities"]
    ]
    return "\n".join(rows) or "no entity matches"


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


def status(s: dict) -> str:
    docs = ", ".join(f"{n} {k}" for k, n in sorted(s["documents"].items())) or "none"
    out = [
        f"index {s['db']} (schema {s['schema_version']}), root {s['root']}",
        f"documents: {docs}; units: {s['units']}; indexed at {s['indexed_at'] or 'never'}",
    ]
    for r in s["recognizers"]:
        behind = ", ".join(f"{r[k]} {k}" for k in ("stale", "missing", "failed") if r[k])
        out.append(
            f"recognizer {r['name']} {r['version']}: {r['current']}/{r['units']} current"
            + (f" ({behind})" if behind else "")
        )
    out += [f"failed: {f['path']} ({f['status']}): {f['error']}" for f in s["failures"]]
    out += [  # a unit, a value or a document's context, alone (the rest of the file is in)
        f"failed: {f['path']}{':' + str(f['line']) if f['line'] else ''} {f['recognizer']} "
        f"({f['stage']}): {f['error']}"
        for f in s.get("unit_failures", [])
    ]
    out += [f"inconsistent: {p}" for p in s["problems"]]
    return "\n".join(out)
