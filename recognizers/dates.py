"""Dates, times, durations and sets as TimeML TIMEX3 values, with exact minimal spans.

Candidates come from one compiled pattern (fast, with offsets), never from running
``dateparser.search_dates`` over a unit. Each candidate is normalized at the
granularity the text expressed ("in 2021" is ``2021``). Absolute month-day-year
dates are parsed by dateparser. Expressions that need the document's date
("yesterday", "last Tuesday", "the third quarter") get a relative value, ``REL:…``,
which ``resolve`` turns into a TIMEX3 value in the document context layer; without
a document date it stays unresolved, never resolved against today. What the unit itself
tells is settled here: which way a bare "Tuesday" lies (the tense of its sentence), and
which date "that year" refers to (the last one written before it).

The patterns are data (``date_patterns.py``, one record each, over the vocabulary of
``date_words.py``); this module builds the scan from them and runs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import date
from functools import cache

import ahocorasick

from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.date_patterns import PATTERNS, DatePattern
from kbx.recognizers.date_words import CLOCK_KEY, DECADE_KEY, SLASHED_KEY, YEAR_KEY
from kbx.recognizers.trie import trie
from kbx.timex import resolve

_BY_NAME = {p.name: p for p in PATTERNS}
_ALTERNATIVES = "|".join(f"(?P<{p.name}>{p.expression})" for p in PATTERNS)


@cache
def _expressions(any_case: bool) -> re.Pattern:
    """Every pattern as one, on lower-cased text (several times faster than IGNORECASE),
    or any case; compiled on first use: 70 ms that a run which recognizes nothing (an
    unchanged folder's ``kbx index``) does not pay."""
    return re.compile(_ALTERNATIVES, re.IGNORECASE if any_case else 0)


# Where an expression can start: the big pattern is tried only there, which makes the
# pass several times faster than scanning every position with it.


def _branches(rx: str) -> list[str]:
    """The top-level alternatives of a regular expression: "a|b(?:c|d)" → a, b(?:c|d)."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(rx):
        ch = rx[i]
        if ch == "\\":
            i += 1
        elif ch == "[":  # a class: up to its closing bracket ("[]" and "[^]" hold one)
            i = rx.index("]", i + 2 if rx[i + 1 : i + 2] in ("]", "^") else i + 1)
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "|" and depth == 0:
            out.append(rx[start:i])
            start = i + 1
        i += 1
    return [*out, rx[start:]]


def _starts(patterns: Sequence[DatePattern]) -> tuple[tuple[str, ...], str]:
    """The patterns' trigger words, and one expression for every place a trigger marks: a
    number's start (its first digit consumed), a trigger word (a tree of them, up to a
    word's end), and each LEAD once with all its followers looked ahead at."""
    words: dict[str, None] = {}
    leads: dict[str, dict[str, None]] = {}  # LEAD → its followers, in the order first met
    for pattern in patterns:
        for start in pattern.triggers:
            if start.isalpha():
                words[start] = None
                continue
            lead, look, follow = start.partition("(?=")
            followers = leads.setdefault(lead, {})
            if look:  # LEAD(?=FOLLOW), or a bare (?=FOLLOW) at a number
                followers.update(dict.fromkeys(_branches(follow.removesuffix(")"))))
    number = leads.pop("", {})
    parts = [r"(?=\d)(?=" + "|".join(number) + r")\d"] if number else []
    parts.append(trie(words) + r"\b")
    parts += [lead + (f"(?={'|'.join(f)})" if f else "") for lead, f in leads.items()]
    return tuple(words), r"\b(?:" + "|".join(parts) + ")"


_TRIGGER_WORDS, _TRIGGERS = _starts(PATTERNS)
_TRIGGER = re.compile(_TRIGGERS)
_TRIGGER_ANY_CASE = re.compile(_TRIGGERS, re.IGNORECASE)

# The prefilter. Every pattern needs one of its keys: a whole word (a month, a weekday, a
# unit of time, a word of "now"), a year (\b1500 to \b2099), a slashed date or a clock time,
# so a unit with none is not scanned: most units of technical text hold digits (versions,
# hashes, sizes) and none of these. The words and years are found by one Aho-Corasick pass
# over the text with every character but a-z and 0-9 made a space (so a space stands for
# each \b, and more: never fewer), about ten times cheaper than a pattern tried everywhere.
_KEYS = {key for pattern in PATTERNS for key in pattern.keys}
_SPECIAL_KEYS = {YEAR_KEY, DECADE_KEY, CLOCK_KEY, SLASHED_KEY}
_KEY_FORMS = {f" {w} " for w in _KEYS - _SPECIAL_KEYS}
if YEAR_KEY in _KEYS:
    _KEY_FORMS |= {f" {y}" for y in range(1500, 2100)}
if DECADE_KEY in _KEYS:
    _KEY_FORMS |= {f" {d}0s " for d in range(10)}  # "'90s"
_KEY = ahocorasick.Automaton()
for _key in _KEY_FORMS:
    _KEY.add_word(_key, _key)
_KEY.make_automaton()
_SPACED = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))
_SLASHED = re.compile(r"/\d{1,2}/\d\d")  # "3/14/99" (a literal first: a fast scan)
_AM_PM = re.compile(r"\d\s*[ap]m\b")  # "3pm"; "a.m." and "p.m." are looked for as they are
_CLOCKED, _SLASH = CLOCK_KEY in _KEYS, SLASHED_KEY in _KEYS


def _has_key(low: str) -> bool:
    """Whether lower-cased ``low`` may hold an expression (False: it holds none)."""
    spaced = b" " + low.encode("ascii", "replace").translate(_SPACED) + b" "
    return (
        next(_KEY.iter(spaced.decode("ascii")), None) is not None
        or (_CLOCKED and ("a.m." in low or "p.m." in low or _AM_PM.search(low) is not None))
        or (_SLASH and _SLASHED.search(low) is not None)
    )


# Words before an expression, in its sentence, that say which way an unanchored "Tuesday",
# "March" or "Oct. 23" lies from the document's date: the last one found wins; with
# none, or a past one, it is the latest such day or month (news reports what happened).
_CUES = re.compile(
    r"\b(?P<ahead>will|won't|wo|'ll|shall|plans?|planned|planning|scheduled?|set\s+to|"
    r"(?:is|are)\s+to|expected|expects?|due|going\s+to|until|till|upcoming|coming|"
    r"as\s+(?:soon|early)\s+as|starting|beginning|hopes?\s+to|intends?\s+to)\b"
    r"|\b(?P<behind>said|says|told|was|were|had|has|have|did|since|ago|earlier|last|"
    r"ended|reported|announced)\b"
)
_SENTENCE_END = re.compile(r"[.!?;]\s|\n")
CUE_CHARS = 150  # how far back in the sentence a cue is looked for


def _ahead(low: str, start: int) -> bool:
    """Whether the expression at ``start`` lies ahead, by the last cue before it."""
    head = low[max(0, start - CUE_CHARS) : start]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    cues = [m.lastgroup for m in _CUES.finditer(head, ends[-1] if ends else 0)]
    return bool(cues) and cues[-1] == "ahead"


class DateRecognizer:
    """TIMEX3 dates, times, durations and sets; relative ones resolved per document."""

    info = RecognizerInfo(
        # 11: nor a count or a setting's value: after a noun that a number names ("line 1587",
        # "DR 2082", "value to 1500", "Bin 1678"), before a unit of data ("2048 bit"), in a
        # diffstat ("| 1900 +++--", "1200 insertions") or a sum ("n > 2048");
        # 10: nor after a tracker's or a build's label ("bug 1999", "build 2001", "version 1990",
        # "PR 2019"); 9: no year in an identifier ("RFC 2047", "CVE-2024-2004", "1.0+2022"), nor a
        # range that runs backwards; 8: "'90s" is the mention "90s" (the scan opens at a digit,
        # faster); 7: "a year-earlier loss" is the year before, not "a year"; 6: spoken years and
        # decades, clock times in words, seconds, runs of units, the near future; 5: amounts in a
        # unit are not years, months end at a word's end; 4: tense, days with times, sets of days;
        # 3: not in inline code, not across table cells; 2: not code
        name="dates",
        version="11",
        types=("DATE", "TIME", "DURATION", "SET"),
        needs_context=True,
        code=False,
        inline_code=False,
        cross_cells=False,
    )

    def load(self) -> None:
        """The patterns, compiled before the readers fork so that they share them."""
        _expressions(False)

    def resolve(self, value: str | None, doc_date: date | None) -> str | None:
        """A mention's value in its document (see the module's ``resolve``)."""
        return resolve(value, doc_date)

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        return [[m for _, m in candidates(text)] for text in texts]


def candidates(text: str, prefilter: bool = True) -> Iterator[tuple[str, Mention]]:
    """Each mention of ``text`` with the name of the pattern that found it (the benchmark
    scores and tunes by pattern, and proves the prefilter loses nothing with
    ``prefilter=False``)."""
    pos = 0
    anchor = None  # the last date or time found: what "that day" refers to
    low = text.lower()
    trigger, rx = _TRIGGER, _expressions(False)
    if len(low) != len(text):  # "İ" lowers to two characters: offsets would move
        trigger, rx, low = _TRIGGER_ANY_CASE, _expressions(True), text  # (no prefilter: rare)
    elif prefilter and not _has_key(low):
        return
    for t in trigger.finditer(low):
        if t.start() < pos:
            continue
        m = rx.match(low, t.start())
        if m is None:
            continue
        pos = m.end()
        pattern = _BY_NAME[m.lastgroup]
        start, end = m.span()
        if pattern.keep is not None and not pattern.keep(text, start, end):
            continue
        written = text[start:end]
        said = " ".join(written.casefold().split())
        typ, value = pattern.normalize(said, said.replace("-", " ").split(), written)
        if value is not None and pattern.refine is not None:
            value = pattern.refine(value, anchor, low, start)
        if value is None:
            continue
        if ":~" in value:  # a bare "Tuesday" or "March": which way, by the tense
            value = value.replace(":~", ":>" if _ahead(low, start) else ":<")
        if typ in ("DATE", "TIME") and (value[0].isdigit() or value.startswith("REL:")):
            anchor = value.removeprefix("REL:")
        yield pattern.name, Mention(start, end, typ, written, value, pattern.confidence)
