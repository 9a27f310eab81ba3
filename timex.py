"""TIMEX3 values: resolving relative codes against a document's date, and the calendar
days a value covers. A leaf that both the date recognizer and the entity layer import."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta


def _iso_week(d: date) -> str:
    y, w, _ = d.isocalendar()
    return f"{y}-W{w:02d}"


def _shift_month(d: date, months: int) -> tuple[int, int]:
    m = d.month - 1 + months
    return d.year + m // 12, m % 12 + 1


LEAN_PAST = 90  # days: "Oct. 23" written on May 6 is the October before (both halves gain)
SOON = 2  # months: "in January" written in November is the coming one (both halves agree)


def resolve(value: str | None, doc_date: date | None) -> str | None:
    """A TIMEX3 value for a mention's value, given its document's date.

    Absolute values come back unchanged; relative ones need ``doc_date`` and stay
    unresolved (None) without it. A relative value whose day would leave the calendar
    (years 1 to 9999: "359,000 weeks ago" in a table of trading volumes) has none, and so
    has a code this kbx cannot read: resolving never raises.
    """
    if value is None or not value.startswith("REL:"):
        return value
    if doc_date is None:
        return None
    try:
        return _resolve(value[4:], doc_date)
    except (ArithmeticError, ValueError, IndexError, KeyError):  # OverflowError: off the calendar
        return None


def _year(n: int) -> str:
    """A year on the calendar, as TIMEX3 writes it (four digits); ValueError off it."""
    if not 1 <= n <= 9999:
        raise ValueError(f"year {n} is not on the calendar")
    return f"{n:04d}"


def _month_value(year: int, month: int) -> str:
    return f"{_year(year)}-{month:02d}"


def _resolve(code: str, d: date) -> str | None:
    if code.startswith("ANAT:"):  # a clock time on the day last named, else the document's
        _, hour, minute, base = code.split(":", 3)
        day = _from(resolve(base if base[:1].isdigit() else "REL:" + base, d), "D", 0)
        return f"{day or d.isoformat()}T{hour}:{minute}"
    if code.startswith("ANA:"):  # "that year" after "in 1995": the last date, then a shift
        _, unit, shift, base = code.split(":", 3)
        return _from(resolve(base if base[:1].isdigit() else "REL:" + base, d), unit, int(shift))
    if "@" in code:  # a day and a time on it: "REL:WD:2:<@T15:00", "REL:D-1@TMO"
        code, at = code.split("@", 1)
        day = resolve("REL:" + code, d)
        return f"{day}{at}" if day and len(day) == 10 else None
    if re.search(r"[+-]\d+\.\d", code):  # "4.2 years later": no calendar value to name
        return None
    if code.startswith("DE") and code[2] in "+-":  # "last decade": 198
        decade = d.year // 10 + int(code[2:])
        return _year(decade * 10)[:3]
    if code.startswith("HY"):  # "the first half of next year": 2022-H1
        shift, half = code[2:].split(":")
        return f"{_year(d.year + int(shift))}-H{half}"
    if code[0] == "D" and code[1] in "+-":
        return (d + timedelta(days=int(code[1:]))).isoformat()
    if code[0] == "W" and code[1] in "+-":
        return _iso_week(d + timedelta(weeks=int(code[1:])))
    if code.startswith("WE:"):  # "the weekend": the last one (<), or the next (>)
        saturday = resolve("REL:WD:5:" + code[3:], d)
        return _iso_week(date.fromisoformat(saturday)) + "-WE" if saturday else None
    if code.startswith("WE"):
        return _iso_week(d + timedelta(weeks=int(code[2:]))) + "-WE"
    if code[0] == "M" and code[1] in "+-":
        return _month_value(*_shift_month(d, int(code[1:])))
    if code[0] == "Y" and code[1] in "+-":
        return _year(d.year + int(code[1:]))
    if code[0] == "Q" and code[1] in "+-":
        q = (d.month - 1) // 3 + int(code[1:])
        return f"{_year(d.year + q // 4)}-Q{q % 4 + 1}"
    if code.startswith("QN:"):
        return f"{d.year}-Q{code[3:]}"
    if code[0] == "H" and code[1] in "+-":
        return (datetime(d.year, d.month, d.day) + timedelta(hours=int(code[1:]))).strftime(
            "%Y-%m-%dT%H"
        )
    if code.startswith("MD:"):  # the nearest such day to the document's date
        month, day = int(code[3:5]), int(code[6:8])
        return _nearest(d, [(y, month, day) for y in (d.year - 1, d.year, d.year + 1)])
    if code.startswith("MON:"):  # "<" the latest such month, ">" the next, "~" the nearest
        # ("~": values of version 3 and before, until a reprocess)
        month, direction = int(code[4:6]), code[7:]
        if direction == "~":
            year = min(
                (d.year - 1, d.year, d.year + 1),
                key=lambda y: abs((y - d.year) * 12 + month - d.month),
            )
        elif direction in "<>":  # "<": the latest, unless it comes in the next two months
            ahead = (month - d.month) % 12  # months from the document's to the next such
            year = _shift_month(d, ahead if direction == ">" or ahead <= SOON else ahead - 12)[0]
        else:
            year = (
                d.year - 1
                if direction == "-" and month >= d.month
                else (d.year + 1 if direction == "+" and month <= d.month else d.year)
            )
        return _month_value(year, month)
    if code == "THANKSGIVING":  # the nearest fourth Thursday of November
        years = (d.year - 1, d.year, d.year + 1)
        return _nearest(d, [(y, 11, 22 + (3 - date(y, 11, 1).weekday()) % 7) for y in years])
    if code.startswith("MY:"):  # "June last year"
        return f"{_year(d.year + int(code[6:]))}-{code[3:5]}"
    if code.startswith("S:"):
        season, shift = code[2:4], int(code[5:])
        return f"{_year(d.year + shift)}-{season}"
    if code.startswith("WD:"):
        day, direction = int(code[3]), code[5:]
        delta = (day - d.weekday()) % 7
        if direction == "+":
            return (d + timedelta(days=delta or 7)).isoformat()
        back = (d.weekday() - day) % 7
        if direction == ">":  # the next such day, maybe today
            return (d + timedelta(days=delta)).isoformat()
        if direction == "-":
            return (d - timedelta(days=back or 7)).isoformat()
        return (d - timedelta(days=back)).isoformat()  # the latest such day, maybe today
    if code.startswith("TOD:"):
        parts = code.split(":")
        shift = int(parts[2]) if len(parts) > 2 else 0
        return f"{(d + timedelta(days=shift)).isoformat()}T{parts[1]}"
    if code.startswith("T:"):
        return f"{d.isoformat()}T{code[2:]}"
    return None


def _from(value: str | None, unit: str, shift: int) -> str | None:
    """The year, month, ISO week or day of a calendar ``value``, moved by ``shift`` of them;
    None when the value is coarser than the unit."""
    if not value or not re.match(r"\d{4}", value):
        return None
    if unit == "Y":
        return _year(int(value[:4]) + shift)
    if unit == "M" and re.match(r"\d{4}-\d\d\b", value):
        return _month_value(*_shift_month(date(int(value[:4]), int(value[5:7]), 1), shift))
    if not re.match(r"\d{4}-\d\d-\d\d", value):
        return None
    day = date.fromisoformat(value[:10])
    if unit == "W":
        return _iso_week(day + timedelta(weeks=shift))
    return (day + timedelta(days=shift)).isoformat() if unit == "D" else None


def _nearest(d: date, days: list[tuple[int, int, int]]) -> str | None:
    """Of candidate (year, month, day)s, the nearest to ``d``, a later one counted
    ``LEAN_PAST`` days farther (news reports what happened); impossible ones (Feb 29) are
    skipped."""
    options = []
    for y, m, day in days:
        try:
            options.append(date(y, m, day))
        except ValueError:
            continue

    def far(o: date) -> int:
        return abs((o - d).days) + (LEAN_PAST if o > d else 0)

    return min(options, key=far).isoformat() if options else None


_QUARTER = {"Q1": 1, "Q2": 4, "Q3": 7, "Q4": 10, "H1": 1, "H2": 7}


_SEASON = {"SP": 3, "SU": 6, "FA": 9, "WI": 12}


def _month_after(year: int, month: int, months: int) -> date:
    n = year * 12 + month - 1 + months
    return date(n // 12, n % 12 + 1, 1)


def interval(value: str | None) -> tuple[date, date] | None:
    """The days a TIMEX3 calendar value covers, as ``[lo, hi)``: ``2021`` is the year,
    ``2021-03`` the month, ``2021-W05`` the ISO week, ``197`` the 1970s. Values that are
    not on the calendar (durations, ``PRESENT_REF``, unresolved relatives) give None."""
    if not value or not value[:1].isdigit():
        return None
    v = value.split("T", 1)[0]
    try:
        if re.fullmatch(r"\d{4}-\d\d-\d\d", v):
            lo = date.fromisoformat(v)
            return lo, lo + timedelta(days=1)
        if re.fullmatch(r"\d{4}-\d\d", v):
            y, m = int(v[:4]), int(v[5:])
            return date(y, m, 1), _month_after(y, m, 1)
        if re.fullmatch(r"\d{4}", v):
            return date(int(v), 1, 1), date(int(v) + 1, 1, 1)
        if m := re.fullmatch(r"(\d{4})-W(\d\d)", v):
            lo = date.fromisocalendar(int(m[1]), int(m[2]), 1)
            return lo, lo + timedelta(days=7)
        if m := re.fullmatch(r"(\d{4})-([QH][1-4])", v):
            y, start = int(m[1]), _QUARTER.get(m[2])
            span = 3 if m[2][0] == "Q" else 6
            return (date(y, start, 1), _month_after(y, start, span)) if start else None
        if m := re.fullmatch(r"(\d{4})-(SP|SU|FA|WI)", v):
            y, start = int(m[1]), _SEASON[m[2]]
            return date(y, start, 1), _month_after(y, start, 3)
        if re.fullmatch(r"\d{3}", v):
            return date(int(v) * 10, 1, 1), date(int(v) * 10 + 10, 1, 1)
        if re.fullmatch(r"\d{2}", v):
            return date(max(int(v) * 100, 1), 1, 1), date(int(v) * 100 + 100, 1, 1)
    except (ValueError, OverflowError):  # not a day, or the calendar's last (9999-12-31)
        return None
    return None
