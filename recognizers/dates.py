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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from functools import cache, lru_cache

import ahocorasick

from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.units import ATOM, trie
from kbx.timex import resolve

MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for m in names
}
WEEKDAYS = {
    d: i
    for i, d in enumerate(
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    )
}
NUMBERS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
NUMBERS |= {
    "a": 1,
    "an": 1,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "hundred": 100,
    "several": "X",
    "few": "X",
    "many": "X",
    "some": "X",
}
UNITS = {
    "year": "Y",
    "month": "M",
    "week": "W",
    "day": "D",
    "decade": "DE",
    "century": "CE",
    "hour": "H",
    "minute": "M",
    "second": "S",
    "quarter": "Q",
}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
}
CENTURIES = {"nineteenth": 19, "twentieth": 20, "twenty-first": 21}
EVERY = ("daily", "weekly", "monthly", "annually", "yearly", "hourly")  # a SET's words
SEASONS = {"spring": "SP", "summer": "SU", "fall": "FA", "autumn": "FA", "winter": "WI"}
PARTS_OF_DAY = {"morning": "MO", "afternoon": "AF", "evening": "EV", "night": "NI", "tonight": "NI"}

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?(?![a-z])"
)  # not "3 decoders"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_YEAR = r"(?:1[5-9][0-9][0-9]|20[0-9][0-9])"  # ASCII digits, as the prefilter reads
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_NUM = (
    r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|"
    + trie(NUMBERS)  # a tree: tried where the letters lead, not word by word
    + r")"
)
_UNIT = r"(?:year|month|week|day|decade|centur(?:y|ie)|hour|minute|quarter)s?"
_ORD = r"(?:first|second|third|fourth|1st|2nd|3rd|4th)"
_SPAN_UNIT = r"(?:year|month|week|day|decade|centur(?:y|ie)|hour|minute)"
# after a day and month, no year ("4 March, 1999" is dmy's): a clock time may follow
_NO_YEAR = r"(?!\s*,?\s*(?:\d{4}|'?\d\d)\b(?!\s*(?:[ap]\.?m\b|:)))"
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_DECADES = "(?:" + "|".join(t[:-1] + "ies" for t in _TENS) + ")"
_ONES = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEENS = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
_SPOKEN_YEAR = (
    rf"\b(?:the\s+year\s+)?(?:nineteen|eighteen)[\s-]+(?:{_TEENS}|(?:{'|'.join(_TENS)})"
    rf"(?:[\s-]+{_ONES})?|hundred(?:\s+and)?(?:[\s-]+(?:{_ONES}|{_TEENS}))?)\b"
    rf"|\bthe\s+year\s+two\s+thousand\b(?:(?:\s+and)?[\s-]+(?:{_ONES}|{_TEENS}))?"
    rf"|\btwo\s+thousand(?:\s+and)?[\s-]+(?:{_ONES}|ten|eleven|twelve)\b(?![\s-]+\w+s\b)"
)
_HOUR = r"(?:1[0-2]|0?[1-9]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_CLOCK = r"(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)"

PATTERNS: list[tuple[str, str]] = [
    ("iso", rf"\b{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:t\d\d:\d\d(?::\d\d)?)?\b"),
    ("mdy_slash", r"\b(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)?\d\d\b"),
    ("dmy", rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b"),
    ("mdy", rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
    ("weekday_md", rf"\b{_WEEKDAY},?\s+{_MONTH}\s+{_DAY}\b"),
    ("md", rf"\b{_MONTH}\s+{_DAY}\b{_NO_YEAR}"),
    ("dm", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_NO_YEAR}"),
    ("my", rf"\b{_MONTH},?\s+(?:of\s+)?(?:{_YEAR}\b|{_SPOKEN_YEAR})"),
    ("month_rel_year", rf"\b{_MONTH},?\s+(?:of\s+)?(?:this|last|next)\s+year\b"),
    (
        "quarter_year",
        rf"\b(?:(?:the\s+)?{_ORD}[\s-]+quarter(?:\s+of)?,?\s+(?:fiscal\s+)?{_YEAR}"
        rf"|q[1-4]\s+{_YEAR}|{_YEAR}[\s-]q[1-4])\b",
    ),
    (
        "quarter_rel",
        rf"\b(?:(?:the\s+)?(?:{_ORD}|this|last|next|latest|previous|current|"
        rf"final|year-earlier|year-ago)[\s-]*|the\s+)quarter\b(?![\s-]+(?:century|mile))",
    ),
    (
        "half_year",
        rf"\b(?:the\s+)?(?:first|second)[\s-]+half\s+of\s+(?:fiscal\s+)?"
        rf"(?:{_YEAR}|(?:the|this|last|next)\s+year)\b",
    ),
    (
        "part_of_unit",
        r"\b(?:the\s+)?(?:end|beginning|start|middle|rest|remainder)\s+of\s+"
        r"(?:the|this|next|last)\s+(?:year|month|week|decade|quarter)\b",
    ),
    ("season_year", rf"\b(?:spring|summer|fall|autumn|winter)\s+(?:of\s+)?{_YEAR}\b"),
    (  # not "the fall" (of prices, of a city)
        "season_rel",
        r"\b(?:last|this|next)\s+(?:spring|summer|fall|autumn|winter)\b"
        r"|\bthe\s+(?:spring|summer|winter)\b(?!\s+of\b)",
    ),
    # spoken, in broadcast transcripts: "nineteen ninety-six", "the year two thousand"
    ("spoken_year", _SPOKEN_YEAR),
    ("decade", r"\b(?:the\s+)?(?:1[5-9]|20)[0-9]0'?s\b|(?<=['’])[0-9]0s\b"),  # "'90s": "90s"
    (  # "the nineties"; not "in his forties"
        "decade_word",
        rf"\bthe\s+(?:(?:early|late|mid)[\s-]+)?(?:nineteen[\s-]+)?{_DECADES}\b",
    ),
    ("fiscal", rf"\bfiscal(?:\s+year)?\s+{_YEAR}\b"),
    # "2000 years" is a duration (below), not the year 2000
    ("year", rf"\b{_YEAR}\b(?![\s-]+{_SPAN_UNIT}s?\b)"),
    ("rel_day", r"\b(?:today|yesterday|tomorrow|tonight)\b"),
    (
        "part_of_day",
        r"\b(?:this|yesterday|tomorrow)\s+(?:morning|afternoon|evening)\b"
        r"|\blast\s+night\b",
    ),
    (
        "rel_unit",
        r"\b(?:this|last|next|past|previous|coming|current|the\s+past|the\s+last|"
        r"the\s+next|the\s+coming)\s+(?:week|month|year|decade|weekend)\b",
    ),
    # "two months after the vote" is a duration ("two months"), anchored on the event
    (
        "ago",
        rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|earlier|from\s+now)\b"
        r"|\b(?:years|months|weeks|days|decades|hours)\s+ago\b",
    ),
    (
        "plural_span",
        r"\b(?:the\s+)?(?:coming|next|past|last|previous)\s+(?:days|weeks|months|years|decades)\b"
        r"|\bthe\s+(?:days|weeks|months|years)\s+ahead\b"
        r"|\b(?:days|weeks|months|years|decades)-long\b",
    ),
    ("weekday_part", rf"\b{_WEEKDAY}s?\s+(?:morning|afternoon|evening|night)s?\b"),
    # "that year", "the following month", "the next morning": from the last date written
    (
        "anaphor",
        r"\b(?:(?:earlier|later)\s+)?(?:that(?:\s+same)?|the\s+same)\s+(?:day|week|month|year)\b"
        r"|\bthe\s+(?:following\s+(?:day|morning|week|month|year)|next\s+(?:day|morning))\b",
    ),
    ("weekday", rf"\b(?:(?:last|next|this)\s+)?{_WEEKDAY}\b"),
    (
        "month_alone",
        r"\b(?:(?:last|next|this|early|late|mid)[\s-]+)?"
        r"(?:january|february|march|april|may|june|july|august|september|october|"
        r"november|december)\b",
    ),
    ("the_weekend", r"\bthe\s+weekend\b"),
    # in reports: "the year ended March 31" (a year's span), "the year-earlier period"
    ("year_ended", r"\bthe\s+(?:fiscal\s+)?year(?=\s+end(?:ed|ing)\b)"),
    ("year_earlier", r"\b(?:the\s+)?year-(?:earlier|ago)(?:\s+period)?(?![\w-])"),
    (
        "the_year",
        r"\bthe\s+(?:full\s+|fiscal\s+|calendar\s+)?year\b"
        r"(?![\s-]+(?:earlier|ago|before|end|ended|ending|\d|two|nineteen|twenty))(?!-)",
    ),
    (
        "set",
        rf"\b(?:every|each|per)\s+(?:(?:{_NUM}\s+|other\s+)?{_UNIT}|{_WEEKDAY}|{_MONTH})\b"
        rf"|\b(?:{'|'.join(EVERY)})\b"
        rf"|\b{_WEEKDAY}s\b|\bweekends\b"
        rf"|\b(?:once|twice|{_NUM}\s+times)\s+(?:an?|per|each|every)\s+{_UNIT}\b",
    ),
    (
        "for_units",  # "for years", "in decades", "within hours"
        r"(?:(?<=\bfor\s)|(?<=\bin\s)|(?<=\bover\s)|(?<=\bwithin\s)|(?<=\bafter\s))"
        r"(?:years|months|weeks|days|decades|centuries|hours)\b",
    ),
    (
        "holiday",
        r"\b(?:thanksgiving(?:\s+day)?|christmas(?:\s+day|\s+eve)?|"
        r"new\s+year'?s(?:\s+day|\s+eve))\b",
    ),
    ("age", rf"\b{_NUM}[\s-]+years?[\s-]+old\b"),
    (
        "duration",
        rf"\b(?:(?:the\s+)?(?:past|last|next|first|coming)\s+)?"
        rf"(?:{_NUM}(?:\s+1/2|\s+and\s+a\s+half)?|(?:an?\s+)?couple\s+of)"
        rf"(?:\s+(?:more|additional|further|extra|straight|consecutive|successive))?"
        rf"[\s-]+(?:{_UNIT}|(?<!\ba\s)(?<!\ban\s)seconds?)(?:[\s-]+long)?\b"
        r"(?!-(?:earlier|ago))"  # not "a second", "a year-earlier loss"
        r"|\b(?:day|week|month|year|decade)-long\b"
        r"|\brecent\s+(?:years|months|weeks|days|decades|quarters)\b",
    ),
    (
        "century",
        r"\b(?:the\s+)?(?:1\d|2[01]|[1-9])(?:st|nd|rd|th)[\s-]+century\b"
        r"|\b(?:the\s+)?(?:nineteenth|twentieth|twenty-first)[\s-]+century\b",
    ),
    (
        "clock_day",
        rf"\b(?:{_CLOCK}|noon|midnight)(?:\s+(?:[ecmp][sd]t|gmt|local\s+time))?,?\s+(?:on\s+)?"
        rf"(?:{_WEEKDAY}|today|yesterday|tomorrow|{_MONTH}\s+{_DAY}\b(?!\s*,?\s*\d))",
    ),
    (  # "eight o'clock", "4 in the morning"
        "clock_word",
        rf"\b{_HOUR}(?::[0-5]\d)?\s+(?:o'?clock(?:\s+in\s+the\s+(?:morning|afternoon|evening)"
        r"|\s+at\s+night)?|in\s+the\s+(?:morning|afternoon|evening)|at\s+night)\b",
    ),
    ("clock", rf"\b{_CLOCK}|\b(?:noon|midnight)\b"),
    (
        "ref",
        r"\b(?:now|currently|the\s+past|the\s+future|recently|nowadays|at\s+present|"
        r"these\s+days|formerly|(?:the\s+)?(?:near|foreseeable|immediate)\s+future"
        r"|the\s+(?:near|short)\s+term"
        r"|current(?!\s+(?:year|quarter|month|week|fiscal|period|decade|season)))\b",
    ),
]
_ALTERNATIVES = "|".join(f"(?P<{name}>{rx})" for name, rx in PATTERNS)


@cache
def _expressions(any_case: bool) -> re.Pattern:
    """Every pattern as one, on lower-cased text (several times faster than IGNORECASE),
    or any case; compiled on first use: 70 ms that a run which recognizes nothing (an
    unchanged folder's ``kbx index``) does not pay."""
    return re.compile(_ALTERNATIVES, re.IGNORECASE if any_case else 0)


# Where an expression can start: the big pattern is tried only there, which makes the
# pass several times faster than scanning every position with it.
def _trie(words: Iterable[str]) -> str:
    """One pattern for many plain words, factored letter by letter ("jan(?:uary)?"): the
    engine then tries a few branches at each word instead of a hundred."""
    tree: dict = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def walk(node: dict) -> str:
        branches = [re.escape(ch) + walk(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        group = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{group})?" if "" in node else group

    return walk(tree)


_TRIGGER_WORDS = (
    *MONTHS,
    *WEEKDAYS,
    *(w for w in NUMBERS if w not in ("a", "an", "some")),
    *[
        "first",
        "second",
        "third",
        "fourth",
        *EVERY,
        "noon",
        "midnight",
        "once",
        "twice",
        "nineteenth",
        "twentieth",
        "thanksgiving",
        "christmas",
        "new",
        "years",
        "months",
        "weeks",
        "days",
        "decades",
        "centuries",
        "weekends",
        *(f"{day}s" for day in WEEKDAYS),
        "hours",
        "today",
        "yesterday",
        "tomorrow",
        "tonight",
        "this",
        "last",
        "next",
        "past",
        "previous",
        "coming",
        "current",
        "latest",
        "final",
        "year",
        "every",
        "each",
        "per",
        "fiscal",
        "spring",
        "summer",
        "fall",
        "autumn",
        "winter",
        "early",
        "late",
        "mid",
        "now",
        "currently",
        "recently",
        "recent",
        "nowadays",
        "these",
        "formerly",
        "near",
        "foreseeable",
        "immediate",
        "quarter",
    ],
)
# A number starts an expression only as a year, a slashed date, a clock time, or a count
# before a word ("3 years", "4 March", "5 1/2 hours", "3-year"): a version's or a hash's
# digits are not tried.
_DIGIT = (  # (?=\d) first: at a word's first letter the rest is not tried at all
    r"(?=\d)(?=(?:1[5-9]|20)\d\d|\d{1,2}/\d{1,2}/\d\d|\d{1,2}(?::\d\d)?[ap]|[0-9]0s\b"
    r"|\d[\d,.:]*(?:st|nd|rd|th)?(?:[\s-]*\s[\s-]*[a-z\d]|-+(?:year|month|week|day|decade|"
    r"centur|hour|minute|quarter)))\d"
)
_TRIGGERS = (
    r"\b(?:" + _DIGIT + r"|q[1-4]\b|" + _trie(_TRIGGER_WORDS) + r"\b"
    r"|an?\s+(?=(?:few\s+|couple\s+of\s+|additional\s+|extra\s+)?"
    r"(?:year|month|week|day|decade|hour|quarter))"
    r"|some\s+(?=\w+s\b)|at\s+(?=present)"
    r"|the\s+(?=past|last|next|coming|future|first|second|third|fourth|final|latest|"
    r"current|previous|year|quarter|weekend|days|weeks|months|years|full\s+year|"
    r"(?:near|foreseeable|immediate)\s+future|(?:near|short)\s+term|"
    r"fiscal\s+year|calendar\s+year|nineteenth|twentieth|twenty|\d|spring|summer|winter|"
    rf"(?:(?:early|late|mid)[\s-]+)?(?:nineteen[\s-]+)?{_DECADES}\b|"
    r"(?:end|beginning|start|middle|rest|remainder)\s+of\s|same\s|following\s)"
    r"|(?:earlier\s+|later\s+)?that\s+(?=(?:same\s+)?(?:day|week|month|year)\b)"
    r"|(?:day|week|month|decade)s?(?=-long\b))"
)
_TRIGGER = re.compile(_TRIGGERS)
_TRIGGER_ANY_CASE = re.compile(_TRIGGERS, re.IGNORECASE)

# The prefilter. Every pattern needs one of these whole words (a month, a weekday, a unit
# of time, a word of "now"), a year (\b1500 to \b2099), a slashed date or a clock time, so a
# unit with none is not scanned: most units of technical text hold digits (versions,
# hashes, sizes) and none of these. The words and years are found by one Aho-Corasick pass
# over the text with every character but a-z and 0-9 made a space (so a space stands for
# each \b, and more: never fewer), about ten times cheaper than a pattern tried everywhere.
_KEY_WORDS = (
    *MONTHS,
    *WEEKDAYS,
    *(f"{day}s" for day in WEEKDAYS),
    *UNITS,
    *(f"{unit}s" for unit in UNITS),
    *SEASONS,
    *PARTS_OF_DAY,
    *[
        "centuries",
        "weekend",
        "weekends",
        "night",
        "today",
        "yesterday",
        "tomorrow",
        "noon",
        "midnight",
        *EVERY,
        "quarterly",
        "thanksgiving",
        "christmas",
        "now",
        "currently",
        "current",
        "past",
        "future",
        "recently",
        "recent",
        "nowadays",
        "present",
        "formerly",
        "thousand",
        "clock",
        "term",
        "nineteen",
        "eighteen",
        *(t[:-1] + "ies" for t in _TENS),
    ],
)
_KEY = ahocorasick.Automaton()
_KEY_FORMS = {f" {w} " for w in _KEY_WORDS} | {f" {y}" for y in range(1500, 2100)}
for _key in _KEY_FORMS | {f" {d}0s " for d in range(10)}:  # "'90s"
    _KEY.add_word(_key, _key)
_KEY.make_automaton()
_SPACED = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))
_SLASHED = re.compile(r"/\d{1,2}/\d\d")  # "3/14/99" (a literal first: a fast scan)
_AM_PM = re.compile(r"\d\s*[ap]m\b")  # "3pm"; "a.m." and "p.m." are looked for as they are


def _has_key(low: str) -> bool:
    """Whether lower-cased ``low`` may hold an expression (False: it holds none)."""
    spaced = b" " + low.encode("ascii", "replace").translate(_SPACED) + b" "
    return (
        next(_KEY.iter(spaced.decode("ascii")), None) is not None
        or "a.m." in low
        or "p.m." in low
        or _AM_PM.search(low) is not None
        or _SLASHED.search(low) is not None
    )


_PARSE = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")


def _month(word: str) -> int:
    return MONTHS[word.casefold().rstrip(".,")]


def _num(word: str) -> int | str:
    w = word.casefold().replace(",", "")
    if w in NUMBERS:
        return NUMBERS[w]
    try:
        return int(float(w)) if float(w).is_integer() else w
    except ValueError:
        return "X"


@lru_cache(maxsize=20_000)
def _absolute_day(text: str) -> str | None:
    """A full day-month-year written out, parsed (dateparser for what strptime misses)."""
    clean = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text.replace(",", " "), flags=re.I)
    clean = re.sub(r"\bof\b|\.", " ", clean, flags=re.I)
    clean = " ".join(clean.split())
    for fmt in _PARSE:
        try:
            return datetime.strptime(clean, fmt).date().isoformat()
        except ValueError:
            continue
    import dateparser  # costly to import; only reached for unusual spellings

    parsed = dateparser.parse(clean, languages=["en"], settings={"STRICT_PARSING": True})
    return parsed.date().isoformat() if parsed else None


def _normalize(kind: str, text: str) -> tuple[str, str | None]:
    """The TIMEX3 type and (possibly relative) value of one candidate."""
    low = " ".join(text.casefold().split())
    words = low.replace("-", " ").split()
    if kind == "iso":
        return ("TIME" if "t" in low else "DATE"), text.upper()
    if kind == "mdy_slash":
        m, d, y = (int(x) for x in low.split("/"))
        y = y + (1900 if y >= 50 else 2000) if y < 100 else y
        try:
            return "DATE", date(y, m, d).isoformat()
        except ValueError:
            return "DATE", None
    if kind in ("dmy", "mdy"):
        return "DATE", _absolute_day(text)
    if kind in ("md", "dm", "weekday_md"):
        month = next(_month(w) for w in words if w.rstrip(".,") in MONTHS)
        day = int(re.search(r"\d+", low).group())
        return "DATE", f"REL:MD:{month:02d}-{day:02d}"
    if kind == "my":
        month = next(_month(w) for w in words if w.rstrip(".,") in MONTHS)
        year = re.search(r"\d{4}", low)
        return "DATE", f"{year.group() if year else _spoken_year(words[1:])}-{month:02d}"
    if kind == "month_rel_year":
        month = _month(words[0])
        shift = {"last": -1, "next": 1}.get(words[-2], 0)
        return "DATE", f"REL:MY:{month:02d}:{shift:+d}"
    if kind == "quarter_year":
        year = re.search(r"\d{4}", low).group()
        q = next((ORDINALS[w] for w in words if w in ORDINALS), None)
        q = q or int(re.search(r"q([1-4])", low).group(1))
        return "DATE", f"{year}-Q{q}"
    if kind == "season_rel":
        shift = {"last": -1, "next": 1}.get(words[0], 0)
        return "DATE", f"REL:S:{SEASONS[words[-1]]}:{shift:+d}"
    if kind == "quarter_rel":
        q = next((ORDINALS[w] for w in words if w in ORDINALS), None)
        if q:
            return "DATE", f"REL:QN:{q}"
        if words in (["the", "quarter"], ["quarter"]):
            return "DATE", "REL:Q-1"  # in reports, "the quarter" is the one just reported
        shift = (
            -1
            if any(w in words for w in ("last", "previous", "latest"))
            else (1 if "next" in words else 0)
        )
        if "year" in words[0] or "earlier" in low or "ago" in low:
            shift = -5  # the reported quarter (the one before the document's) a year back
        return "DATE", f"REL:Q{shift:+d}"
    if kind == "half_year":
        half = 1 if "first" in words else 2
        if year := re.search(r"\d{4}", low):
            return "DATE", f"{year.group()}-H{half}"
        return "DATE", f"REL:HY{_YEAR_SHIFT.get(words[-2], 0):+d}:{half}"
    if kind == "part_of_unit":  # "the end of the year": that year (TimeML's mod says which end)
        shift = {"last": -1, "next": 1}.get(words[-2], 0)
        unit = UNITS[words[-1]]
        return "DATE", f"REL:{'DE' if unit == 'DE' else unit[0]}{shift:+d}"
    if kind == "season_year":
        season = next(SEASONS[w] for w in words if w in SEASONS)
        year = re.search(r"\d{4}", low).group()
        return "DATE", f"{year}-{season}"
    if kind == "decade":
        if len(low) == 3:  # "'90s": of the last century, "'00s" and "'10s" of this
            return "DATE", ("20" if low[0] in "01" else "19") + low[0]
        return "DATE", re.search(r"\d{3}", low).group()
    if kind == "decade_word":
        return "DATE", f"19{_TENS.index(words[-1][:-3] + 'y') + 2}"
    if kind == "spoken_year":
        return "DATE", _spoken_year(words)
    if kind == "fiscal":
        return "DATE", re.search(r"\d{4}", low).group()
    if kind == "year":
        return "DATE", low
    if kind == "rel_day":
        if low == "tonight":
            return "TIME", "REL:TOD:NI"
        return "DATE", {"today": "REL:D+0", "yesterday": "REL:D-1", "tomorrow": "REL:D+1"}[low]
    if kind == "part_of_day":
        shift = {"yesterday": -1, "tomorrow": 1, "last": -1}.get(words[0], 0)
        return "TIME", f"REL:TOD:{PARTS_OF_DAY[words[-1]]}:{shift:+d}"
    if kind == "rel_unit":
        unit = words[-1]
        shift = (
            0 if words[0] in ("this", "current") else (1 if words[-2] in ("next", "coming") else -1)
        )
        if words[0] == "the" or words[0] == "past":
            if unit == "weekend":
                return "DATE", "REL:WE-1"
            return "DURATION", "P10Y" if unit == "decade" else f"P1{UNITS[unit]}"
        if unit == "weekend":
            return "DATE", f"REL:WE{shift:+d}"
        return "DATE", f"REL:{'DE' if unit == 'decade' else UNITS[unit][0]}{shift:+d}"
    if kind == "ago":
        n, unit = _num(words[0]), words[1].rstrip("s").replace("centurie", "century")
        sign = "+" if words[-1] == "now" else "-"
        if n == "X":
            return "DATE", "PAST_REF" if sign == "-" else "FUTURE_REF"
        if unit in ("decade", "century") and isinstance(n, int):
            n, unit = n * (10 if unit == "decade" else 100), "year"
        if unit in ("decade", "century", "minute", "second"):
            return "DATE", None  # no calendar value at this granularity
        return "DATE", f"REL:{UNITS[unit][0]}{sign}{n}"
    if kind == "anaphor":
        unit = "D" if words[-1] in ("day", "morning") else UNITS[words[-1]]
        shift = 1 if ("following" in words or "next" in words) else 0
        return "DATE", f"REL:ANA:{unit}:{shift:+d}:"
    if kind == "weekday_part":
        day, part = WEEKDAYS[words[-2].removesuffix("s")], PARTS_OF_DAY[words[-1].removesuffix("s")]
        if words[-1].endswith("s"):  # "Tuesday nights": every one
            return "SET", f"XXXX-WXX-{day + 1}T{part}"
        return "TIME", f"REL:WD:{day}:~@T{part}"
    if kind == "clock_day":
        return "TIME", _clock_day(low)
    if kind == "year_ended":
        return "DURATION", "P1Y"
    if kind == "year_earlier":
        return "DATE", "REL:Y-1"
    if kind == "the_year":  # in news, the year the text is written in
        return "DATE", "REL:Y+0"
    if kind == "the_weekend":
        return "DATE", "REL:WE:~"
    if kind == "century":
        word = re.sub(r"[\s-]+century$", "", low).split()[-1]
        n = CENTURIES.get(word) or int(re.match(r"\d+", word).group())
        return "DATE", f"{n - 1:02d}"
    if kind == "weekday":
        day = WEEKDAYS[words[-1]]
        direction = {"last": "-", "next": "+"}.get(words[0], "~")
        return "DATE", f"REL:WD:{day}:{direction}"
    if kind == "month_alone":
        month = _month(words[-1])
        shift = {"last": "-", "next": "+"}.get(words[0], "~")
        return "DATE", f"REL:MON:{month:02d}:{shift}"
    if kind == "holiday":
        if low.startswith("thanksgiving"):
            return "DATE", "REL:THANKSGIVING"
        if low.startswith("christmas"):
            return "DATE", "REL:MD:12-24" if low.endswith("eve") else "REL:MD:12-25"
        return "DATE", "REL:MD:12-31" if low.endswith("eve") else "REL:MD:01-01"
    if kind in ("for_units", "plural_span"):
        unit = words[-2] if words[-1] in ("ahead", "long") else words[-1]
        return "DURATION", _span("X", unit)
    if kind == "set":
        if len(words) > 2 and words[-2] in ("a", "an", "per", "each", "every"):
            return "SET", _span(1, words[-1])  # "twice a year"
        if words[-1] in WEEKDAYS or words[-1][:-1] in WEEKDAYS:  # "every Tuesday", "Fridays"
            return "SET", f"XXXX-WXX-{WEEKDAYS[words[-1].removesuffix('s')] + 1}"
        if words[-1] == "weekends":
            return "SET", "XXXX-WXX-WE"
        if words[-1].rstrip(".") in MONTHS:
            return "SET", f"XXXX-{_month(words[-1]):02d}"
        if words[0] in ("every", "each", "per"):
            n = (2 if words[1] == "other" else _num(words[1])) if len(words) > 2 else 1
            return "SET", _span(n, words[-1])
        unit = {
            "daily": "D",
            "weekly": "W",
            "monthly": "M",
            "annually": "Y",
            "yearly": "Y",
            "quarterly": "Q",
            "hourly": "H",
        }[low]
        return "SET", ("PT1H" if unit == "H" else f"P1{unit}")
    if kind == "duration":
        if words[0] == "recent":  # "in recent years": some years (PXY)
            return "DURATION", _span("X", words[-1])
        if re.fullmatch(r"[a-z]+-quarters?", low):
            return "DURATION", None  # "three-quarters of": a fraction
        core = [w for w in words if w not in _NOT_COUNTS]
        n = _num(core[0])
        if len(core) == 1 or (core[0] in ("a", "an") and core[-1].endswith("s")):
            n = "X" if core[-1].endswith("s") else 1  # "day-long", "a decades-long"
        n = 2 if "couple" in words else n
        span = _span(n, core[-1])
        if ("1/2" in words or "half" in words) and (half := _HALF.get(span[-1])):
            span += half  # "5 1/2 hours" PT5H30M, "2 1/2 years" P2Y6M
        return "DURATION", span
    if kind == "clock":
        return "TIME", f"REL:T:{_clock(low)}"
    if kind == "clock_word":
        hour, minute = _num(words[0].split(":")[0]), (words[0].split(":") + ["00"])[1]
        later = words[-1] in ("afternoon", "evening", "night") and hour != 12
        return "TIME", f"REL:T:{int(hour) % 12 + 12 * later if later else hour:02d}:{minute}"
    if kind == "ref":
        if low in ("now", "current", "currently", "nowadays", "at present", "these days"):
            return "DATE", "PRESENT_REF"
        if low.endswith(("future", "term")):
            return "DATE", "FUTURE_REF"
        return "DATE", "PAST_REF"
    return "DATE", None


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


_NOT_COUNTS = {"the", "past", "last", "next", "first", "coming", "long", "more", "additional"}
_NOT_COUNTS |= {"further", "extra", "straight", "consecutive", "successive"}
_HALF = {"Y": "6M", "H": "30M", "D": "T12H", "M": "15D"}  # half of the last unit, added
_YEAR_SHIFT = {"last": -1, "next": 1}


def _spoken_year(words: list[str]) -> str:
    """ "nineteen ninety six" 1996, "eighteen hundred and five" 1805, "two thousand one"."""
    words = [w for w in words if w not in ("the", "year", "and", "of")]
    century = 20 if words[0] == "two" else NUMBERS[words[0]]
    rest = words[2:] if words[0] == "two" or words[1] == "hundred" else words[1:]
    tens = {t: 10 * i for i, t in enumerate(_TENS, start=2)}
    n = sum(tens.get(w) or NUMBERS.get(w, 0) for w in rest)
    return f"{century * 100 + n:04d}"


def _span(n: int | str, word: str) -> str:
    """``n`` of a unit as a TIMEX3 period: ``P3Y``, ``PT2H``, ``P2Q``, ``P30Y`` for three
    decades; ``X`` (some) stays: ``PXY``, ``PTXH``, ``PXDE``."""
    unit = word.rstrip("s").replace("centurie", "century")
    code = UNITS[unit]
    if isinstance(n, int) and code in ("DE", "CE"):
        n, code = n * (10 if code == "DE" else 100), "Y"
    return f"P{'T' if unit in ('hour', 'minute', 'second') else ''}{n}{code}"


def _clock(low: str) -> str:
    """``HH:MM`` of "3 p.m.", "10:35 a.m.", "noon" or "midnight" (``24:00``, as TimeML)."""
    if low.startswith(("noon", "midnight")):
        return "12:00" if low.startswith("noon") else "24:00"
    m = re.match(r"(\d+)(?::(\d\d))?\s*([ap])?", low)
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "p" else 0)
    return f"{hour:02d}:{m.group(2) or '00'}"


def _clock_day(low: str) -> str | None:
    """A clock time on a named day ("10 p.m. Wednesday", "noon today", "5 p.m. EST Nov. 9"):
    the day's relative value with the time after ``@``."""
    words = re.sub(r"[,.]", " ", low).split()
    day = words[-1]
    if day in WEEKDAYS:
        base = f"WD:{WEEKDAYS[day]}:~"
    elif day in ("today", "yesterday", "tomorrow"):
        base = {"today": "D+0", "yesterday": "D-1", "tomorrow": "D+1"}[day]
    else:
        month = next(_month(w) for w in words if w in MONTHS)
        base = f"MD:{month:02d}-{int(re.match(r'[0-9]+', day).group()):02d}"
    return f"REL:{base}@T{_clock(low)}"


class DateRecognizer:
    """TIMEX3 dates, times, durations and sets; relative ones resolved per document."""

    info = RecognizerInfo(
        # 9: no year in an identifier ("RFC 2047", "CVE-2024-2004", "1.0+2022"), nor a
        # range that runs backwards; 8: "'90s" is the mention "90s" (the scan opens at a
        # digit, faster); 7: "a year-earlier loss" is the year before, not "a year"; 6:
        # spoken years and decades, clock times in words, seconds, runs of units, the near
        # future; 5: amounts in a unit are not years, months end at a word's end; 4: tense,
        # days with times, sets of days; 3: not in inline code, not across table cells; 2:
        # not code
        name="dates",
        version="9",
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
        kind = m.lastgroup
        start, end = m.span()
        if kind == "age" or (kind == "year" and not _year_context(text, start, end)):
            continue
        typ, value = _normalize(kind, text[start:end])
        if value is None:
            continue
        if kind == "anaphor":
            if anchor is None:
                continue
            value += anchor
        if (
            kind in ("clock", "clock_word") and anchor is not None
        ):  # "at 10:35 a.m.": on the day last named
            value = f"REL:ANAT:{value[6:]}:{anchor}"
        if ":~" in value:  # a bare "Tuesday" or "March": which way, by the tense
            value = value.replace(":~", ":>" if _ahead(low, start) else ":<")
        if kind == "month_alone" and not _month_name(text, start, end):
            continue
        if (
            kind in ("ago", "year_earlier")
            and value == "REL:Y-1"
            and "quarter" in low[max(0, start - 300) : start]
        ):
            value = "REL:Q-5"  # "a year ago" in a quarterly report: that quarter
        conf = 0.6 if kind in ("year", "ref", "month_alone", "weekday") else 0.9
        if typ in ("DATE", "TIME") and (value[0].isdigit() or value.startswith("REL:")):
            anchor = value.removeprefix("REL:")
        yield kind, Mention(start, end, typ, text[start:end], value, conf)


def _month_name(text: str, start: int, end: int) -> bool:
    """Months "May" and "March" are capitalized, and "May" alone not at the start of
    a sentence (where it can be the verb): "in May", "last March", not "it may"."""
    word = text[start:end].split()[-1].split("-")[-1]
    if word.lower() not in ("may", "march"):
        return True
    if not word[0].isupper():
        return False
    before = text[max(0, start - 3) : start].rstrip()
    if word.lower() == "march" or word != text[start:end]:
        return True
    return not (before == "" or before[-1] in ".!?\"'`:")


# "#2004", "No. 1999", "1.2.2022", "1:2022", "1.0+2022", "2.1~2022": a number or a version's
_NOT_YEAR_BEFORE = re.compile(
    r"(?:[$€£#]|\bno\.?|\bnumber|\d[.,]|[.,:/-]\d*|(?<=\w)[+~])\s*$", re.I
)
_YEAR_RANGE_AFTER = re.compile(r"^[-–](?P<to>(?:1[5-9]|20)\d\d)\b")
_YEAR_PREFIX = re.compile(
    r"(?:\b(?:mid|pre|post|early|late)|\b(?P<from>(?:1[5-9]|20)\d\d))[-–]$", re.I
)
# A number that an identifier names: after a standard's or a catalogue's label ("RFC 2047",
# "ISO 2022", "ISO/IEC 2022", "BCP 1998", "IEEE 1588"; the labels in capitals, as written),
# or inside a token that letters and a dash open ("CVE-2024-2004", "DSA-2004-1",
# "0003-CVE-2015-1782.patch"): never a year, nor the two numbers a range of years.
_ID_LABEL = re.compile(r"\b(?:RFCs?|rfc|ISO|IEC|BCP|STD|ISBN|ISSN|IEEE|CVE)[\s\u00a0-]*(?:\d+-)*$")
_ID_PREFIX = re.compile(r"(?<![A-Za-z])(?!(?i:mid|pre|post|early|late)-)[A-Za-z]+-(?:\d+-)*$")
_NOT_YEAR_AFTER = re.compile(r"^(?:\s*(?:%|percent|[.,]\d|/|-\d|:\d|[a-z]*\d))", re.I)
# "1500 g", "2048 MB", "1800 calories", "2000 dollars": an amount in a unit (as the quantity
# recognizer reads units: symbols in their case, words in any)
_UNIT_AFTER = re.compile(
    rf"[\s\u00a0]?-?(?!(?i:{_SPAN_UNIT}|second))(?:{ATOM}|(?i:(?:dollar|euro|pound|franc|mark|yen|yuan|rupee|peso)s?\b))"
    r"(?![.-]?[A-Za-z]|(?<=\b[A-Z])\.)"  # not "2000 B.C.", "2004 K-pop", "1999 W. Bush"
)


def _year_context(text: str, start: int, end: int) -> bool:
    """A four-digit number from 1500 to 2099 is a year unless it reads as an amount, a
    count, a version, part of another number ("$1999", "2019.5", "1999/2000") or a number
    an identifier names ("RFC 2047", "CVE-2024-2004")."""
    before, after = text[max(0, start - 8) : start], text[end : end + 24]
    head = text[max(0, start - 24) : start]
    if _ID_LABEL.search(head) or _ID_PREFIX.search(head):
        return False  # "RFC 2047", "CVE-2024-2004"
    year = int(text[start:end])
    if (to := _YEAR_RANGE_AFTER.match(after)) and int(to["to"]) > year:
        return True  # "2009-2011" (not "2024-2004")
    if (prefix := _YEAR_PREFIX.search(before)) and (
        prefix["from"] is None or int(prefix["from"]) < year
    ):
        return True  # "mid-2012", "post-1959", the end of "2009-2011"
    return not (
        _NOT_YEAR_BEFORE.search(before) or _NOT_YEAR_AFTER.match(after) or _UNIT_AFTER.match(after)
    )
