"""Text presenters, one per result, shared by every face that prints text: the CLI and the
MCP tools show a search, a grep, a read, entities, status and facets the same way, from
the command's ``--json`` object (``api_json``), so the two cannot disagree. A pure leaf:
it knows the results only by their JSON fields.

A search is lean, for an agent's context: every byte printed is a byte it pays for (the
score, the terms covered and the whole texts are in ``--json``). Per file its path and
hash, per passage its focus (the lines of its densest matches: what to read) and its whole
lines, the part of its heading path the passage before did not already show, and a short
snippet around the focus. benchmarks/agent_cost.py measured the defaults
(docs/BENCHMARKS.md, "Agent cost").
"""

from __future__ import annotations

import re

from kbx.densest import tightest

K_TEXT = 5  # passages shown (8 with --json)
SNIPPET_TEXT = 160  # characters of each snippet (240 in --json, with the whole text)
EXACT_TEXT = 1  # exact phrase matches shown (3 in --json)
LEGEND = (
    "# FILE HASH; each passage's best LINES (all its lines), heading, snippet; "
    "kbx read FILE:LINES --hash HASH"
)
MARK = re.compile(r"\*\*(.+?)\*\*")
ECHOED = 80  # characters of a query or pattern said back: a pasted page is not repeated
EXCLUDED = " without its filters; "  # in the note on a result the filters emptied

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


_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# C0 and C1 controls (ESC, BEL, CR, …), line and paragraph separators, bidi overrides and
# isolates, and lone surrogates: what can recolour, move or reorder a terminal's text.


def shown(value: object) -> str:
    """Text from entries and documents for a terminal or a model, control characters
    written as escapes (``\\x1b``): a name must not recolour, move or rewrite what is
    printed. JSON needs none of this (json escapes them)."""
    return _HIDDEN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))


def quoted(text: str) -> str:
    """A query or pattern as a message says it back: quoted, cut after ``ECHOED``
    characters (a pasted page asked for is not printed whole again)."""
    return repr(text) if len(text) <= ECHOED else f"{text[:ECHOED]!r}…"


def lines_of(a: int, b: int) -> str:
    """A line range as a citation writes it: ``7`` or ``7-9``."""
    return f"{a}" if a == b else f"{a}-{b}"


# -- search ---------------------------------------------------------------------------


def search(
    r: dict, snippet: int = SNIPPET_TEXT, exact: int = EXACT_TEXT, full: bool = False
) -> list[str]:
    """The lines of a search (its ``--json``): its hits grouped by file, best file first,
    with snippets of about ``snippet`` characters (none at 0; the whole passage with
    ``full``), up to ``exact`` of its exact matches, and its facets when it has them.
    Its notes are apart (``notes``): the CLI prints them on standard error."""
    if not r["hits"]:
        said = [n for n in r["notes"] if EXCLUDED in n]
        return said[:1] or [f"no passage matches {quoted(r['query'])}"]
    groups: dict[str, list[dict]] = {}  # best file first, each file's passages together
    for h in r["hits"]:
        groups.setdefault(h["path"], []).append(h)
    lines = [LEGEND]
    for path, hits in groups.items():
        state = hits[0]["since_indexed"]
        lines.append(f"{path} {hits[0]['hash'][:12]}" + _file_state(state))
        before: list[str] = []
        for h in hits:
            head = " › ".join(_new_part(before, h["heading_path"]))
            head = head or (f"page {h['page']}" if h["page"] else "")
            ranks = ", ".join(f"{n} #{i}" for n, i in (h["ranks"] or {}).items() if i)
            n = len(h["also_in"])
            also = f"also in {n} more file{'s' if n > 1 else ''}" if n else ""
            notes = ", ".join(x for x in (ranks, also) if x)
            said = " ".join(x for x in (cited(h), head, f"({notes})" if notes else "") if x)
            lines.append(f"  {said}")
            before = h["heading_path"]
            body = h["text"] if full else shorten(h["snippet"], snippet) if snippet else ""
            if body:
                lines.append(f"    {' '.join(body.split()).replace('** **', ' ')}")  # **a b**
    lines += _left_out(r)
    if exact and r["exact"]:
        lines.append(
            f"exact matches of {quoted(r['query'])} ({r['exact_total']}; kbx grep shows them all):"
        )
        for m in r["exact"][:exact]:
            at = lines_of(m["start_line"], m["end_line"])
            lines.append(f"  {m['path']}:{at} {shorten(m['text'], snippet or 120)}")
    if r["facets"]:
        lines += facets(r["facets"], r["mode"], r["total"])
    return lines


def notes(r: dict) -> list[str]:
    """A search's notes as lines, less one its first line already said."""
    said = r["notes"] if r["hits"] else [n for n in r["notes"] if EXCLUDED not in n]
    return [f"note: {n}" for n in said]


def excluded(query: str, total: int, culprits: list[str], given: list[str]) -> str:
    """What an empty search says when the query alone matches ``total`` passages: which
    of the ``given`` filters excludes them by itself (``culprits``), else that they do
    together."""
    them = "it" if total == 1 else "them"
    if len(culprits) == 1:
        which = f"{culprits[0]} excludes {them}"
    elif culprits:
        which = f"{_and(culprits)} each exclude {them}"
    else:
        which = f"{_and(given)} exclude {them} together"
    return f"{quoted(query)} matches {total} passage{'' if total == 1 else 's'}{EXCLUDED}{which}"


def _and(items: list[str]) -> str:
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _file_state(state: str) -> str:
    return "" if state == "unchanged" else f" ({state} since indexed)"


def cited(h: dict) -> str:
    """A hit's lines as its text cites them: its focus (the lines of its densest matches,
    what to read first), then the passage's whole lines where they are more: ``53
    (49-53)``."""
    a, b = h["start_line"], h["end_line"]
    fa, fb = h.get("focus_lines") or (a, b)
    return f"{a}-{b}" if (fa, fb) == (a, b) else f"{lines_of(fa, fb)} ({a}-{b})"


def _left_out(r: dict) -> list[str]:
    n = r["left_out"]
    if not n:
        return []
    if n < 100:
        every = min(r["total"], n + len(r["hits"]))
        return [f"{n} more passages matched; -k {every} shows them all"]
    return [f"{n} more passages matched; narrow with --path or more words"]


def _new_part(before: list[str], heading: list[str]) -> list[str]:
    """The heading path less what the passage before in the same file showed: the document
    title once per file, a sibling section by its own name (never nothing: the last part
    stays when the two share it all)."""
    same = 0
    while same < min(len(before), len(heading)) and before[same] == heading[same]:
        same += 1
    return heading[min(same, len(heading) - 1) :] if heading else []


def shorten(marked: str, size: int) -> str:
    """A window of at most about ``size`` characters of a snippet whose matches are marked
    ``**like this**``, around its densest matches (``_densest``): from the start of their
    sentence and to its end where the window holds them, else at spaces; ellipses where it
    is cut."""
    cut_before, cut_after = marked.startswith("…"), marked.endswith("…")
    body = marked[1 if cut_before else 0 : len(marked) - 1 if cut_after else len(marked)]
    plain, spans, words, pos = [], [], [], 0
    for m in MARK.finditer(body):
        plain.append(body[pos : m.start()])
        at = sum(map(len, plain))
        spans.append((at, at + len(m.group(1))))
        words.append(m.group(1).casefold())
        plain.append(m.group(1))
        pos = m.end()
    plain.append(body[pos:])
    text = "".join(plain)
    if len(text) <= size:
        return marked
    first, last = _densest(spans, words, size)
    start = max(0, first - size // 6)
    end = min(len(text), start + size)
    start = max(0, end - size)
    breaks = [m.end() for m in _SENTENCE.finditer(text, start, first)]
    if breaks:  # the densest matches' sentences whole, where the window holds their ends
        start = breaks[-1]
    elif start > 0:  # else at word boundaries
        sp = text.find(" ", start, start + 20)
        start = sp + 1 if sp >= 0 else start
    if end < len(text):
        stop = _SENTENCE.search(text, max(last, start), end)
        sp = text.rfind(" ", start + size // 2, end)
        end = stop.start() + 1 if stop else sp if sp >= 0 else end
    out, pos = [], start
    for s, e in spans:
        if s >= start and e <= end:
            out += [text[pos:s], f"**{text[s:e]}**"]
            pos = e
    out.append(text[pos:end])
    lead = "…" if start > 0 or cut_before else ""
    return lead + "".join(out).strip() + ("…" if end < len(text) or cut_after else "")


_SENTENCE = re.compile(r"[.!?](?=\s)\s*")  # where a sentence ends, and the next starts


def _densest(spans: list[tuple[int, int]], words: list[str], size: int) -> tuple[int, int]:
    """The start and end of the densest matches, the run a hit's focus cites too
    (``densest.tightest``); (0, 0) without a match."""
    if not spans:
        return 0, 0
    i, j = tightest(spans, size, words)
    return spans[i][0], max(e for _, e in spans[i : j + 1])


# -- facets and grep ------------------------------------------------------------------


def quantity_bin(b: dict) -> str:
    """A histogram bin as its edges: ``1 g–1 kg``, ``< 1 mg``, ``>= 1 t``."""
    if b["from"] is None:
        return f"< {b['to']}"
    return f">= {b['from']}" if b["to"] is None else f"{b['from']}–{b['to']}"


def facets(f: dict, mode: str, total: int | None = None) -> list[str]:
    """The lines of a search's facets (its ``--json``'s ``facets``). Facets count a
    passage once in each file that holds it, where a search's ``total`` counts it once:
    where the two differ, the header says both."""
    n = f["passages"]
    of = FACETS_OF[mode != "bm25"].format(s="" if n == 1 else "s")
    header = f"facets of {n} {of}"
    if mode == "bm25" and total is not None and total != n:
        header += f", counted once per file that holds them ({total} distinct)"
    out = [header]
    for title, key, show in _FACETS:
        facet = f.get(key) or {"values": [], "other": 0}
        if facet["values"]:
            listed = ", ".join(f"{show(v)} {v['count']}" for v in facet["values"])
            rest = f", other {facet['other']}" if facet["other"] else ""
            out.append(f"  {title}: {listed}{rest}")
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
        return [f"no match for {quoted(g['pattern'])}"]
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


# -- read, entities, status -----------------------------------------------------------


def read(x: dict, numbered: bool = True, cited: bool = True) -> list[str]:
    """The lines of a read: with ``cited``, first its citation (``path:lines #hash``) and,
    for a file changed since it was indexed, ``changed``'s warning; then the lines, with
    their numbers when ``numbered``."""
    width = len(str(x["end_line"]))
    body = [
        f"{i:>{width}}  {line}" if numbered else line
        for i, line in enumerate(x["lines"], start=x["start_line"])
    ]
    if not cited:
        return body
    head = [f"{x['path']}:{lines_of(x['start_line'], x['end_line'])} #{x['hash'][:12]}"]
    return head + ([f"warning: {changed(x)}"] if x["changed"] else []) + body


def changed(x: dict) -> str:
    """What a read of a file changed since it was indexed warns."""
    return (
        f"{x['path']} has changed since it was indexed (now {x['hash'][:12]}); the cited "
        "lines may have moved. Run `kbx index` to refresh."
    )


def entities(rows: dict) -> list[str]:
    """The lines of an entity listing (its ``--json``): ID, type, label, how widely it is
    mentioned, whether it can filter, and its aliases (the names a filter takes)."""
    out = [
        f"{shown(e['entity_id'])}  {shown(e['type'])}  {shown(e['label'])}  "
        f"({e['passages']} passages, {e['documents']} docs)"
        + ("" if e.get("confirmed", True) else "  unconfirmed: cannot filter")
        + (f"  aliases: {' | '.join(shown(a) for a in e['aliases'])}" if e["aliases"] else "")
        for e in rows["entities"]
    ]
    return out or ["no entity matches"]


def entity(e: dict) -> list[str]:
    """The lines of one entity (its ``--json``): its aliases, addresses, provenance, the
    entries it could be (an alias two share), and its mentions at ``path:line #hash``."""
    out = [f"{shown(e['entity_id'])}  {shown(e['type'])}  {shown(e['label'])}  "
           f"(from {shown(e['source'])})"]  # fmt: skip
    if e["aliases"]:
        out.append(f"  aliases: {_all(e['aliases'])}")
    if (e.get("meta") or {}).get("emails"):  # the addresses a person signs with
        out.append(f"  e-mail: {_all(e['meta']['emails'])}")
    for p in e["provenance"]:
        note = f": {shown(p['note'])}" if p["note"] else ""
        out.append(f"  {p['at']}  {shown(p['action'])} by {shown(p['by'])}{note}")
    if e.get("candidates"):
        label = shown(e["label"])
        out.append(
            f"  not linked: {label!r} is an alias of "
            + ", ".join(
                f"{shown(c['entity_id'])} ({c['type']} {shown(c['label'])})"
                for c in e["candidates"]
            )
            + f"; pin one: kbx gazetteer add {label!r} --id ID --type T --pin"
        )
    for m in e["mentions"]:
        what = shown(m["text"]) if m["as"] == "text" else f"({shown(m['as'])})"
        at = f"{m['path']}:{m['line']}" if m["line"] else m["path"]  # an author: the document
        out.append(f"  {shown(at)} #{m['hash'][:12]}  {m['doc_date'] or ''}  {what}")
    return out


def edit(r: dict, verb: str) -> list[str]:
    """The line of a gazetteer edit (its ``--json``): ``verb`` (added, retracted) and what
    it re-ran."""
    return [
        f"{verb} {shown(', '.join(r['entry_ids']))}; gazetteer {r['version']}: "
        f"{r['units_rerun']} units re-run, {r['units_carried']} carried over, "
        f"{r['mentions']} mentions, {r['removed']} replaced ({r['seconds']:.2f} s)"
    ]


def _all(values: list) -> str:
    return " | ".join(shown(v) for v in values)


def status(s: dict) -> list[str]:
    """The lines of ``kbx status`` (its ``--json``): the index, its documents, units,
    postings, languages, recognizers and vectors, then what failed."""
    total = sum(s["documents"].values())
    parts = ", ".join(f"{n} {k}" for k, n in sorted(s["documents"].items()))
    out = [
        f"index      {s['db']}  ({size(s['size_bytes'])}, schema {s['schema_version']})",
        f"root       {s['root']}",
        f"documents  {total} ({parts or 'none'})",
        f"formats    {', '.join(f'{n} {k}' for k, n in s['formats'].items()) or 'none'}",
        *passed_over(s["passed_over"], "not read  "),
        f"units      {s['units']} ({s['placements']} placements)",
        f"postings   {s['postings']} ({s['terms']} terms, stemmer {s['stemmer']})",
    ]
    if set(s["languages"]) - {"en"}:  # units of each language, English counting the untold
        out.append(f"languages  {', '.join(f'{k} {n}' for k, n in s['languages'].items())}")
    out.append(f"indexed    {s['indexed_at'] or 'never'}")
    for r in s["recognizers"]:
        behind = ", ".join(f"{r[k]} {k}" for k in ("stale", "missing", "failed", "forced") if r[k])
        out.append(
            f"recognizer {r['name']} {r['version']}: {r['current']}/{r['units']} current"
            + (f" ({behind}; run `kbx reprocess`)" if behind else "")
        )
    out += [f"vectors    {v['model']} {v['version']}: {v['units']}/{s['units']} units, "
            f"{v['windows']} windows" + (f"; {v['pending']} later windows of {v['pending_units']}"
                                         " units to come (`kbx embed`)" if v["pending"] else "")
            for v in s["vectors"]]  # fmt: skip
    if not s["vectors"]:
        out.append("vectors    none (`kbx embed` adds them: search by meaning too)")
    out += [f"inconsistent {p}" for p in s["problems"]]
    out += [file_line(f) for f in s["failures"]]
    return out + unit_failures(s["unit_failures"], "tried again by `kbx reprocess` or `kbx index`")


PASSED_SHOWN = 6  # kinds of file named; --json has them all


def passed_over(kinds: dict[str, int] | None, label: str) -> list[str]:
    """A line saying how many files the walk passed over as formats kbx does not read,
    the most common kinds named: a folder read in part says so (none where none were)."""
    if not kinds:
        return []
    named = ", ".join(f"{n} {k}" for k, n in list(kinds.items())[:PASSED_SHOWN])
    more = f", {len(kinds) - PASSED_SHOWN} more kinds" if len(kinds) > PASSED_SHOWN else ""
    return [f"{label} {sum(kinds.values())} files of formats kbx does not read ({named}{more})"]


def file_line(f: dict) -> str:
    """A file not read whole, or not at all: ``!`` one that failed (or was read as plain
    text), ``-`` one skipped (empty, or over the size cap), which is no failure."""
    mark = "-" if f["status"] == "skipped" else "!"
    state = "" if f["status"] == "ok" else f" ({f['status']})"
    return f"  {mark} {f['path']}{state}: {f['error']}"


UNIT_FAILURES_SHOWN = 10  # lines; --json lists them all


def unit_failures(failures: list[dict], retry: str) -> list[str]:
    """The units and documents a recognizer or the document context failed on
    (annotate/failures.py), one line each, and that the rest of each file went in;
    ``retry`` says when a unit a recognizer failed on is tried again."""
    out = [f"  ! {failure_line(f)}" for f in failures[:UNIT_FAILURES_SHOWN]]
    if len(failures) > UNIT_FAILURES_SHOWN:
        out.append(f"  … and {len(failures) - UNIT_FAILURES_SHOWN} more (--json lists them)")
    if failures:
        units = any(f["stage"] == "recognize" for f in failures)
        again = f"; the units a recognizer failed on are {retry}" if units else ""
        out.append(f"  (only these failed: the rest of each file is in{again})")
    return out


def failure_line(f: dict) -> str:
    """One failure as a line: where, which recognizer and stage, why."""
    where = f"{f['path']}:{f['line']}" if f.get("line") else f["path"]
    stage = "" if f["stage"] == "recognize" else f" ({_STAGES.get(f['stage'], f['stage'])})"
    return f"{where}: {f['recognizer']}{stage} failed: {f['error']}"


_STAGES = {"date": "the document's date", "names": "names in context", "resolve": "a value"}


def size(n: float) -> str:
    """A byte count as people read it: ``812 B``, ``3.4 MB``."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
