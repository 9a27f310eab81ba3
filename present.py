"""Text presenters shared by every face that prints text: the CLI and the MCP tools each
show facets, a quantity bin and a grep match the same way, from the command's ``--json``
object (``api_json``). A pure leaf: it knows the results only by their JSON fields."""

from __future__ import annotations

FACETS_OF = (  # what the facets counted: a bm25 search's, a dense or hybrid one's
    "matching passage{s}",
    "passage{s} (the words' matches and the hits found by meaning)",
)

_FACETS = (  # (title, key, how a value shows)
    ("entities", "entities", lambda v: f"{v['label']} ({v['entity_id']}, {v['type']})"),
    ("authors", "authors", lambda v: f"{v['label']} ({v['entity_id']})"),
    ("types", "types", lambda v: v["type"]),
    ("years", "years", lambda v: str(v["year"])),
    ("cited works' years", "cited_years", lambda v: str(v["year"])),
)


def lines_of(a: int, b: int) -> str:
    """A line range as a citation writes it: ``7`` or ``7-9``."""
    return f"{a}" if a == b else f"{a}-{b}"


def quantity_bin(b: dict) -> str:
    """A histogram bin as its edges: ``1 g–1 kg``, ``< 1 mg``, ``>= 1 t``."""
    if b["from"] is None:
        return f"< {b['to']}"
    return f">= {b['from']}" if b["to"] is None else f"{b['from']}–{b['to']}"


def facets(f: dict, mode: str) -> list[str]:
    """The lines of a search's facets (its ``--json``'s ``facets``)."""
    of = FACETS_OF[mode != "bm25"].format(s="" if f["passages"] == 1 else "s")
    out = [f"facets of {f['passages']} {of}"]
    for title, key, show in _FACETS:
        facet = f.get(key) or {"values": [], "other": 0}
        if facet["values"]:
            shown = ", ".join(f"{show(v)} {v['count']}" for v in facet["values"])
            rest = f", other {facet['other']}" if facet["other"] else ""
            out.append(f"  {title}: {shown}{rest}")
    if f["first_date"]:
        out.append(f"  dates: {f['first_date']} to {f['last_date']}")
    for q in f["quantities"]["values"]:
        name = q["dimension"] if q["dimension"] == q["unit"] else f"{q['dimension']} ({q['unit']})"
        bins = ", ".join(f"{quantity_bin(b)} {b['count']}" for b in q["bins"])
        out.append(f"  {name}: {q['count']} passages ({bins})")
    if f["quantities"]["other"]:
        out.append(f"  other quantities: {f['quantities']['other']} passages")
    return out


def grep(g: dict) -> list[str]:
    """The lines of a grep (its ``--json``): each match cited ``path:lines #hash`` with
    its text (a passage several files share once, the others named after it), its
    context lines, and what was left out."""
    if not g["matches"]:
        return [f"no match for {g['pattern']!r}"]
    out = []
    for m in g["matches"]:
        n = len(m.get("also_in") or ())
        also = f" (also in {n} more file{'s' if n > 1 else ''})" if n else ""
        cite = f"{m['path']}:{lines_of(m['start_line'], m['end_line'])} #{m['hash'][:12]}"
        out.append(f"{cite}  {m['text']}{also}")
        out += [f"    {c}" for c in m.get("context") or ()]
    if g["left_out"]:
        out.append(
            f"{g['left_out']} more matches left out ({g['left_out_files']} files not shown); "
            "raise --max or narrow with --path"
        )
    return out
