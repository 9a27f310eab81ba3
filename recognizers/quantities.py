"""Quantities with units ("5 mg", "3.5 GB", "250 ms") in SI base units, and money ("$1,200")
as a currency code with an amount.

Candidates are a number followed by a unit from a fixed table (or a currency sign or
code around it); pint converts each to base units (data sizes to bytes, which pint
would give in bits). A number alone is not a quantity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from functools import cache

from kbx.recognizers.base import Mention, RecognizerInfo

# surface form -> pint unit (case-sensitive where case matters: mb/Mb/MB differ). Words
# that are also units ("in", "t", "A", "K") are left out: "version 1.2 in 2021".
UNITS = {
    "mg": "milligram",
    "g": "gram",
    "kg": "kilogram",
    "µg": "microgram",
    "ug": "microgram",
    "mcg": "microgram",
    "lb": "pound",
    "lbs": "pound",
    "oz": "ounce",
    "ns": "nanosecond",
    "µs": "microsecond",
    "us": "microsecond",
    "ms": "millisecond",
    "s": "second",
    "sec": "second",
    "min": "minute",
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "mm": "millimeter",
    "cm": "centimeter",
    "m": "meter",
    "km": "kilometer",
    "mi": "mile",
    "ft": "foot",
    "nm": "nanometer",
    "µm": "micrometer",
    "ml": "milliliter",
    "mL": "milliliter",
    "l": "liter",
    "L": "liter",
    "B": "byte",
    "KB": "kilobyte",
    "kB": "kilobyte",
    "MB": "megabyte",
    "GB": "gigabyte",
    "TB": "terabyte",
    "PB": "petabyte",
    "KiB": "kibibyte",
    "MiB": "mebibyte",
    "GiB": "gibibyte",
    "TiB": "tebibyte",
    "kb": "kilobit",
    "Mb": "megabit",
    "Gb": "gigabit",
    "bps": "bit/second",
    "kbps": "kilobit/second",
    "Mbps": "megabit/second",
    "Gbps": "gigabit/second",
    "Hz": "hertz",
    "kHz": "kilohertz",
    "MHz": "megahertz",
    "GHz": "gigahertz",
    "W": "watt",
    "kW": "kilowatt",
    "MW": "megawatt",
    "kWh": "kilowatt_hour",
    "V": "volt",
    "mV": "millivolt",
    "mA": "milliampere",
    "°C": "degC",
    "°F": "degF",
    "mph": "mile/hour",
    "km/h": "kilometer/hour",
    "milligrams": "milligram",
    "grams": "gram",
    "kilograms": "kilogram",
    "milliseconds": "millisecond",
    "seconds": "second",
    "minutes": "minute",
    "hours": "hour",
    "meters": "meter",
    "kilometers": "kilometer",
    "miles": "mile",
    "feet": "foot",
    "megabytes": "megabyte",
    "gigabytes": "gigabyte",
    "terabytes": "terabyte",
    "bytes": "byte",
    "watts": "watt",
    "volts": "volt",
    "percent": "percent",
    "%": "percent",
}
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
DATA = ("byte", "bit")

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_SCALE = r"(?:\s*(?:thousand|million|billion|trillion|bn|mn|[kKmMbB])\b)?"
_RX = re.compile(
    rf"(?P<money>(?:US\$|[$€£¥])\s?(?P<amount>{_NUMBER}){_SCALE}"
    rf"|\b(?P<code>{'|'.join(CURRENCY_CODES)})\s?(?P<amount2>{_NUMBER}){_SCALE})"
    rf"|(?<![\w.,])(?P<number>{_NUMBER})\s?(?P<unit>{_UNIT_ALT})(?![\w/])"
)


_DECADE = re.compile(r"1[5-9]\d0|20\d0")


@cache
def _registry():
    import pint  # loaded on first use: it takes a few tenths of a second

    return pint.UnitRegistry()


def _amount(number: str) -> float:
    return float(number.replace(",", ""))


def _money(number: str, scale: float) -> str:
    """An amount as an exact decimal: money is counted, not measured ($1,234,567.80 is
    1234567.8, not 1.23457e+06)."""
    amount = (Decimal(number.replace(",", "")) * Decimal(int(scale))).normalize()
    return format(amount, "f")


def _scale(text: str) -> float:
    m = re.search(r"(thousand|million|billion|trillion|bn|mn|[kKmMbB])\s*$", text)
    return SCALES[m.group(1).lower()] if m else 1.0


@cache
def _si(magnitude: float, unit: str) -> str:
    q = _registry().Quantity(magnitude, unit)
    if any(d in unit for d in DATA) and "/" not in unit:
        return f"{q.to('byte').magnitude:g} B"
    if unit == "percent":
        return f"{magnitude:g} %"
    base = q.to_base_units()
    return f"{base.magnitude:.6g} {base.units:~}"


class QuantityRecognizer:
    """Measures in SI base units and amounts of money; usable as filters."""

    # 3: not in inline code (`0B 9B`, `%5B`), not across table cells
    # 2: money amounts are exact decimals; not run on code (hex dumps, escapes, 1L)
    info = RecognizerInfo(
        name="quantities",
        version="3",
        types=("QUANTITY", "MONEY"),
        code=False,
        inline_code=False,
        cross_cells=False,
    )

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text in texts:
            found = []
            for m in _RX.finditer(text):
                span = m.group().rstrip()
                start, end = m.start(), m.start() + len(span)
                if m.group("money"):
                    code = m.group("code") or CURRENCY_SIGNS[_sign(span)]
                    amount = _money(m.group("amount") or m.group("amount2"), _scale(span))
                    found.append(Mention(start, end, "MONEY", span, f"{code} {amount}"))
                elif m.group("unit") == "s" and _DECADE.fullmatch(m.group("number")):
                    continue  # "the 1990s"
                else:
                    value = _si(_amount(m.group("number")), UNITS[m.group("unit")])
                    found.append(Mention(start, end, "QUANTITY", span, value))
            out.append(found)
        return out


def _sign(span: str) -> str:
    """The currency sign a money span starts with."""
    return "US$" if span.startswith("US$") else span[0]
