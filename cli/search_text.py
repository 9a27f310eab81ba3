"""``kbx search`` as text: what an agent needs to choose the lines to read, and no more.

Every byte printed is a byte in an agent's context, so the text is lean (the score, the
terms covered and the whole texts are in ``--json``): per file its path and hash, per
passage its lines, the part of its heading path the passage before did not already show,
and a short snippet around the densest matches. benchmarks/agent_cost.py measured the
defaults (docs/BENCHMARKS.md, "Agent cost").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kbx.api import SearchResult

K_TEXT = 5  # passages shown (8 with --json)
SNIPPET_TEXT = 160  # characters of each snippet (240 in --json, with the whole text)
EXACT_TEXT = 1  # exact phrase matches shown (3 in --json)
LEGEND = "# FILE HASH, then each passage's LINES, heading, snippet; kbx read FILE:LINES --hash HASH"
MARK = re.compile(r"\*\*(.+?)\*\*")


def render(r: SearchResult, snippet: int, exact: int, full: bool = False) -> list[str]:
    """The lines of ``r`` as text: its hits with snippets of about ``snippet`` characters
    (none at 0; the whole passage with ``full``), then up to ``exact`` of its exact
    matches. Facets and notes are printed apart."""
    if not r.hits:
        return [f"no passage matches {r.query!r}"]
    groups: dict[str, list] = {}  # best file first, each file's passages together
    for h in r.hits:
        groups.setdefault(h.path, []).append(h)
    lines = [LEGEND]
    for path, hits in groups.items():
        state = "" if hits[0].file == "indexed" else f" ({hits[0].file} since indexed)"
        lines.append(f"{path} {hits[0].hash[:12]}{state}")
        before: list[str] = []
        for h in hits:
            head = " › ".join(_new_part(before, h.heading_path))
            head = head or (f"page {h.page}" if h.page else "")
            ranks = ", ".join(f"{n} #{i}" for n, i in (h.ranks or {}).items() if i)
            n = len(h.also_in)
            also = f"also in {n} more file{'s' if n > 1 else ''}" if n else ""
            notes = ", ".join(x for x in (ranks, also) if x)
            lines.append(f"  {h.start_line}-{h.end_line} {head}" + (f" ({notes})" if notes else ""))
            before = h.heading_path
            body = h.text if full else shorten(h.snippet, snippet) if snippet else ""
            if body:
                lines.append(f"    {' '.join(body.split())}")
    if r.left_out:
        lines.append(
            f"{r.left_out} more passages matched; -k {min(r.total, r.left_out + len(r.hits))} "
            "shows them all"
            if r.left_out < 100
            else f"{r.left_out} more passages matched; narrow with --path or more words"
        )
    if exact and r.exact:
        lines.append(f"exact matches of {r.query!r} ({r.exact_total}; kbx grep shows them all):")
        for m in r.exact[:exact]:
            at = f"{m.start_line}" if m.start_line == m.end_line else f"{m.start_line}-{m.end_line}"
            lines.append(f"  {m.path}:{at} {shorten(m.text, snippet or 120)}")
    return lines


def _new_part(before: list[str], heading: list[str]) -> list[str]:
    """The heading path less what the passage before in the same file showed: the document
    title once per file, a sibling section by its own name (never nothing: the last part
    stays when the two share it all)."""
    same = 0
    while same < min(len(before), len(heading)) and before[same] == heading[same]:
        same += 1
    return heading[min(same, len(heading) - 1) :] if heading else []


def shorten(marked: str, size: int) -> str:
    """A window of about ``size`` characters of a snippet whose matches are marked
    ``**like this**``, holding the most matches; ellipses where it is cut."""
    cut_before, cut_after = marked.startswith("…"), marked.endswith("…")
    body = marked[1 if cut_before else 0 : len(marked) - 1 if cut_after else len(marked)]
    plain, spans, pos = [], [], 0
    for m in MARK.finditer(body):
        plain.append(body[pos : m.start()])
        at = sum(map(len, plain))
        spans.append((at, at + len(m.group(1))))
        plain.append(m.group(1))
        pos = m.end()
    plain.append(body[pos:])
    text = "".join(plain)
    if len(text) <= size:
        return marked
    start = _densest(spans, size)
    end = min(len(text), start + size)
    start = max(0, end - size)
    if start > 0:  # at word boundaries
        sp = text.find(" ", start, start + 20)
        start = sp + 1 if sp >= 0 else start
    if end < len(text):
        sp = text.rfind(" ", start + size // 2, end)
        end = sp if sp >= 0 else end
    out, pos = [], start
    for s, e in spans:
        if s >= start and e <= end:
            out += [text[pos:s], f"**{text[s:e]}**"]
            pos = e
    out.append(text[pos:end])
    lead = "…" if start > 0 or cut_before else ""
    return lead + "".join(out).strip() + ("…" if end < len(text) or cut_after else "")


def _densest(spans: list[tuple[int, int]], size: int) -> int:
    """Where a window of ``size`` characters holding the most spans starts (a little before
    its first span, so the match has some words before it)."""
    best, start, j = -1, 0, 0
    for i, (s, _) in enumerate(spans):
        j = max(j, i)
        while j < len(spans) and spans[j][1] <= s + size:
            j += 1
        if j - i > best:
            best, start = j - i, max(0, s - size // 6)
    return start
