"""The date recognizer's vocabulary: the words of dates and times with their values, the
pieces its patterns are written from, and the small readers that turn written parts into
TIMEX3 parts ("three decades" ``P30Y``, "10:35 p.m." ``22:35``). Nothing here knows which
pattern uses it (``date_patterns.py`` says that)."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from kbx.recognizers.trie import trie

_MONTH_FORMS = [
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
]
MONTHS = {m: i for i, names in enumerate(_MONTH_FORMS, start=1) for m in names}
MONTH_NAMES = tuple(names[0] for names in _MONTH_FORMS)  # in full: "march", not "mar"
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
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
DECADE_WORDS = [t[:-1] + "ies" for t in TENS]  # "twenties" to "nineties"

# --- the pieces the patterns are written from (on lower-cased text) ---------------------------

MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?(?![a-z])"
)  # not "3 decoders"
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
YEAR = r"(?:1[5-9][0-9][0-9]|20[0-9][0-9])"  # ASCII digits, as the prefilter reads
DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
NUM = (
    r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|"
    + trie(NUMBERS)  # a tree: tried where the letters lead, not word by word
    + r")"
)
UNIT = r"(?:year|month|week|day|decade|centur(?:y|ie)|hour|minute|quarter)s?"
ORD = r"(?:first|second|third|fourth|1st|2nd|3rd|4th)"
SPAN_UNIT = r"(?:year|month|week|day|decade|centur(?:y|ie)|hour|minute)"
# after a day and month, no year ("4 March, 1999" is dmy's): a clock time may follow
NO_YEAR = r"(?!\s*,?\s*(?:\d{4}|'?\d\d)\b(?!\s*(?:[ap]\.?m\b|:)))"
DECADES = "(?:" + "|".join(DECADE_WORDS) + ")"
_ONES = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEENS = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
SPOKEN_YEAR = (
    rf"\b(?:the\s+year\s+)?(?:nineteen|eighteen)[\s-]+(?:{_TEENS}|(?:{'|'.join(TENS)})"
    rf"(?:[\s-]+{_ONES})?|hundred(?:\s+and)?(?:[\s-]+(?:{_ONES}|{_TEENS}))?)\b"
    rf"|\bthe\s+year\s+two\s+thousand\b(?:(?:\s+and)?[\s-]+(?:{_ONES}|{_TEENS}))?"
    rf"|\btwo\s+thousand(?:\s+and)?[\s-]+(?:{_ONES}|ten|eleven|twelve)\b(?![\s-]+\w+s\b)"
)
HOUR = r"(?:1[0-2]|0?[1-9]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
CLOCK = r"(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)"

# --- where a number starts an expression (a pattern's triggers) --------------------------------
# Only as a year, a slashed date, a clock time, a decade or a count before a word ("3 years",
# "4 March", "5 1/2 hours", "3-year"): a version's or a hash's digits are not tried. Each is
# written as what follows a word's start, ``(?=…)``; the scan joins them.

AT_YEAR = r"(?=(?:1[5-9]|20)\d\d)"
AT_SLASHED = r"(?=\d{1,2}/\d{1,2}/\d\d)"
AT_CLOCK = r"(?=\d{1,2}(?::\d\d)?[ap])"
AT_DECADE = r"(?=[0-9]0s\b)"  # "'90s"
AT_COUNT = (
    r"(?=\d[\d,.:]*(?:st|nd|rd|th)?(?:[\s-]*\s[\s-]*[a-z\d]|-+(?:year|month|week|day|decade|"
    r"centur|hour|minute|quarter)))"
)

# --- what a unit must hold for a pattern to match there (a pattern's keys) ---------------------
# Besides whole words: these four, which the prefilter looks for in their own ways.

YEAR_KEY = "<year>"  # a year from 1500 to 2099 at a word's start
DECADE_KEY = "<'90s>"  # "90s" as a word
CLOCK_KEY = "<clock>"  # "a.m.", "p.m.", "3pm", "3 am"
SLASHED_KEY = "<slashed>"  # "3/14/99"
UNIT_WORDS = (*UNITS, *(f"{unit}s" for unit in UNITS), "centuries")  # "day", "centuries"
COUNTED_WORDS = tuple(w for w in NUMBERS if w not in ("a", "an", "some"))  # "three", "few"


# --- readers: written parts to TIMEX3 parts ----------------------------------------------------

HALF = {"Y": "6M", "H": "30M", "D": "T12H", "M": "15D"}  # half of the last unit, added
_PARSE = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")


def month(word: str) -> int:
    return MONTHS[word.casefold().rstrip(".,")]


def num(word: str) -> int | str:
    w = word.casefold().replace(",", "")
    if w in NUMBERS:
        return NUMBERS[w]
    try:
        return int(float(w)) if float(w).is_integer() else w
    except ValueError:
        return "X"


def span(n: int | str, word: str) -> str:
    """``n`` of a unit as a TIMEX3 period: ``P3Y``, ``PT2H``, ``P2Q``, ``P30Y`` for three
    decades; ``X`` (some) stays: ``PXY``, ``PTXH``, ``PXDE``."""
    unit = word.rstrip("s").replace("centurie", "century")
    code = UNITS[unit]
    if isinstance(n, int) and code in ("DE", "CE"):
        n, code = n * (10 if code == "DE" else 100), "Y"
    return f"P{'T' if unit in ('hour', 'minute', 'second') else ''}{n}{code}"


def spoken_year(words: list[str]) -> str:
    """ "nineteen ninety six" 1996, "eighteen hundred and five" 1805, "two thousand one"."""
    words = [w for w in words if w not in ("the", "year", "and", "of")]
    century = 20 if words[0] == "two" else NUMBERS[words[0]]
    rest = words[2:] if words[0] == "two" or words[1] == "hundred" else words[1:]
    tens = {t: 10 * i for i, t in enumerate(TENS, start=2)}
    n = sum(tens.get(w) or NUMBERS.get(w, 0) for w in rest)
    return f"{century * 100 + n:04d}"


def clock(low: str) -> str:
    """``HH:MM`` of "3 p.m.", "10:35 a.m.", "noon" or "midnight" (``24:00``, as TimeML)."""
    if low.startswith(("noon", "midnight")):
        return "12:00" if low.startswith("noon") else "24:00"
    m = re.match(r"(\d+)(?::(\d\d))?\s*([ap])?", low)
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "p" else 0)
    return f"{hour:02d}:{m.group(2) or '00'}"


def clock_day(low: str) -> str | None:
    """A clock time on a named day ("10 p.m. Wednesday", "noon today", "5 p.m. EST Nov. 9"):
    the day's relative value with the time after ``@``."""
    words = re.sub(r"[,.]", " ", low).split()
    day = words[-1]
    if day in WEEKDAYS:
        base = f"WD:{WEEKDAYS[day]}:~"
    elif day in ("today", "yesterday", "tomorrow"):
        base = {"today": "D+0", "yesterday": "D-1", "tomorrow": "D+1"}[day]
    else:
        n = next(month(w) for w in words if w in MONTHS)
        base = f"MD:{n:02d}-{int(re.match(r'[0-9]+', day).group()):02d}"
    return f"REL:{base}@T{clock(low)}"


@lru_cache(maxsize=20_000)
def absolute_day(text: str) -> str | None:
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
