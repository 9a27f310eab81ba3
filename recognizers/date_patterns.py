"""The date recognizer's patterns, one record each: how an expression is written, where it
can start, what a unit must hold for it, and what its match is worth.

A new kind of expression is one ``DatePattern`` in ``PATTERNS`` (its place in the list
decides which of two patterns that match at one place wins: the first) and, where no
existing one fits, its value function in ``date_values.py``. The scan (``dates.py``) is
built from these records alone: its one combined expression, the places it is tried
(``triggers``) and the prefilter that skips a unit (``keys``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kbx.recognizers import date_values as v
from kbx.recognizers.date_words import (
    AT_CLOCK,
    AT_COUNT,
    AT_DECADE,
    AT_SLASHED,
    AT_YEAR,
    CLOCK,
    CLOCK_KEY,
    COUNTED_WORDS,
    DAY,
    DECADE_KEY,
    DECADE_WORDS,
    DECADES,
    EVERY,
    HOUR,
    MONTH,
    MONTH_NAMES,
    MONTHS,
    NO_YEAR,
    NUM,
    ORD,
    SEASONS,
    SLASHED_KEY,
    SPAN_UNIT,
    SPOKEN_YEAR,
    UNIT,
    UNIT_WORDS,
    WEEKDAY,
    WEEKDAYS,
    YEAR,
    YEAR_KEY,
)


@dataclass(frozen=True)
class DatePattern:
    """One kind of date, time, duration or set expression."""

    name: str  # the mention's pattern, as ``candidates`` and the benchmark name it
    expression: str  # a regular expression on lower-cased text
    normalize: Callable[[str, list[str], str], v.Value]  # (low, words, text) → type, value
    # Where an expression can start (the scan tries the big pattern only there): a word, or
    # a regular expression LEAD(?=FOLLOW) (LEAD consumed, FOLLOW looked ahead at; the
    # followers of one LEAD are joined; a bare (?=FOLLOW) is a number's start, AT_*).
    triggers: tuple[str, ...]
    # What every expression holds, one at least: whole words, or YEAR_KEY, DECADE_KEY,
    # CLOCK_KEY, SLASHED_KEY. A unit with no pattern's key is not scanned at all.
    keys: tuple[str, ...]
    confidence: float = 0.9
    keep: Callable[[str, int, int], bool] | None = None  # (text, start, end): it reads as one
    # (value, the last date or time before it, lower-cased text, start) → its value, or None
    refine: Callable[[str, str | None, str, int], str | None] | None = None


_MONTH_KEYS = tuple(MONTHS)
_WEEKDAY_KEYS = (*WEEKDAYS, *(f"{day}s" for day in WEEKDAYS))
_A_UNIT = (
    r"an?\s+(?=(?:few\s+|couple\s+of\s+|additional\s+|extra\s+)?"
    r"(?:year|month|week|day|decade|hour|quarter))"
)  # "a year ago", "a couple of days", "an extra week"
_SOME = r"some\s+(?=\w+s\b)"  # "some years ago"


# --- the patterns, first match wins -----------------------------------------------------------

PATTERNS: tuple[DatePattern, ...] = (
    DatePattern(
        "iso",
        rf"\b{YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:t\d\d:\d\d(?::\d\d)?)?\b",
        v.iso,
        triggers=(AT_YEAR,),
        keys=(YEAR_KEY,),
    ),
    DatePattern(
        "mdy_slash",
        r"\b(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)?\d\d\b",
        v.mdy_slash,
        triggers=(AT_SLASHED,),
        keys=(SLASHED_KEY,),
    ),
    DatePattern(
        "dmy",
        rf"\b{DAY}(?:\s+of)?\s+{MONTH},?\s+{YEAR}\b",
        v.day_month_year,
        triggers=(AT_COUNT,),
        keys=_MONTH_KEYS,
    ),
    DatePattern(
        "mdy",
        rf"\b{MONTH}\s+{DAY},?\s+{YEAR}\b",
        v.day_month_year,
        triggers=_MONTH_KEYS,
        keys=_MONTH_KEYS,
    ),
    DatePattern(
        "weekday_md",
        rf"\b{WEEKDAY},?\s+{MONTH}\s+{DAY}\b",
        v.month_day,
        triggers=tuple(WEEKDAYS),
        keys=_MONTH_KEYS,
    ),
    DatePattern(
        "md", rf"\b{MONTH}\s+{DAY}\b{NO_YEAR}", v.month_day, triggers=_MONTH_KEYS, keys=_MONTH_KEYS
    ),
    DatePattern(
        "dm",
        rf"\b{DAY}\s+(?:of\s+)?{MONTH}{NO_YEAR}",
        v.month_day,
        triggers=(AT_COUNT,),
        keys=_MONTH_KEYS,
    ),
    DatePattern(
        "my",
        rf"\b{MONTH},?\s+(?:of\s+)?(?:{YEAR}\b|{SPOKEN_YEAR})",
        v.month_year,
        triggers=_MONTH_KEYS,
        keys=_MONTH_KEYS,
    ),
    DatePattern(
        "month_rel_year",
        rf"\b{MONTH},?\s+(?:of\s+)?(?:this|last|next)\s+year\b",
        v.month_rel_year,
        triggers=_MONTH_KEYS,
        keys=_MONTH_KEYS,
    ),
    DatePattern(
        "quarter_year",
        rf"\b(?:(?:the\s+)?{ORD}[\s-]+quarter(?:\s+of)?,?\s+(?:fiscal\s+)?{YEAR}"
        rf"|q[1-4]\s+{YEAR}|{YEAR}[\s-]q[1-4])\b",
        v.quarter_year,
        triggers=(
            "first",
            "second",
            "third",
            "fourth",
            r"the\s+(?=first|second|third|fourth|\d)",
            r"q[1-4]\b",
            AT_COUNT,
            AT_YEAR,
        ),
        keys=(YEAR_KEY,),
    ),
    DatePattern(
        "quarter_rel",
        rf"\b(?:(?:the\s+)?(?:{ORD}|this|last|next|latest|previous|current|"
        rf"final|year-earlier|year-ago)[\s-]*|the\s+)quarter\b(?![\s-]+(?:century|mile))",
        v.quarter_rel,
        triggers=(
            *("first", "second", "third", "fourth", "this", "last", "next", "latest"),
            *("previous", "current", "final", "year", "quarter", AT_COUNT),
            r"the\s+(?=first|second|third|fourth|\d|last|next|latest|previous|current|final"
            r"|year|quarter)",
        ),
        keys=("quarter",),
    ),
    DatePattern(
        "half_year",
        rf"\b(?:the\s+)?(?:first|second)[\s-]+half\s+of\s+(?:fiscal\s+)?"
        rf"(?:{YEAR}|(?:the|this|last|next)\s+year)\b",
        v.half_year,
        triggers=("first", "second", r"the\s+(?=first|second)"),
        keys=(YEAR_KEY, "year"),
    ),
    DatePattern(
        "part_of_unit",
        r"\b(?:the\s+)?(?:end|beginning|start|middle|rest|remainder)\s+of\s+"
        r"(?:the|this|next|last)\s+(?:year|month|week|decade|quarter)\b",
        v.part_of_unit,
        triggers=(r"the\s+(?=(?:end|beginning|start|middle|rest|remainder)\s+of\s)",),
        keys=("year", "month", "week", "decade", "quarter"),
    ),
    DatePattern(
        "season_year",
        rf"\b(?:spring|summer|fall|autumn|winter)\s+(?:of\s+)?{YEAR}\b",
        v.season_year,
        triggers=tuple(SEASONS),
        keys=(YEAR_KEY,),
    ),
    DatePattern(  # not "the fall" (of prices, of a city)
        "season_rel",
        r"\b(?:last|this|next)\s+(?:spring|summer|fall|autumn|winter)\b"
        r"|\bthe\s+(?:spring|summer|winter)\b(?!\s+of\b)",
        v.season_rel,
        triggers=("last", "this", "next", r"the\s+(?=spring|summer|winter)"),
        keys=tuple(SEASONS),
    ),
    # spoken, in broadcast transcripts: "nineteen ninety-six", "the year two thousand"
    DatePattern(
        "spoken_year",
        SPOKEN_YEAR,
        v.spoken_year,
        triggers=("nineteen", "eighteen", "two", r"the\s+(?=year)"),
        keys=("nineteen", "eighteen", "thousand"),
    ),
    DatePattern(
        "decade",
        r"\b(?:the\s+)?(?:1[5-9]|20)[0-9]0'?s\b|(?<=['’])[0-9]0s\b",  # "'90s": "90s"
        v.decade,
        triggers=(AT_YEAR, AT_DECADE, r"the\s+(?=\d)"),
        keys=(YEAR_KEY, DECADE_KEY),
    ),
    DatePattern(  # "the nineties"; not "in his forties"
        "decade_word",
        rf"\bthe\s+(?:(?:early|late|mid)[\s-]+)?(?:nineteen[\s-]+)?{DECADES}\b",
        v.decade_word,
        triggers=(rf"the\s+(?=(?:(?:early|late|mid)[\s-]+)?(?:nineteen[\s-]+)?{DECADES}\b)",),
        keys=tuple(DECADE_WORDS),
    ),
    DatePattern(
        "fiscal",
        rf"\bfiscal(?:\s+year)?\s+{YEAR}\b",
        v.four_digits,
        triggers=("fiscal",),
        keys=(YEAR_KEY,),
    ),
    # "2000 years", "1800 seconds" are durations (below), not years ("the 1988 second quarter" is)
    DatePattern(
        "year",
        rf"\b{YEAR}\b(?![\s-]+(?:{SPAN_UNIT}s?|seconds)\b)",
        v.year,
        triggers=(AT_YEAR,),
        keys=(YEAR_KEY,),
        confidence=0.6,
        keep=v.year_context,
    ),
    DatePattern(
        "rel_day",
        r"\b(?:today|yesterday|tomorrow|tonight)\b",
        v.rel_day,
        triggers=("today", "yesterday", "tomorrow", "tonight"),
        keys=("today", "yesterday", "tomorrow", "tonight"),
    ),
    DatePattern(
        "part_of_day",
        r"\b(?:this|yesterday|tomorrow)\s+(?:morning|afternoon|evening)\b"
        r"|\blast\s+night\b",
        v.part_of_day,
        triggers=("this", "yesterday", "tomorrow", "last"),
        keys=("morning", "afternoon", "evening", "night"),
    ),
    DatePattern(
        "rel_unit",
        r"\b(?:this|last|next|past|previous|coming|current|the\s+past|the\s+last|"
        r"the\s+next|the\s+coming)\s+(?:week|month|year|decade|weekend)\b",
        v.rel_unit,
        triggers=(
            *("this", "last", "next", "past", "previous", "coming", "current"),
            r"the\s+(?=past|last|next|coming)",
        ),
        keys=("week", "month", "year", "decade", "weekend"),
    ),
    # "two months after the vote" is a duration ("two months"), anchored on the event
    DatePattern(
        "ago",
        rf"\b{NUM}\s+{UNIT}\s+(?:ago|earlier|from\s+now)\b"
        r"|\b(?:years|months|weeks|days|decades|hours)\s+ago\b",
        v.ago,
        triggers=(
            *COUNTED_WORDS,
            *("years", "months", "weeks", "days", "decades", "hours"),
            AT_COUNT,
            _A_UNIT,
            _SOME,
        ),
        keys=UNIT_WORDS,
        refine=v.in_quarterly,
    ),
    DatePattern(
        "plural_span",
        r"\b(?:the\s+)?(?:coming|next|past|last|previous)\s+(?:days|weeks|months|years|decades)\b"
        r"|\bthe\s+(?:days|weeks|months|years)\s+ahead\b"
        r"|\b(?:days|weeks|months|years|decades)-long\b",
        v.some_units,
        triggers=(
            *("coming", "next", "past", "last", "previous"),
            *("days", "weeks", "months", "years", "decades"),
            r"the\s+(?=coming|next|past|last|previous|days|weeks|months|years)",
        ),
        keys=("days", "weeks", "months", "years", "decades"),
    ),
    DatePattern(
        "weekday_part",
        rf"\b{WEEKDAY}s?\s+(?:morning|afternoon|evening|night)s?\b",
        v.weekday_part,
        triggers=_WEEKDAY_KEYS,
        keys=_WEEKDAY_KEYS,
    ),
    # "that year", "the following month", "the next morning": from the last date written
    DatePattern(
        "anaphor",
        r"\b(?:(?:earlier|later)\s+)?(?:that(?:\s+same)?|the\s+same)\s+(?:day|week|month|year)\b"
        r"|\bthe\s+(?:following\s+(?:day|morning|week|month|year)|next\s+(?:day|morning))\b",
        v.anaphor,
        triggers=(
            r"(?:earlier\s+|later\s+)?that\s+(?=(?:same\s+)?(?:day|week|month|year)\b)",
            r"the\s+(?=same\s|following\s|next)",
        ),
        keys=("day", "week", "month", "year", "morning"),
        refine=v.after_anchor,
    ),
    DatePattern(
        "weekday",
        rf"\b(?:(?:last|next|this)\s+)?{WEEKDAY}\b",
        v.weekday,
        triggers=("last", "next", "this", *WEEKDAYS),
        keys=tuple(WEEKDAYS),
        confidence=0.6,
    ),
    DatePattern(
        "month_alone",
        r"\b(?:(?:last|next|this|early|late|mid)[\s-]+)?"
        r"(?:january|february|march|april|may|june|july|august|september|october|"
        r"november|december)\b",
        v.month_alone,
        triggers=("last", "next", "this", "early", "late", "mid", *MONTH_NAMES),
        keys=MONTH_NAMES,
        confidence=0.6,
        keep=v.month_name,
    ),
    DatePattern(
        "the_weekend",
        r"\bthe\s+weekend\b",
        v.the_weekend,
        triggers=(r"the\s+(?=weekend)",),
        keys=("weekend",),
    ),
    # in reports: "the year ended March 31" (a year's span), "the year-earlier period"
    DatePattern(
        "year_ended",
        r"\bthe\s+(?:fiscal\s+)?year(?=\s+end(?:ed|ing)\b)",
        v.year_ended,
        triggers=(r"the\s+(?=year|fiscal\s+year)",),
        keys=("year",),
    ),
    DatePattern(
        "year_earlier",
        r"\b(?:the\s+)?year-(?:earlier|ago)(?:\s+period)?(?![\w-])",
        v.year_earlier,
        triggers=("year", r"the\s+(?=year)"),
        keys=("year",),
        refine=v.in_quarterly,
    ),
    DatePattern(
        "the_year",
        r"\bthe\s+(?:full\s+|fiscal\s+|calendar\s+)?year\b"
        r"(?![\s-]+(?:earlier|ago|before|end|ended|ending|\d|two|nineteen|twenty))(?!-)",
        v.the_year,
        triggers=(r"the\s+(?=year|full\s+year|fiscal\s+year|calendar\s+year)",),
        keys=("year",),
    ),
    DatePattern(
        "set",
        rf"\b(?:every|each|per)\s+(?:(?:{NUM}\s+|other\s+)?{UNIT}|{WEEKDAY}|{MONTH})\b"
        rf"|\b(?:{'|'.join(EVERY)})\b"
        rf"|\b{WEEKDAY}s\b|\bweekends\b"
        rf"|\b(?:once|twice|{NUM}\s+times)\s+(?:an?|per|each|every)\s+{UNIT}\b",
        v.recurring,
        triggers=(
            *("every", "each", "per", *EVERY, "weekends", "once", "twice"),
            *(f"{day}s" for day in WEEKDAYS),
            *COUNTED_WORDS,
            AT_COUNT,
        ),
        # ("quarterly" has a value above, though the expression has no such word)
        keys=(*UNIT_WORDS, *_WEEKDAY_KEYS, *_MONTH_KEYS, *EVERY, "quarterly", "weekends"),
    ),
    DatePattern(
        "for_units",  # "for years", "in decades", "within hours"
        r"(?:(?<=\bfor\s)|(?<=\bin\s)|(?<=\bover\s)|(?<=\bwithin\s)|(?<=\bafter\s))"
        r"(?:years|months|weeks|days|decades|centuries|hours)\b",
        v.some_units,
        triggers=("years", "months", "weeks", "days", "decades", "centuries", "hours"),
        keys=("years", "months", "weeks", "days", "decades", "centuries", "hours"),
    ),
    DatePattern(
        "holiday",
        r"\b(?:thanksgiving(?:\s+day)?|christmas(?:\s+day|\s+eve)?|"
        r"new\s+year'?s(?:\s+day|\s+eve))\b",
        v.holiday,
        triggers=("thanksgiving", "christmas", "new"),
        keys=("thanksgiving", "christmas", "year", "years"),
    ),
    DatePattern(
        "age",
        rf"\b{NUM}[\s-]+years?[\s-]+old\b",
        v.age,
        triggers=(*COUNTED_WORDS, AT_COUNT, _A_UNIT, _SOME),
        keys=("year", "years"),
    ),
    DatePattern(
        "duration",
        rf"\b(?:(?:the\s+)?(?:past|last|next|first|coming)\s+)?"
        rf"(?:{NUM}(?:\s+1/2|\s+and\s+a\s+half)?|(?:an?\s+)?couple\s+of)"
        rf"(?:\s+(?:more|additional|further|extra|straight|consecutive|successive))?"
        rf"[\s-]+(?:{UNIT}|(?<!\ba\s)(?<!\ban\s)seconds?)(?:[\s-]+long)?\b"
        r"(?!-(?:earlier|ago))"  # not "a second", "a year-earlier loss"
        r"|\b(?:day|week|month|year|decade)-long\b"
        r"|\brecent\s+(?:years|months|weeks|days|decades|quarters)\b",
        v.duration,
        triggers=(
            *("past", "last", "next", "first", "coming", "year", "recent", *COUNTED_WORDS),
            r"the\s+(?=past|last|next|first|coming)",
            AT_COUNT,
            _A_UNIT,
            _SOME,
            r"(?:day|week|month|decade)s?(?=-long\b)",
        ),
        keys=(*UNIT_WORDS, "recent"),
    ),
    DatePattern(
        "century",
        r"\b(?:the\s+)?(?:1\d|2[01]|[1-9])(?:st|nd|rd|th)[\s-]+century\b"
        r"|\b(?:the\s+)?(?:nineteenth|twentieth|twenty-first)[\s-]+century\b",
        v.century,
        triggers=(
            *("nineteenth", "twentieth", "twenty", AT_COUNT),
            r"the\s+(?=\d|nineteenth|twentieth|twenty)",
        ),
        keys=("century",),
    ),
    DatePattern(
        "clock_day",
        rf"\b(?:{CLOCK}|noon|midnight)(?:\s+(?:[ecmp][sd]t|gmt|local\s+time))?,?\s+(?:on\s+)?"
        rf"(?:{WEEKDAY}|today|yesterday|tomorrow|{MONTH}\s+{DAY}\b(?!\s*,?\s*\d))",
        v.clock_day,
        triggers=("noon", "midnight", AT_CLOCK, AT_COUNT),
        keys=(CLOCK_KEY, "noon", "midnight"),
    ),
    DatePattern(  # "eight o'clock", "4 in the morning"
        "clock_word",
        rf"\b{HOUR}(?::[0-5]\d)?\s+(?:o'?clock(?:\s+in\s+the\s+(?:morning|afternoon|evening)"
        r"|\s+at\s+night)?|in\s+the\s+(?:morning|afternoon|evening)|at\s+night)\b",
        v.clock_word,
        triggers=(
            *("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
            *("eleven", "twelve", AT_COUNT),
        ),
        keys=("clock", "morning", "afternoon", "evening", "night"),
        refine=v.on_anchor_day,
    ),
    DatePattern(
        "clock",
        rf"\b{CLOCK}|\b(?:noon|midnight)\b",
        v.clock,
        triggers=("noon", "midnight", AT_CLOCK, AT_COUNT),
        keys=(CLOCK_KEY, "noon", "midnight"),
        refine=v.on_anchor_day,
    ),
    DatePattern(
        "ref",
        r"\b(?:now|currently|the\s+past|the\s+future|recently|nowadays|at\s+present|"
        r"these\s+days|formerly|(?:the\s+)?(?:near|foreseeable|immediate)\s+future"
        r"|the\s+(?:near|short)\s+term"
        r"|current(?!\s+(?:year|quarter|month|week|fiscal|period|decade|season)))\b",
        v.ref,
        triggers=(
            *("now", "currently", "recently", "nowadays", "these", "formerly", "current"),
            *("near", "foreseeable", "immediate", r"at\s+(?=present)"),
            r"the\s+(?=past|future|(?:near|foreseeable|immediate)\s+future|(?:near|short)\s+term)",
        ),
        keys=(
            *("now", "currently", "past", "future", "recently", "nowadays", "present", "days"),
            *("formerly", "term", "current"),
        ),
        confidence=0.6,
    ),
)
