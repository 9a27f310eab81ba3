"""What a date pattern's match is worth: its TIMEX3 type and value, and whether the text
around keeps it. ``date_patterns.py`` names, for each pattern, the functions here it uses.

A value function is given the expression three ways: ``low`` (case-folded, each run of
spaces one space), ``words`` (``low``'s words, a hyphen a space) and ``text`` as written; it
returns the TIMEX3 type and the value, relative (``REL:…``, resolved per document by
``kbx.timex.resolve``) or absolute, or None where the expression has no calendar value.
"""

from __future__ import annotations

import re
from datetime import date

from kbx.recognizers import date_words as dw
from kbx.recognizers.date_words import (
    CENTURIES,
    HALF,
    MONTHS,
    ORDINALS,
    PARTS_OF_DAY,
    SEASONS,
    SPAN_UNIT,
    TENS,
    UNITS,
    WEEKDAYS,
    absolute_day,
    month,
    num,
    span,
)
from kbx.recognizers.units import ATOM, DATA

Value = tuple[str, str | None]  # TIMEX3 type, value (None: no calendar value, no mention)

_SHIFT = {"last": -1, "next": 1}
_NOT_COUNTS = {"the", "past", "last", "next", "first", "coming", "long", "more", "additional"}
_NOT_COUNTS |= {"further", "extra", "straight", "consecutive", "successive"}


# --- the values -----------------------------------------------------------------------------


def iso(low: str, words: list[str], text: str) -> Value:
    return ("TIME" if "t" in low else "DATE"), text.upper()


def mdy_slash(low: str, words: list[str], text: str) -> Value:
    m, d, y = (int(x) for x in low.split("/"))
    y = y + (1900 if y >= 50 else 2000) if y < 100 else y
    try:
        return "DATE", date(y, m, d).isoformat()
    except ValueError:
        return "DATE", None


def day_month_year(low: str, words: list[str], text: str) -> Value:
    return "DATE", absolute_day(text)


def month_day(low: str, words: list[str], text: str) -> Value:
    n = next(month(w) for w in words if w.rstrip(".,") in MONTHS)
    day = int(re.search(r"\d+", low).group())
    return "DATE", f"REL:MD:{n:02d}-{day:02d}"


def month_year(low: str, words: list[str], text: str) -> Value:
    n = next(month(w) for w in words if w.rstrip(".,") in MONTHS)
    year = re.search(r"\d{4}", low)
    return "DATE", f"{year.group() if year else dw.spoken_year(words[1:])}-{n:02d}"


def month_rel_year(low: str, words: list[str], text: str) -> Value:
    shift = _SHIFT.get(words[-2], 0)
    return "DATE", f"REL:MY:{month(words[0]):02d}:{shift:+d}"


def quarter_year(low: str, words: list[str], text: str) -> Value:
    year = re.search(r"\d{4}", low).group()
    q = next((ORDINALS[w] for w in words if w in ORDINALS), None)
    q = q or int(re.search(r"q([1-4])", low).group(1))
    return "DATE", f"{year}-Q{q}"


def quarter_rel(low: str, words: list[str], text: str) -> Value:
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


def half_year(low: str, words: list[str], text: str) -> Value:
    half = 1 if "first" in words else 2
    if year := re.search(r"\d{4}", low):
        return "DATE", f"{year.group()}-H{half}"
    return "DATE", f"REL:HY{_SHIFT.get(words[-2], 0):+d}:{half}"


def part_of_unit(low: str, words: list[str], text: str) -> Value:
    """ "The end of the year": that year (TimeML's mod says which end)."""
    shift = _SHIFT.get(words[-2], 0)
    unit = UNITS[words[-1]]
    return "DATE", f"REL:{'DE' if unit == 'DE' else unit[0]}{shift:+d}"


def season_year(low: str, words: list[str], text: str) -> Value:
    season = next(SEASONS[w] for w in words if w in SEASONS)
    year = re.search(r"\d{4}", low).group()
    return "DATE", f"{year}-{season}"


def season_rel(low: str, words: list[str], text: str) -> Value:
    shift = _SHIFT.get(words[0], 0)
    return "DATE", f"REL:S:{SEASONS[words[-1]]}:{shift:+d}"


def spoken_year(low: str, words: list[str], text: str) -> Value:
    return "DATE", dw.spoken_year(words)


def decade(low: str, words: list[str], text: str) -> Value:
    if len(low) == 3:  # "'90s": of the last century, "'00s" and "'10s" of this
        return "DATE", ("20" if low[0] in "01" else "19") + low[0]
    return "DATE", re.search(r"\d{3}", low).group()


def decade_word(low: str, words: list[str], text: str) -> Value:
    return "DATE", f"19{TENS.index(words[-1][:-3] + 'y') + 2}"


def four_digits(low: str, words: list[str], text: str) -> Value:
    return "DATE", re.search(r"\d{4}", low).group()


def year(low: str, words: list[str], text: str) -> Value:
    return "DATE", low


def rel_day(low: str, words: list[str], text: str) -> Value:
    if low == "tonight":
        return "TIME", "REL:TOD:NI"
    return "DATE", {"today": "REL:D+0", "yesterday": "REL:D-1", "tomorrow": "REL:D+1"}[low]


def part_of_day(low: str, words: list[str], text: str) -> Value:
    shift = {"yesterday": -1, "tomorrow": 1, "last": -1}.get(words[0], 0)
    return "TIME", f"REL:TOD:{PARTS_OF_DAY[words[-1]]}:{shift:+d}"


def rel_unit(low: str, words: list[str], text: str) -> Value:
    unit = words[-1]
    shift = 0 if words[0] in ("this", "current") else (1 if words[-2] in ("next", "coming") else -1)
    if words[0] == "the" or words[0] == "past":
        if unit == "weekend":
            return "DATE", "REL:WE-1"
        return "DURATION", "P10Y" if unit == "decade" else f"P1{UNITS[unit]}"
    if unit == "weekend":
        return "DATE", f"REL:WE{shift:+d}"
    return "DATE", f"REL:{'DE' if unit == 'decade' else UNITS[unit][0]}{shift:+d}"


def ago(low: str, words: list[str], text: str) -> Value:
    n, unit = num(words[0]), words[1].rstrip("s").replace("centurie", "century")
    sign = "+" if words[-1] == "now" else "-"
    if n == "X":
        return "DATE", "PAST_REF" if sign == "-" else "FUTURE_REF"
    if unit in ("decade", "century") and isinstance(n, int):
        n, unit = n * (10 if unit == "decade" else 100), "year"
    if unit in ("decade", "century", "minute", "second"):
        return "DATE", None  # no calendar value at this granularity
    return "DATE", f"REL:{UNITS[unit][0]}{sign}{n}"


def some_units(low: str, words: list[str], text: str) -> Value:
    """ "For years", "the coming days", "weeks-long": some of the unit."""
    unit = words[-2] if words[-1] in ("ahead", "long") else words[-1]
    return "DURATION", span("X", unit)


def weekday_part(low: str, words: list[str], text: str) -> Value:
    day, part = WEEKDAYS[words[-2].removesuffix("s")], PARTS_OF_DAY[words[-1].removesuffix("s")]
    if words[-1].endswith("s"):  # "Tuesday nights": every one
        return "SET", f"XXXX-WXX-{day + 1}T{part}"
    return "TIME", f"REL:WD:{day}:~@T{part}"


def anaphor(low: str, words: list[str], text: str) -> Value:
    unit = "D" if words[-1] in ("day", "morning") else UNITS[words[-1]]
    shift = 1 if ("following" in words or "next" in words) else 0
    return "DATE", f"REL:ANA:{unit}:{shift:+d}:"


def weekday(low: str, words: list[str], text: str) -> Value:
    direction = {"last": "-", "next": "+"}.get(words[0], "~")
    return "DATE", f"REL:WD:{WEEKDAYS[words[-1]]}:{direction}"


def month_alone(low: str, words: list[str], text: str) -> Value:
    shift = {"last": "-", "next": "+"}.get(words[0], "~")
    return "DATE", f"REL:MON:{month(words[-1]):02d}:{shift}"


def the_weekend(low: str, words: list[str], text: str) -> Value:
    return "DATE", "REL:WE:~"


def year_ended(low: str, words: list[str], text: str) -> Value:
    return "DURATION", "P1Y"


def year_earlier(low: str, words: list[str], text: str) -> Value:
    return "DATE", "REL:Y-1"


def the_year(low: str, words: list[str], text: str) -> Value:
    return "DATE", "REL:Y+0"  # in news, the year the text is written in


def recurring(low: str, words: list[str], text: str) -> Value:
    if len(words) > 2 and words[-2] in ("a", "an", "per", "each", "every"):
        return "SET", span(1, words[-1])  # "twice a year"
    if words[-1] in WEEKDAYS or words[-1][:-1] in WEEKDAYS:  # "every Tuesday", "Fridays"
        return "SET", f"XXXX-WXX-{WEEKDAYS[words[-1].removesuffix('s')] + 1}"
    if words[-1] == "weekends":
        return "SET", "XXXX-WXX-WE"
    if words[-1].rstrip(".") in MONTHS:
        return "SET", f"XXXX-{month(words[-1]):02d}"
    if words[0] in ("every", "each", "per"):
        n = (2 if words[1] == "other" else num(words[1])) if len(words) > 2 else 1
        return "SET", span(n, words[-1])
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


def holiday(low: str, words: list[str], text: str) -> Value:
    if low.startswith("thanksgiving"):
        return "DATE", "REL:THANKSGIVING"
    if low.startswith("christmas"):
        return "DATE", "REL:MD:12-24" if low.endswith("eve") else "REL:MD:12-25"
    return "DATE", "REL:MD:12-31" if low.endswith("eve") else "REL:MD:01-01"


def age(low: str, words: list[str], text: str) -> Value:
    """ "3 years old": matched so that it is no duration, and no mention either."""
    return "DURATION", None


def duration(low: str, words: list[str], text: str) -> Value:
    if words[0] == "recent":  # "in recent years": some years (PXY)
        return "DURATION", span("X", words[-1])
    if re.fullmatch(r"[a-z]+-quarters?", low):
        return "DURATION", None  # "three-quarters of": a fraction
    core = [w for w in words if w not in _NOT_COUNTS]
    n = num(core[0])
    if len(core) == 1 or (core[0] in ("a", "an") and core[-1].endswith("s")):
        n = "X" if core[-1].endswith("s") else 1  # "day-long", "a decades-long"
    n = 2 if "couple" in words else n
    period = span(n, core[-1])
    if ("1/2" in words or "half" in words) and (half := HALF.get(period[-1])):
        period += half  # "5 1/2 hours" PT5H30M, "2 1/2 years" P2Y6M
    return "DURATION", period


def century(low: str, words: list[str], text: str) -> Value:
    word = re.sub(r"[\s-]+century$", "", low).split()[-1]
    n = CENTURIES.get(word) or int(re.match(r"\d+", word).group())
    return "DATE", f"{n - 1:02d}"


def clock_day(low: str, words: list[str], text: str) -> Value:
    return "TIME", dw.clock_day(low)


def clock_word(low: str, words: list[str], text: str) -> Value:
    hour, minute = num(words[0].split(":")[0]), (words[0].split(":") + ["00"])[1]
    later = words[-1] in ("afternoon", "evening", "night") and hour != 12
    return "TIME", f"REL:T:{int(hour) % 12 + 12 * later if later else hour:02d}:{minute}"


def clock(low: str, words: list[str], text: str) -> Value:
    return "TIME", f"REL:T:{dw.clock(low)}"


def ref(low: str, words: list[str], text: str) -> Value:
    if low in ("now", "current", "currently", "nowadays", "at present", "these days"):
        return "DATE", "PRESENT_REF"
    if low.endswith(("future", "term")):
        return "DATE", "FUTURE_REF"
    return "DATE", "PAST_REF"


# --- what the text around says ----------------------------------------------------------------


def month_name(text: str, start: int, end: int) -> bool:
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


# "#2004", "No. 1999", "1.2.2022", "1:2022", "1.0+2022", "2.1~2022": a number or a version's;
# "!1975": a GitLab merge request (version 11; not "done!1999", a word's "!")
_NOT_YEAR_BEFORE = re.compile(
    r"(?:[$€£#]|\bno\.?|\bnumber|\d[.,]|[.,:/-]\d*|(?<=\w)[+~]|(?<![\w!])!)\s*$", re.I
)
_YEAR_RANGE_AFTER = re.compile(r"^[-–](?P<to>(?:1[5-9]|20)\d\d)\b")
_YEAR_PREFIX = re.compile(
    r"(?:\b(?:mid|pre|post|early|late)|\b(?P<from>(?:1[5-9]|20)\d\d))[-–]$", re.I
)
# A number that an identifier names: after a standard's or a catalogue's label ("RFC 2047",
# "ISO 2022", "ISO/IEC 2022", "BCP 1998", "IEEE 1588"; the labels in capitals, as written),
# or inside a token that letters and a dash open ("CVE-2024-2004", "DSA-2004-1",
# "0003-CVE-2015-1782.patch"): never a year, nor the two numbers a range of years. A
# tracker's or a build's number too ("bug 1999", "build 2001", "version 1845", "PR 2019"),
# in any case but "PR". Not "v", "rev", "revision" nor "release": initials and journals
# ("R. V. 2022", "Chem. Rev. 2019"), YANG's "revision 2018-03-13" and releases named by
# their year ("release 2021") put real years there.
#
# The same holds after any noun that takes a number as its name or its value (version 11):
# a place in a file or a list ("line 1587", "lines 1999-2003", "page 1999", "port 2049",
# "row", "column", "item", "offset", "index", "fig."), a process's or a user's number ("pid",
# "uid", "errno"), a setting's value ("value to 1500", "line lengths to 2048", "size = 2048",
# "limit of 1900", "timeout", "max"; "size", "length", "limit" and "width" end compounds too:
# "keysize to 2048", "-Olimit 1500"), a defect report or a merge request ("DR 2082", "MR",
# the C++ lists' "LWG 2082", "CWG 1999") and git's binary diffstat ("Bin 1678 -> 1846
# bytes"). A year is never the name of such a thing: these nouns, unlike "release",
# "revision" or "copyright", do not take a date after them.
_ID_LABEL = re.compile(
    r"\b(?:RFCs?|rfc|ISO|IEC|BCP|STD|ISBN|ISSN|IEEE|CVE|PRs?|MRs?|DRs?|LWG|CWG"
    r"|(?i:bugs?|build|version|issue|ticket|patch|pull[\s\u00a0]+request"
    r"|lines?|pages?|ports?|rows?|columns?|items?|offsets?|index|fig(?:ure)?s?\.?|pid|[ug]id"
    r"|errno))"
    r"[\s\u00a0-]*(?:\d+-)*$"
    r"|\b(?:pp?\.|Bin)[\s\u00a0]*$"
    r"|(?i:\b(?:values?|count|timeout|max(?:imum)?|min(?:imum)?)|sizes?|lengths?|limits?|width)"
    r"(?:[\s\u00a0]+(?:to|of|is|at)[\s\u00a0]+|[\s\u00a0]*[=:]?[\s\u00a0]*)$"
)
_ID_PREFIX = re.compile(r"(?<![A-Za-z])(?!(?i:mid|pre|post|early|late)-)[A-Za-z]+-(?:\d+-)*$")
_NOT_YEAR_AFTER = re.compile(r"^(?:\s*(?:%|percent|[.,]\d|/|-\d|:\d|[a-z]*\d))", re.I)
# "1500 g", "2048 MB", "1800 calories", "2000 dollars": an amount in a unit (as the quantity
# recognizer reads units: symbols in their case, words in any), and "2048 bit", "2048-bit",
# which the quantity recognizer leaves (a word size, there) but which is no year either
_UNIT_AFTER = re.compile(
    rf"[\s\u00a0]?-?(?!(?i:{SPAN_UNIT}|second))(?:{ATOM}|(?i:(?:{'|'.join(DATA)})s?\b)"
    r"|(?i:(?:dollar|euro|pound|franc|mark|yen|yuan|rupee|peso)s?\b))"
    r"(?![.-]?[A-Za-z]|(?<=\b[A-Z])\.)"  # not "2000 B.C.", "2004 K-pop", "1999 W. Bush"
)

# A number among counts, not years (version 11): in a diffstat ("file | 1900 +++--", "1200
# insertions(+)", "2 files changed"), before a noun that counts lines, files or records
# ("2048 lines", "1500 entries": "in 2001 files" stays a year after a word of time), and in a
# sum or a comparison ("1999 + 1", "2 * 1999", "n > 2048", ">= 2005", "= 1900"; not
# "year = 1999", nor "<2005>" in a copyright line, nor "> 1999" opening a quoted line).
_DIFFSTAT_BAR = re.compile(r"^[ \t]+(?:[-+]{2,}|[-+](?:\s*$|\s+[^\s\d]))")  # not "| 1999 - 2003"
_BINARY_DIFF = re.compile(r"\bBin\s+\d+\s*->\s*$")  # "Bin 0 -> 1556" (the size after)
_BYTES_AFTER = re.compile(r"^\s*->\s*\d+\s+bytes\b")  # "1532 -> 1532 bytes" ("Bin" above)
_COUNT_NOUN_AFTER = re.compile(
    r"^[\s\u00a0]+(?:insertions?\(\+\)|deletions?\(-\)|files?[\s\u00a0]+changed|lines|files"
    r"|characters|chars|entries|records|rows|columns)\b",
    re.I,
)
_TIME_WORD_BEFORE = re.compile(
    r"\b(?:in|since|until|till|by|after|before|during|from)[\s\u00a0]+$", re.I
)
_SUM_BEFORE = re.compile(
    r"(?:\d[\s\u00a0]*[+*×÷]|\w[\s\u00a0]+[<>]=?[\s\u00a0]|[<>!=]?=)[\s\u00a0]*$"
)  # (spaced: not "<a@b.org> 1999", nor "*1999*", markdown's emphasis)
_DATE_IS = re.compile(r"\b(?:year|date)s?[\s\u00a0]*=[\s\u00a0]*$", re.I)  # "year = 1999"
_SUM_AFTER = re.compile(r"^[\s\u00a0]*(?:[+*×÷=]|[<>]=?)[\s\u00a0]*\d")


def _counted(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` is a count in a diffstat, a list or a sum."""
    head, after = text[max(0, start - 24) : start], text[end : end + 24]
    if head.rstrip(" \t").endswith("|") and _DIFFSTAT_BAR.match(after):
        return True  # "file | 1900 +++--"
    if _BINARY_DIFF.search(head) or _BYTES_AFTER.match(after):
        return True  # "Bin 1678 -> 1846 bytes", across a line break
    if _COUNT_NOUN_AFTER.match(after) and not _TIME_WORD_BEFORE.search(head):
        return True  # "1200 insertions(+)", "2048 lines"
    if _SUM_BEFORE.search(head):
        return not _DATE_IS.search(head)  # "n > 2048", "= 1900"; not "year = 1999"
    return _SUM_AFTER.match(after) is not None  # "1024 * 2"


def year_context(text: str, start: int, end: int) -> bool:
    """A four-digit number from 1500 to 2099 is a year unless it reads as an amount, a
    count, a version, part of another number ("$1999", "2019.5", "1999/2000") or a number
    an identifier names ("RFC 2047", "CVE-2024-2004")."""
    before, after = text[max(0, start - 8) : start], text[end : end + 24]
    head = text[max(0, start - 24) : start]
    if _ID_LABEL.search(head) or _ID_PREFIX.search(head):
        return False  # "RFC 2047", "CVE-2024-2004", "line 1587"
    if _counted(text, start, end):
        return False  # "| 1900 +++--", "1200 insertions(+)"
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


def after_anchor(value: str, anchor: str | None, low: str, start: int) -> str | None:
    """ "That year", "the following day": from the last date written before, else none."""
    return None if anchor is None else value + anchor


def on_anchor_day(value: str, anchor: str | None, low: str, start: int) -> str | None:
    """ "At 10:35 a.m.": on the day last named, if one was."""
    return value if anchor is None else f"REL:ANAT:{value[6:]}:{anchor}"


def in_quarterly(value: str, anchor: str | None, low: str, start: int) -> str | None:
    """ "A year ago" in a quarterly report ("quarter" in the 300 characters before): that
    quarter a year back."""
    if value == "REL:Y-1" and "quarter" in low[max(0, start - 300) : start]:
        return "REL:Q-5"
    return value
