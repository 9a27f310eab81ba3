"""The units the quantity recognizer reads, as written, and what pint calls each.

A fixed table, not pint's parser: pint reads almost any letters as a unit ("in", "a", "ppt"
a picopint, "bp" a printer's point, "kt" a knot), so only forms listed here count. Symbols
are case-sensitive (mg/Mg, ms/Ms differ) and take the SI prefixes listed with them; words
are read in any case. A bare "A", "M", "N", "T", "F", "H", "pm" or "am" is left out ("Plan
A", "5 pm"), and so are kb, Mb and Gb (kilo- and megabases in genomics as often as bits).
``si`` turns a value in a unit into the mention's value (see quantities.py).
"""

from __future__ import annotations

import re
from functools import cache

from kbx.recognizers.trie import trie

PREFIXES = {
    "p": "pico",
    "n": "nano",
    "µ": "micro",
    "μ": "micro",
    "u": "micro",
    "m": "milli",
    "c": "centi",
    "d": "deci",
    "h": "hecto",
    "k": "kilo",
    "M": "mega",
    "G": "giga",
    "T": "tera",
    "P": "peta",
}
# symbol -> (pint unit, the prefixes it takes, whether it stands alone)
PREFIXED = {
    "m": ("meter", "nµμumcdk", True),
    "g": ("gram", "pnµμumkMGT", True),
    "s": ("second", "pnµμum", True),
    "L": ("liter", "nµμumd", True),
    "l": ("liter", "nµμumd", True),
    "mol": ("mole", "pnµμumk", True),
    "M": ("molar", "pnµμum", False),
    "Hz": ("hertz", "mkMGT", True),
    "W": ("watt", "µμumkMGT", True),
    "Wh": ("watt_hour", "kMGT", True),
    "V": ("volt", "µμumkM", True),
    "A": ("ampere", "pnµμumk", False),
    "Pa": ("pascal", "µμumhkMG", True),
    "bar": ("bar", "nµμumk", True),
    "J": ("joule", "nµμumkMGTP", True),
    "eV": ("electron_volt", "mkMGT", True),
    "N": ("newton", "mkM", False),
    "Ω": ("ohm", "mkM", True),
    "F": ("farad", "pnµμum", False),
    "H": ("henry", "nµμum", False),
    "T": ("tesla", "nµμum", False),
    "Gy": ("gray", "cm", True),
    "Sv": ("sievert", "mµμu", True),
    "Bq": ("becquerel", "kMG", True),
    "K": ("kelvin", "nµμum", True),
    "cal": ("calorie", "k", True),
    "Da": ("dalton", "kM", True),
    "t": ("metric_ton", "kMG", False),
    "pc": ("parsec", "kMG", False),
}
SYMBOLS = {
    "min": "minute",
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "sec": "second",
    "yr": "year",
    "yrs": "year",
    "kyr": "kiloyear",
    "Myr": "megayear",
    "Gyr": "gigayear",
    "byr": "gigayear",
    "ka": "kiloyear",
    "Ma": "megayear",
    "Ga": "gigayear",
    "Å": "angstrom",
    "au": "astronomical_unit",
    "ly": "light_year",
    "mi": "mile",
    "ft": "foot",
    "yd": "yard",
    "lb": "pound",
    "lbs": "pound",
    "oz": "ounce",
    "mcg": "microgram",
    "mph": "mile/hour",
    "kn": "knot",
    "rpm": "revolutions_per_minute",
    "psi": "psi",
    "atm": "atm",
    "mBar": "millibar",
    "mdeg": "millidegree",
    "arcmin": "arcminute",
    "arcsec": "arcsecond",
    "masl": "meter",  # metres above (below) sea level
    "mbsl": "meter",
    "Torr": "torr",
    "torr": "torr",
    "mmHg": "millimeter_Hg",
    "mm Hg": "millimeter_Hg",
    "ha": "hectare",
    "Vs": "volt*second",
    "B": "byte",
    "kB": "kilobyte",
    "KB": "kilobyte",
    "MB": "megabyte",
    "GB": "gigabyte",
    "TB": "terabyte",
    "PB": "petabyte",
    "KiB": "kibibyte",
    "MiB": "mebibyte",
    "GiB": "gibibyte",
    "TiB": "tebibyte",
    "kbit": "kilobit",  # not kb, Mb, Gb: kilo-, megabases in genomics ("a 261-Mb genome")
    "Mbit": "megabit",
    "Gbit": "gigabit",
    "bps": "bit/second",
    "kbps": "kilobit/second",
    "Mbps": "megabit/second",
    "Gbps": "gigabit/second",
    "°C": "degC",
    "ºC": "degC",
    "˚C": "degC",
    "℃": "degC",
    "°F": "degF",
    "ºF": "degF",
    "°": "degree",
    "º": "degree",
    "°N": "degree",
    "°S": "degree",
    "°E": "degree",
    "°W": "degree",
    "%": "percent",
    "‰": "permille",
    "wt%": "percent",
    "wt.%": "percent",
    "wt. %": "percent",
    "vol%": "percent",
    "vol.%": "percent",
    "mol%": "percent",
    "at%": "percent",
    "at.%": "percent",
    "ppm": "ppm",
    "ppmv": "ppm",
    "ppb": "ppb",
    "ppbv": "ppb",
    "ppt": "ppt",
    "pptv": "ppt",
    "ppq": "ppq",
}
# words that take the SI prefixes as words: "micromol", "kilometres", "nanograms"
PREFIXED_WORDS = {
    "meter": "meter",
    "metre": "meter",
    "gram": "gram",
    "gramme": "gram",
    "liter": "liter",
    "litre": "liter",
    "second": "second",
    "mole": "mole",
    "mol": "mole",
    "molar": "molar",
    "watt": "watt",
    "volt": "volt",
    "joule": "joule",
    "pascal": "pascal",
    "ampere": "ampere",
    "hertz": "hertz",
    "byte": "byte",
}
WORD_PREFIXES = ("pico", "nano", "micro", "milli", "centi", "deci", "kilo", "mega", "giga", "tera")
_WORDS = {
    "micron": "micrometer",
    "tonne": "metric_ton",
    "minute": "minute",
    "hour": "hour",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
    "decade": "decade_of_years",
    "mile": "mile",
    "yard": "yard",
    "ounce": "ounce",
    "amp": "ampere",
    "calorie": "calorie",
    "kilocalorie": "kilocalorie",
    "kelvin": "kelvin",
    "degree": "degree",
    "hectare": "hectare",
    "acre": "acre",
    "knot": "knot",
    "parsec": "parsec",
    "light year": "light_year",
    "light-year": "light_year",
    **PREFIXED_WORDS,
    **{p + w: p + u for w, u in PREFIXED_WORDS.items() for p in WORD_PREFIXES},
}
_NO_PLURAL = ("hertz", "molar")
WORDS = {
    **{w + s: u for w, u in _WORDS.items() for s in ("", "s") if not w.endswith(_NO_PLURAL)},
    **{w: u for w, u in _WORDS.items() if w.endswith(_NO_PLURAL)},
    "bits": "bit",  # not "64 bit": a word size, not an amount of data
    "feet": "foot",
    "foot": "foot",
    "inch": "inch",
    "inches": "inch",
    "centuries": "century",
    "century": "century",
    "percent": "percent",
    "per cent": "percent",
    "percentage point": "percent",
    "percentage points": "percent",
    "degrees celsius": "degC",
    "degree celsius": "degC",
    "degrees c": "degC",
    "degrees fahrenheit": "degF",
    "degrees f": "degF",
}
OFFSET = ("degC", "degF")  # absolute temperatures: a temperature inside a compound is a delta
DATA = ("byte", "bit")


def _symbols() -> dict[str, str]:
    out = dict(SYMBOLS)
    for base, (unit, prefixes, alone) in PREFIXED.items():
        if alone:
            out.setdefault(base, unit)
        for p in prefixes:
            out.setdefault(p + base, PREFIXES[p] + unit)
    return out


ALL_SYMBOLS = _symbols()
SINGLE = frozenset(s for s in ALL_SYMBOLS if len(s) == 1 and s.isalpha())


# one unit: a symbol (exact case) or a word (any case), not run into a following letter
ATOM = rf"(?:{trie(ALL_SYMBOLS)}|(?i:{trie(WORDS)}))(?![A-Za-zµμ])"
_EXP = (
    r"(?:(?:\^?[−-]\s?[1-4]|\^?[1-4]|⁻?[¹²³⁴]|\([−-]?[1-4]\))(?!\d)(?![.,]\d))"  # m2 s−1 cm⁻³ mm(3)
)
# a unit expression: "m s−1", "mg/kg", "W m−2", "µmol/L", "mm per year"; a factor joined by
# a space needs an exponent ("m s−1"), so "5 m s" stays "5 m"
_JOINS = rf"(?:\s?/\s?{ATOM}{_EXP}?|[ ·⋅]{ATOM}{_EXP}|\s+per\s+{ATOM})*"
# things counted per unit: "cells/mL", "copies/µL", "stems/ha"; the count is not a unit
COUNTED = r"(?:[a-z]{2,15}s|[A-Z]{2,4}|U)\s?/\s?"  # plural nouns, and "U/ml" enzyme units
UNIT = rf"(?:{COUNTED})?{ATOM}{_EXP}?{_JOINS}"

_FACTOR = re.compile(rf"(?P<join>\s?/\s?|[ ·⋅]|\s+per\s+)?(?P<atom>{ATOM})(?P<exp>{_EXP})?")
_SUPERSCRIPT = str.maketrans("⁻¹²³⁴", "-1234")


def _pint_atom(atom: str) -> str:
    return ALL_SYMBOLS.get(atom) or WORDS[atom.lower()]


@cache
def pint_expr(unit: str) -> str:
    """The pint expression of a unit as written: ``m s−1`` is ``meter * second ** -1``."""
    parts = []
    counted = re.match(COUNTED, unit)
    if counted and unit[: counted.end()].rstrip("/ ") not in ALL_SYMBOLS:
        unit = "/" + unit[counted.end() :]  # "cells/mL" is "1 / mL"
    factors = list(_FACTOR.finditer(unit))
    for f in factors:
        name = _pint_atom(f.group("atom"))
        if name in OFFSET and len(factors) > 1:
            name = "delta_" + name
        elif len(factors) > 1 and re.search(r"[*/]", name):
            name = f"({name})"
        written = (f.group("exp") or "1").translate(_SUPERSCRIPT).strip("^()")
        exp = int(re.sub(r"\s", "", written.replace("−", "-")))
        join = (f.group("join") or "").strip()
        if join in ("/", "per"):
            exp = -exp
        parts.append(name if exp == 1 else f"{name} ** {exp}")
    return " * ".join(parts)


@cache
def registry():
    """pint's registry with the parts-per forms and a decade of years it lacks; loaded on
    first use (a few tenths of a second)."""
    import pint

    ureg = pint.UnitRegistry()
    ureg.define("ppb = 1e-9")
    ureg.define("ppt = 1e-12")  # parts per trillion, beside ppb and ppq (‰ is per mille)
    ureg.define("ppq = 1e-15")
    ureg.define("decade_of_years = 10 * year")
    return ureg


def _g(x: float) -> str:
    return f"{x:.6g}"


# SI's named units, as a person writes them: a volt, not "kg * m ** 2 / A / s ** 3" (the
# same value: each is one of the base units' coherent products)
NAMED = {
    "kg * m ** 2 / A / s ** 3": "V",
    "kg * m ** 2 / s ** 3": "W",
    "kg * m ** 2 / s ** 2": "J",
    "kg * m / s ** 2": "N",
    "kg / m / s ** 2": "Pa",
    "A * s": "C",
    "kg * m ** 2 / A ** 2 / s ** 3": "Ω",
    "A ** 2 * s ** 4 / kg / m ** 2": "F",
    "kg / A / s ** 2": "T",
    "kg * m ** 2 / A / s ** 2": "Wb",
    "kg * m ** 2 / A ** 2 / s ** 2": "H",
    "A ** 2 * s ** 3 / kg / m ** 2": "S",
}


@cache
def _linear(expr: str) -> tuple[float, float, str]:
    """How a value in ``expr`` becomes its SI value, ``factor * x + offset``, and the SI unit
    as written; pint is asked once per unit (a conversion costs tens of microseconds)."""
    ureg = registry()
    one = ureg.Quantity(1, expr)
    if any(d in expr for d in DATA) and "/" not in expr and "**" not in expr:
        target, unit = ureg.byte, "B"
    else:
        target = one.to_base_units().units
        unit = f"{target:~}"
        if not unit:  # a fraction: "5 ppm", "5 mg/kg" (an angle is in radians)
            target, unit = ureg.percent, "%"
    zero = ureg.Quantity(0, expr).to(target).magnitude
    return one.to(target).magnitude - zero, zero, NAMED.get(unit, unit)


def si(low: float, high: float, expr: str) -> str:
    """A value (or an interval, ``low < high``) in SI base units: ``5e-06 kg``,
    ``0.005..0.01 kg``; data sizes in bytes, fractions in percent, temperatures in kelvin;
    SI's named units by their symbol (``12 V``, not ``12 kg * m ** 2 / A / s ** 3``)."""
    factor, offset, unit = _linear(expr)
    a, b = _g(low * factor + offset), _g(high * factor + offset)
    return f"{a} {unit}" if a == b else f"{a}..{b} {unit}"
