"""Quantities with units, in SI base units ("5 mg", "3.5 GB", "37 °C", "5–10 mg"), and money
("$1,200") as a currency code with an amount.

What is read: a number (``5``, ``1,200``, ``.5``, ``3.2 × 10^5``, ``6 × 106`` where a
superscript was lost, ``1e-3``, ``two``) and a unit from units.py, with a space, a hyphen or
nothing between (``5 mg``, ``5mg``, ``a 2-hour run``), simple or compound (``km/h``,
``mg/kg``, ``m s−1``, ``µmol/L``, ``mm per year``); ranges (``5–10 mg``, ``5 to 10 mg``,
``between 3 and 4 GB``, ``1300 K to 3500 K``) and tolerances (``12 ± 0.5 mm``) as one
mention; approximations (``~5 kg``, ``about 3 h``: the word in the span, the number as the
value); a unit carried back across a list (``5, 10 and 20 mg``: a mention for each number).
A number alone is not a quantity.

The value is the quantity in SI base units as pint gives them, to six significant digits,
with pint's short unit: ``5 mg`` is ``5e-06 kg``, ``37 °C`` is ``310.15 K``, ``10 km/h`` is
``2.77778 m / s``, SI's named units by their symbol (``3 kV`` is ``3000 V``); data sizes in
bytes (``3.5e+09 B``), fractions in percent (``31 %``; ``5 ppm`` is ``0.0005 %``). A range
or a tolerance is an interval, low and high joined by ``..``: ``5–10 mg`` is
``5e-06..1e-05 kg``, ``12 ± 0.5 mm`` is ``0.0115..0.0125 m``. Money: ``USD 1200``.

Refused: a number inside a word, an identifier or a time (``COVID-19 s``, ``12:30 h``), a
figure panel (``Fig. 3B``), a decade (``the 1990s``, ``the 80s``), ``K`` without a space
(``10K`` is ten thousand), "one day" as in "one day I will", a number glued to letters
and a dash (a version: ``2022g-3``, ``2.12l-1``; ``5 m-2`` with its space is read). Code
units are not read (hex dumps, escapes, ``1L``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.units import SINGLE, UNIT, WORDS, pint_expr, registry, si, trie

CURRENCY_SIGNS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY")
SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
}
_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
NUMBER_WORDS = {w: i for i, w in enumerate(_ONES)} | {
    "eleven": 11,
    "twelve": 12,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "hundred": 100,
    "thousand": 1000,
}

_MONEY_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s*(?:thousand|million|billion|trillion|bn|mn|[kKmMbB])\b)?"
_MONEY = re.compile(
    rf"(?:US\$|[$€£¥])\s?(?P<amount>{_MONEY_NUMBER}){_SCALE}"
    rf"|\b(?P<code>{'|'.join(CURRENCY_CODES)})\s?(?P<amount2>{_MONEY_NUMBER}){_SCALE}"
)

_MONEY_HINTS = (*CURRENCY_SIGNS, *CURRENCY_CODES)  # plain scans before the pattern
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:[.·]\d+)?|\.\d+"  # "2·8" is 2.8 in some journals
# times a power of ten: "× 10^5", "×10−8", "× 106" (a superscript lost in extraction), "e-3"
_TEN = r"(?:\s?[×x·⋅]\s?10(?:\^|\*\*)?(?:\(?[−-]?[1-9]\d?\)?|⁻?[¹²³⁴⁵⁶⁷⁸⁹⁰]+)|[eE][−+-]?\d{1,3})"
NUMBER = rf"[−-]?(?:{_NUM})(?:{_TEN})?"
_FREE = r"(?<![\w.,/^:×#−-])"  # not in a word, a number, a time, a power of ten, "#5"
_WORDS = trie([*NUMBER_WORDS, *map(str.capitalize, NUMBER_WORDS)])
_QUANTITY = (
    rf"{_FREE}(?<![A-Za-z][-‐])"
    rf"(?P<a>(?:±\s?)?{NUMBER}|{_WORDS}(?=[\s-]))"
    rf"(?:(?P<rsep>\s?[–—-]\s?|\s(?:to|and|or)\s)(?P<b>[~∼≈]?\s?{NUMBER})"
    rf"|\s?(?:±|\+/-)\s?(?P<tol>{NUMBER}))?"
    r"(?P<scale>\s(?:thousand|million|billion))?"
    r"(?P<sep>\s[ \u00a0]?|[-‐])?"  # one space or line break, or two spaces
    rf"(?P<unit>{UNIT})"
    r"(?![\w/])"
)


@cache
def _quantity() -> re.Pattern:
    """The full pattern, compiled on first use: 60 ms that a run which recognizes nothing
    (an unchanged folder's ``kbx index``) does not pay."""
    return re.compile(_QUANTITY)


_START = re.compile(rf"{_FREE}(?:[−-]?\.?\d|{_WORDS}[\s-])")
_APPROX = re.compile(
    r"(?:[~∼≈≃]|\b(?:about|around|approximately|approx\.|roughly|nearly|circa|ca\.)\s)\s?$",
    re.IGNORECASE,
)
_BETWEEN = re.compile(r"\b(?:between|from)\s$", re.IGNORECASE)
_FIGURE = re.compile(
    r"\b(?:Figs?\.?|Figures?|Tables?|panels?)\s?(?:\w+(?:,\s?|\s(?:and|or)\s|[–-]))*$",
    re.IGNORECASE,
)
_DURING = re.compile(r"\b(?:in|within|for|after|than|of|only|just|over|per)\s$", re.IGNORECASE)
_DECADE = re.compile(r"1[5-9]\d0|20\d0")
_DECADE_BEFORE = re.compile(r"\b(?:the|early|late|mid-?|his|her|their)\s?'?$", re.IGNORECASE)
_LIST = re.compile(rf"{_FREE}(?:{NUMBER})(?:\s?,\s?(?:{NUMBER}))*(?:\s?,)?\s(?:and|or)\s$")
_LIST_ITEM = re.compile(NUMBER)
_RANGE_GAP = re.compile(r"\s?(?:[–—-]|to)\s?[~∼≈]?\s?")
_SUPERSCRIPT = str.maketrans("⁻¹²³⁴⁵⁶⁷⁸⁹⁰−", "-1234567890-")
_GLUED_POWER = re.compile(r"[^\W\d_]+[−-]")  # letters and a dash right after the number


@dataclass(frozen=True)
class Found:
    """One quantity: its span, its value (``low == high`` unless a range or tolerance) in
    ``unit``, a pint expression."""

    start: int
    end: int
    low: float
    high: float
    unit: str


def number(text: str) -> float:
    """The value of a number as written: ``1,200``, ``−3.5``, ``3.2 × 10^5``, ``6×106``, ``two``."""
    try:
        return float(text)  # the common case: "5", "0.5", "1e-3"
    except ValueError:
        pass
    s = text.strip().lstrip("~∼≈ ").replace(",", "").translate(_SUPERSCRIPT)
    if s.lower() in NUMBER_WORDS:
        return float(NUMBER_WORDS[s.lower()])
    m = re.fullmatch(r"(.+?)\s?[×x·⋅]\s?10(?:\^|\*\*)?\(?(-?\d+)\)?", s)
    if m:
        try:
            return number(m.group(1)) * 10.0 ** int(m.group(2))
        except OverflowError:  # "1 × 10^400": past the floats, refused by finite()
            return math.inf
    return float(s.replace("·", "."))


@cache
def _dimension(expr: str):
    return registry().Quantity(1, expr).dimensionality


@cache
def _readable(expr: str) -> bool:
    """Whether pint can give this unit a value (a temperature times a length cannot)."""
    try:
        si(1.0, 1.0, expr)
    except Exception:  # pint's errors for offset units and the like
        return False
    return True


def _refused(text: str, m: re.Match) -> bool:
    """The candidates that look like quantities and are not (see the module docstring)."""
    unit, sep, start = m.group("unit"), m.group("sep"), m.start()
    if unit == "K" and not (sep and sep.isspace()):
        return True
    if not sep and _GLUED_POWER.match(unit):  # 2022g-3, 2.12l-1: a version, not g⁻³
        return True
    if unit in SINGLE and not sep and _FIGURE.search(text, max(0, start - 40), start):
        return True
    if unit == "s" and not sep and not m.group("b"):
        a = m.group("a")
        return bool(_DECADE.fullmatch(a)) or (
            a.endswith("0") and bool(_DECADE_BEFORE.search(text, max(0, start - 8), start))
        )
    if m.group("a").lower() == "one" and unit.lower() == "day":  # "one day I will"
        return not _DURING.search(text, max(0, start - 8), start)
    return m.group("a")[0].isalpha() and unit.lower() not in WORDS


def _starts(text: str) -> list[int]:
    """Where a quantity can start: a number (a "±" before it included) or a number word not
    inside a word. One scan finds them all, so the full pattern is tried only there."""
    starts = [s.start() for s in _START.finditer(text)]
    if "±" not in text:
        return starts
    return [i - (2 if text[max(0, i - 2) : i] == "± " else text[i - 1 : i] == "±") for i in starts]


def _matches(text: str) -> list[re.Match]:
    """The pattern's matches, left to right, none inside another."""
    out: list[re.Match] = []
    end, quantity = 0, _quantity()
    for i in _starts(text):
        if i >= end and (m := quantity.match(text, i)):
            out.append(m)
            end = m.end()
    return out


def _candidates(text: str) -> list[Found]:
    """What the pattern finds, read; refused look-alikes left out."""
    found = (_read(text, m) for m in _matches(text) if not _refused(text, m))
    return [q for q in found if q is not None]


def _read(text: str, m: re.Match) -> Found | None:
    """The quantity one match holds; of a list ("3 and 4 GB") its last item (the others are
    found as list items)."""
    unit, end = m.group("unit"), m.end()
    if " per " in unit and not _dimension(pint_expr(unit)):
        unit = unit[: unit.index(" per ")]  # "24 hours per day" is 24 hours
        end = m.start("unit") + len(unit)
    expr = pint_expr(unit)
    if not _readable(expr):
        return None
    scale = {" thousand": 1e3, " million": 1e6, " billion": 1e9}.get(m.group("scale"), 1)
    a_text, start = m.group("a"), m.start()
    a = number(a_text.lstrip("±")) * scale
    if a_text.startswith("±"):
        return Found(start, end, -a, a, expr)
    if m.group("tol"):
        t = number(m.group("tol")) * scale
        return Found(start, end, a - t, a + t, expr)
    if not m.group("b"):
        return Found(start, end, a, a, expr)
    b = number(m.group("b")) * scale
    joined = m.group("rsep").strip()
    if joined == "or" or (joined == "and" and not _BETWEEN.search(text, max(0, start - 9), start)):
        return Found(m.start("b"), end, b, b, expr)
    return Found(start, end, min(a, b), max(a, b), expr)


def _merged(text: str, found: list[Found]) -> list[Found]:
    """Two quantities of one dimension joined into a range ("1300 K to 3500 K") or a
    tolerance ("43.57% ± 4.35%")."""
    out: list[Found] = []
    for q in found:
        p = out[-1] if out else None
        if p is None or p.low != p.high:
            out.append(q)
            continue
        gap = text[p.end : q.start]
        if q.unit == p.unit and text[q.start] == "±" and not gap.strip():
            out[-1] = Found(p.start, q.end, p.low - q.high, p.low + q.high, p.unit)
        elif (
            q.low == q.high
            and (_RANGE_GAP.fullmatch(gap) or (not gap and text[q.start] in "-−"))
            and _dimension(p.unit) == _dimension(q.unit)
        ):  # "58%-66%": the dash read as a sign when nothing is between
            b = registry().Quantity(abs(q.low) if not gap else q.low, q.unit).to(p.unit).magnitude
            out[-1] = Found(p.start, q.end, min(p.low, b), max(p.low, b), p.unit)
        else:
            out.append(q)
    return out


def _widened(text: str, q: Found) -> Found:
    """The span taken back over an approximation ("about", "~") and "between"/"from"."""
    start = q.start
    if m := _APPROX.search(text, max(0, start - 16), start):
        start = m.start()
    ranged = q.low != q.high and not re.search(r"±|\+/-", text[q.start : q.end])
    if ranged and (m := _BETWEEN.search(text, max(0, start - 9), start)):
        start = m.start()
    return Found(start, q.end, q.low, q.high, q.unit)


def _listed(text: str, q: Found, taken: int) -> list[Found]:
    """The numbers of a list that ends in ``q`` ("5, 10 and 20 mg"), with its unit."""
    m = _LIST.search(text, max(taken, q.start - 80), q.start)
    if m is None or _FIGURE.search(text, max(0, m.start() - 40), m.start()):
        return []
    items = _LIST_ITEM.finditer(text, m.start(), m.end())
    return [Found(i.start(), i.end(), number(i.group()), number(i.group()), q.unit) for i in items]


def find(text: str) -> list[Found]:
    """Every quantity with a unit in ``text``, in order (money apart)."""
    out: list[Found] = []
    for q in _merged(text, _candidates(text)):
        wide = _widened(text, q)
        if wide == q and q.low == q.high:
            out.extend(_listed(text, q, out[-1].end if out else 0))
        out.append(wide)
    return out


def finite(value: str) -> bool:
    """Whether a stored number (``5e-06``, ``0.005..0.01``, ``1200``) is one a filter can
    compare: not infinite, not NaN, where a huge amount or exponent would give one."""
    try:
        return all(math.isfinite(float(x)) for x in value.split(".."))
    except ValueError:
        return False


def _money(number: str, scale: float) -> str:
    """An amount as an exact decimal: money is counted, not measured ($1,234,567.80 is
    1234567.8, not 1.23457e+06)."""
    amount = (Decimal(number.replace(",", "")) * Decimal(int(scale))).normalize()
    return format(amount, "f")


def _scale(text: str) -> float:
    m = re.search(r"(thousand|million|billion|trillion|bn|mn|[kKmMbB])\s*$", text)
    return SCALES[m.group(1).lower()] if m else 1.0


def money(text: str) -> list[Mention]:
    """The amounts of money in ``text``."""
    if not any(c in text for c in _MONEY_HINTS):
        return []
    out = []
    for m in _MONEY.finditer(text):
        span = m.group().rstrip()
        code = m.group("code") or CURRENCY_SIGNS["US$" if span.startswith("US$") else span[0]]
        amount = _money(m.group("amount") or m.group("amount2"), _scale(span))
        if not finite(amount):  # "$1e400" is no amount a filter can compare
            continue
        out.append(Mention(m.start(), m.start() + len(span), "MONEY", span, f"{code} {amount}"))
    return out


class QuantityRecognizer:
    """Measures in SI base units and amounts of money; usable as filters."""

    # 7: SI's named units by their symbol: 12 V, 5 J, 3 Pa (not kg * m ** 2 / A / s ** 3)
    # 6: a number glued to letters and a dash is no quantity (versions: 2022g-3, 2.12l-1)
    # 5: prefixed unit words (micromol, deciliter), mm Hg, mm(3), "2·8%", "58%-66%"; kb, Mb
    #    and Gb left out (kilo-, megabases); exponents up to 4 ("V8" is no unit); "one day"
    # 4: ranges, tolerances, approximations, lists, compound units, scientific notation,
    #    temperatures, fractions in percent; many more units (units.py)
    # 3: not in inline code (`0B 9B`, `%5B`), not across table cells
    # 2: money amounts are exact decimals; not run on code (hex dumps, escapes, 1L)
    info = RecognizerInfo(
        name="quantities",
        version="7",
        types=("QUANTITY", "MONEY"),
        code=False,
        inline_code=False,
        cross_cells=False,
    )

    def load(self):
        """pint's registry and the full pattern, built before the readers fork so that
        they share one copy: a reader would otherwise build its own on its first quantity
        (0.6 s of CPU each)."""
        _quantity()
        return registry()

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text in texts:
            found = money(text)
            spans = [(m.start, m.end) for m in found]
            for q in find(text):
                if not any(a < q.end and q.start < b for a, b in spans):
                    value = si(q.low, q.high, q.unit)
                    if not finite(value.split(" ", 1)[0]):  # "1e400 kg": off the floats
                        continue
                    found.append(Mention(q.start, q.end, "QUANTITY", text[q.start : q.end], value))
            out.append(sorted(found, key=lambda m: m.start))
        return out
