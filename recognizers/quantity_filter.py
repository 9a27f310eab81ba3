"""What ``--quantity`` asks, and what a stored quantity holds: both in SI, by dimension.

A filter is ``[DIMENSION] OP VALUE`` or ``[DIMENSION]=LOW..HIGH``: ``mass>1kg``,
``size<=4GB``, ``temperature>=30°C``, ``mass=1kg..5kg``, ``>5 mg`` (a bare unit names its
own dimension), ``percent<5``, ``usd>=1000``. The value is read by the quantity
recognizer itself, so ``GB`` means here what it means in the documents (10^9 bytes; ``GiB``
is 2^30), and a unit it does not read is asked of pint. Values are compared in the SI unit
the recognizer stores, rounded as it rounds them (six significant digits).

A stored quantity is an interval (a single value is ``lo == hi``), and a filter keeps it
when the interval overlaps what is asked: ``>1kg`` keeps ``0.5–2 kg``, ``<1kg`` keeps it
too, ``=1kg`` keeps it, ``=3kg..5kg`` does not. So ``>`` means "some of it is above".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

from kbx.errors import BadArgument

# The recognizer's modules load on first use: compiling its patterns takes a few tenths of
# a second, which a search that filters on no quantity (or only renders a facet) never pays.

# name -> the SI unit the recognizer writes for it; the first name of a unit is how it is shown
DIMENSIONS = {
    "mass": "kg",
    "length": "m",
    "time": "s",
    "temperature": "K",
    "data": "B",
    "speed": "m / s",
    "area": "m ** 2",
    "volume": "m ** 3",
    "frequency": "1 / s",
    "energy": "J",
    "power": "W",
    "pressure": "Pa",
    "voltage": "V",
    "current": "A",
    "force": "N",
    "charge": "C",
    "resistance": "Ω",
    "capacitance": "F",
    "inductance": "H",
    "density": "kg / m ** 3",
    "concentration": "mol / m ** 3",
    "amount": "mol",
    "bitrate": "bit / s",
    "percent": "%",
    # other names for the same
    "distance": "m",
    "duration": "s",
    "size": "B",
    "information": "B",
    "velocity": "m / s",
    "fraction": "%",
    "substance": "mol",
}
MONEY = "money"  # its unit is the currency: USD, EUR, …
NAME_OF = {unit: name for name, unit in reversed(DIMENSIONS.items())}
_BASE = {  # pint's base dimensions, as units: "[length] / [time]" is "meter / second"
    "[mass]": "kilogram",
    "[length]": "meter",
    "[time]": "second",
    "[temperature]": "kelvin",
    "[current]": "ampere",
    "[substance]": "mole",
    "[luminosity]": "candela",
    "[information]": "byte",
}
OPS = ("<=", ">=", "<", ">", "=")
_SPEC = re.compile(r"^\s*(?P<dim>[^<>=]*?)\s*(?P<op><=|>=|<|>|=)\s*(?P<value>.*?)\s*$")
_BARE = re.compile(r"^[−+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][−+-]?\d+)?$")
_NUMBER_UNIT = re.compile(
    r"^(?P<n>[−+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][−+-]?\d+)?)\s*(?P<u>[^\d\s.,].*)$"
)
_STORED = re.compile(r"^(?P<lo>\S+?)(?:\.\.(?P<hi>\S+))? (?P<unit>.+)$")
_MONEY_STORED = re.compile(r"^(?P<code>[A-Z]{3}) (?P<amount>-?[\d.]+)$")
EXAMPLES = "e.g. mass>1kg, size<=4GB, temperature>=30°C, mass=1kg..5kg, >5 mg, usd>=1000"


@dataclass(frozen=True)
class Asked:
    """One quantity filter, checked: the SI unit (or currency) it compares in, the operator,
    and the interval asked (``lo == hi`` but for a range)."""

    spec: str
    dimension: str
    unit: str
    op: str
    lo: float
    hi: float


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def written(unit: str) -> str:
    """A stored SI unit as people write it, for showing: pint's ``kg / m ** 3`` is
    ``kg/m³``, ``1 / s`` is ``Hz``, ``kg * m / A / s ** 3`` is ``kg·m/(A·s³)``, ``1 / m``
    is ``m⁻¹``. Filters read each form back (``--quantity ">1 kg/m³"``); the store keeps
    pint's, which it compares."""
    if unit == DIMENSIONS["frequency"]:
        return "Hz"
    top, *below = unit.split(" / ")
    down = [p for part in below for p in part.split(" * ")]

    def factors(parts: list[str], negative: bool = False) -> str:
        out = []
        for base, _, power in (p.partition(" ** ") for p in parts):
            power = f"-{power or 1}" if negative else power
            out.append(base + power.translate(_SUPERSCRIPT))
        return "·".join(out)

    if top == "1" and down:
        return factors(down, negative=True)
    if not down:
        return factors(top.split(" * "))
    shown = factors(down)
    return f"{factors(top.split(' * '))}/{f'({shown})' if len(down) > 1 else shown}"


def dimension_of(unit: str) -> str:
    """The name shown for a stored SI unit (or currency): ``kg`` is mass; a unit with no
    name is its own, as written (``kg/m²``)."""
    from kbx.recognizers.quantities import CURRENCY_CODES

    return MONEY if unit in CURRENCY_CODES else NAME_OF.get(unit) or written(unit)


def stored(type_: str, value: str | None) -> tuple[str, str, float, float] | None:
    """``(dimension, unit, lo, hi)`` of a QUANTITY or MONEY mention's value (``5e-06 kg``,
    ``5e-06..1e-05 kg``, ``USD 1200``); None for a value it cannot read."""
    if not value:
        return None
    m = (_MONEY_STORED if type_ == "MONEY" else _STORED).match(value)
    if not m:
        return None
    try:
        if type_ == "MONEY":
            a = b = float(m["amount"])
            unit = m["code"]
        else:
            a = float(m["lo"])
            b = float(m["hi"]) if m["hi"] else a
            unit = m["unit"]
    except ValueError:
        return None
    return dimension_of(unit), unit, min(a, b), max(a, b)


def _rounded(x: float) -> float:
    return float(f"{x:.6g}")  # as units.si writes a stored value


def _unit_sentence(unit: str) -> str:
    name, shown = dimension_of(unit), written(unit)
    return f"{name} ({shown})" if name != shown else f"in {shown}"


@cache
def _pint_unit(text: str) -> str | None:
    """A unit the recognizer does not read, as pint's expression; None if pint does not
    know it either."""
    import pint

    from kbx.recognizers.units import registry

    text = ("1 " if text.startswith("/") else "") + text.replace("°", "deg")  # "5 / s"
    try:
        return str(registry().parse_units(text))
    except (pint.UndefinedUnitError, pint.errors.DefinitionSyntaxError, AttributeError,
            ValueError, TypeError, SyntaxError):  # fmt: skip
        return None


def _value(text: str, spec: str, default: str | None) -> tuple[float, float, str]:
    """``(lo, hi, SI unit)`` of a value as written (``1kg``, ``4 GB``, ``37 °C``, ``$1,000``,
    ``5–10 mg``); a bare number is in ``default`` (percent or a currency), else an error."""
    from kbx.recognizers.quantities import CURRENCY_CODES, find, money, number
    from kbx.recognizers.units import _linear

    t = text.strip()
    if not t:
        raise BadArgument(f"--quantity {spec!r}: no value after the operator ({EXAMPLES})")
    if _BARE.match(t):
        if default == MONEY:
            raise BadArgument(
                f"--quantity {spec!r}: money takes a currency, as in money>=USD 1000 or usd>=1000"
            )
        if default is None:
            raise BadArgument(
                f"--quantity {spec!r}: give {t} a unit, e.g. {t}kg or {t} GB ({EXAMPLES})"
            )
        x = _rounded(number(t.replace("−", "-")))
        return x, x, default
    for m in money(t):
        if (m.start, m.end) == (0, len(t)):
            code, amount = m.value.split(" ")
            return float(amount), float(amount), code
    code = re.fullmatch(rf"(?P<n>.+?)\s*(?P<c>{'|'.join(CURRENCY_CODES)})", t, re.IGNORECASE)
    if code and _BARE.match(code["n"]):
        x = _rounded(number(code["n"]))
        return x, x, code["c"].upper()
    found = find(t)
    if len(found) == 1 and (found[0].start, found[0].end) == (0, len(t)):
        q = found[0]
        factor, offset, unit = _linear(q.unit)
        return _rounded(q.low * factor + offset), _rounded(q.high * factor + offset), unit
    m = _NUMBER_UNIT.match(t)
    if not m:
        raise BadArgument(f"--quantity {spec!r}: {t!r} is not a number with a unit ({EXAMPLES})")
    expr = _pint_unit(m["u"].strip())
    if expr is None:
        raise BadArgument(
            f"--quantity {spec!r}: unknown unit {m['u'].strip()!r}: neither kbx's quantities "
            f"nor pint read it ({EXAMPLES})"
        )
    try:
        factor, offset, unit = _linear(expr)
    except Exception:  # pint's errors for what has no SI value (an offset in a compound)
        raise BadArgument(f"--quantity {spec!r}: {m['u']!r} has no value in SI units") from None
    x = _rounded(number(m["n"].replace("−", "-")) * factor + offset)
    return x, x, unit


def _dimension(dim: str, spec: str) -> tuple[str | None, str | None]:
    """``(SI unit, default unit for a bare number)`` a dimension name asks for: the unit for
    percent and a currency, ``MONEY`` for money (whose currency the value must name)."""
    from kbx.recognizers.quantities import CURRENCY_CODES
    from kbx.recognizers.units import _linear

    d = dim.strip().lower()
    if not d:
        return None, None
    if d in DIMENSIONS:
        unit = DIMENSIONS[d]
        return unit, unit if unit == "%" else None
    if d == MONEY:
        return None, MONEY
    if d.upper() in CURRENCY_CODES:
        return d.upper(), d.upper()
    if "[" in d:
        expr = re.sub(r"\[[a-z]+\]", lambda m: _BASE.get(m.group(), m.group()), d)
        if "[" not in expr:
            try:
                return _linear(expr)[2], None
            except Exception:  # pint cannot read what the brackets became
                pass
    names = ", ".join([*(n for n, u in DIMENSIONS.items() if NAME_OF[u] == n), MONEY])
    raise BadArgument(
        f"--quantity {spec!r}: unknown dimension {dim.strip()!r}; use {names}, a currency "
        "(usd, eur, ...), a pint dimensionality such as [length]/[time], or only a unit "
        f"after the operator ({EXAMPLES})"
    )


def parse(spec: str) -> Asked:
    """The filter ``spec`` asks for, checked: a malformed one, an unknown unit or dimension,
    or a value of another dimension (``mass>4GB``) is a BadArgument that shows the form."""
    from kbx.recognizers.quantities import CURRENCY_CODES

    m = _SPEC.match(spec)
    if not m:
        raise BadArgument(f"--quantity {spec!r}: write [DIMENSION] OP VALUE ({EXAMPLES})")
    dim, op, value = m["dim"], m["op"], m["value"]
    want, default = _dimension(dim, spec)
    if ".." in value:
        if op != "=":
            raise BadArgument(f"--quantity {spec!r}: a range takes =, as in mass=1kg..5kg")
        low_text, high_text = value.split("..", 1)
        if _BARE.match(low_text.strip()) and (u := _NUMBER_UNIT.match(high_text.strip())):
            low_text = f"{low_text.strip()} {u['u']}"  # "1..5 kg": the unit of both
        lo, _, unit = _value(low_text, spec, default)
        _, hi, high_unit = _value(high_text, spec, default)
        if high_unit != unit:
            raise BadArgument(f"--quantity {spec!r}: the ends of the range are not alike")
        if lo > hi:
            raise BadArgument(f"--quantity {spec!r}: the range's low end is above its high end")
    else:
        lo, hi, unit = _value(value, spec, default)
        if lo != hi and op != "=":
            raise BadArgument(f"--quantity {spec!r}: a range takes =, as in mass=1kg..5kg")
    if dim.strip().lower() == MONEY and unit not in CURRENCY_CODES:
        raise BadArgument(f"--quantity {spec!r}: money takes a currency, as in money>=USD 1000")
    if want is not None and unit != want:
        raise BadArgument(
            f"--quantity {spec!r}: {value.strip()} is {_unit_sentence(unit)}, not "
            f"{_unit_sentence(want)} ({EXAMPLES})"
        )
    return Asked(spec, dimension_of(unit), unit, op, lo, hi)


# Histogram edges in SI, readable: a bin is [edge, next edge), the first from -inf, the last
# to +inf. Mostly powers of a thousand; time in the units people count it in, temperature
# at 0, 100 and 1000 °C (kelvin has no useful logarithm here).
EDGES: dict[str, list[tuple[float, str]]] = {
    "kg": [(1e-6, "1 mg"), (1e-3, "1 g"), (1.0, "1 kg"), (1e3, "1 t")],
    "m": [(1e-6, "1 µm"), (1e-3, "1 mm"), (1.0, "1 m"), (1e3, "1 km")],
    "s": [
        (1e-3, "1 ms"),
        (1.0, "1 s"),
        (60.0, "1 min"),
        (3600.0, "1 h"),
        (86400.0, "1 day"),
        (31557600.0, "1 year"),
    ],  # fmt: skip
    "K": [(273.15, "0 °C"), (373.15, "100 °C"), (1273.15, "1000 °C")],
    "B": [(1e3, "1 kB"), (1e6, "1 MB"), (1e9, "1 GB"), (1e12, "1 TB")],
    "bit / s": [(1e3, "1 kbit/s"), (1e6, "1 Mbit/s"), (1e9, "1 Gbit/s")],
    "V": [(1e-3, "1 mV"), (1.0, "1 V"), (1e3, "1 kV")],
    "W": [(1e-3, "1 mW"), (1.0, "1 W"), (1e3, "1 kW"), (1e6, "1 MW")],
    "J": [(1.0, "1 J"), (1e3, "1 kJ"), (1e6, "1 MJ")],
    "Pa": [(1.0, "1 Pa"), (1e3, "1 kPa"), (1e6, "1 MPa")],
    "1 / s": [(1.0, "1 Hz"), (1e3, "1 kHz"), (1e6, "1 MHz"), (1e9, "1 GHz")],
    "%": [(0.1, "0.1 %"), (1.0, "1 %"), (10.0, "10 %"), (100.0, "100 %")],
    MONEY: [(1e2, "100"), (1e3, "1,000"), (1e6, "1 million"), (1e9, "1 billion")],
    "": [(10.0**k, f"{10.0**k:g}") for k in range(-9, 12, 3)],  # any other unit
}


def _below(x: float) -> float:
    """The largest value of six significant digits under ``x`` (> 0): what a stored value
    under an edge is at most (``1`` gives ``0.999999``, ``273.15`` gives ``273.149``)."""
    e = math.floor(math.log10(x * (1 - 1e-9)))
    return float(f"{x - 10.0 ** (e - 5):.6g}")


def bin_filter(dimension: str, unit: str, lo: float | None, hi: float | None) -> str:
    """The ``--quantity`` that keeps exactly a histogram bin ``[lo, hi)`` (values stored
    to six significant digits: the upper end is the largest under ``hi``)."""
    name = unit.lower() if dimension == MONEY else dimension if dimension in DIMENSIONS else ""
    bare = dimension == MONEY or unit == "%"

    def value(x: float) -> str:
        return f"{x:g}" if bare else f"{x:g} {written(unit)}"

    if lo is None:
        return f"{name}<{value(hi)}"
    if hi is None:
        return f"{name}>={value(lo)}"
    return f"{name}={value(lo)}..{value(_below(hi))}"


def edges_key(dimension: str, unit: str) -> str:
    """Which edges a stored quantity is binned by."""
    return MONEY if dimension == MONEY else unit if unit in EDGES else ""


def bin_label(dimension: str, unit: str, edge: str) -> str:
    """An edge as shown: ``1 mg``; money and other units with their unit (``USD 1,000``)."""
    key = edges_key(dimension, unit)
    if key == MONEY:
        return f"{unit} {edge}"
    return edge if key else f"{edge} {written(unit)}"
