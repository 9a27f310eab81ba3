"""Quantities in SI base units and money as currency and amount; bare numbers are not quantities."""

from __future__ import annotations

import pytest

from kbx.recognizers import units
from kbx.recognizers.quantities import QuantityRecognizer, find, number


def _found(text: str) -> list[tuple[str, str, str]]:
    (ms,) = QuantityRecognizer().recognize([text])
    for m in ms:
        assert text[m.start : m.end] == m.text
    return [(m.text, m.type, m.value) for m in ms]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("take 5 mg twice", ("5 mg", "QUANTITY", "5e-06 kg")),
        ("it costs $1,200 now", ("$1,200", "MONEY", "USD 1200")),
        ("a $2.5 billion deal", ("$2.5 billion", "MONEY", "USD 2500000000")),
        ("paid $1,234,567.80 in full", ("$1,234,567.80", "MONEY", "USD 1234567.8")),
        ("EUR 30 each", ("EUR 30", "MONEY", "EUR 30")),
        ("a 3.5 GB disk", ("3.5 GB", "QUANTITY", "3.5e+09 B")),
        ("p99 of 250 ms", ("250 ms", "QUANTITY", "0.25 s")),
        ("10 km away", ("10 km", "QUANTITY", "10000 m")),
    ],
)
def test_quantities_are_normalized(text, expected):
    assert _found(text) == [expected]


@pytest.mark.parametrize(
    ("text", "span", "value"),
    [
        # ranges: one mention, its value the interval
        ("a dose of 5–10 mg daily", "5–10 mg", "5e-06..1e-05 kg"),
        ("between 3 and 4 GB free", "between 3 and 4 GB", "3e+09..4e+09 B"),
        ("from 2632 to 2618 m deep", "from 2632 to 2618 m", "2618..2632 m"),
        ("heated from 1300 K to 3500 K", "from 1300 K to 3500 K", "1300..3500 K"),
        ("rates of 10-30% were seen", "10-30%", "10..30 %"),
        ("δ13C of −27.2 to −23.1‰ here", "−27.2 to −23.1‰", "-2.72..-2.31 %"),
        ("an interval of 58%-66% wide", "58%-66%", "58..66 %"),  # the dash is no sign
        # tolerances
        ("a bore of 12 ± 0.5 mm", "12 ± 0.5 mm", "0.0115..0.0125 m"),
        ("a share of 43.57% ± 4.35% of all", "43.57% ± 4.35%", "39.22..47.92 %"),
        ("set to 300±15 °C", "300±15 °C", "558.15..588.15 K"),
        (
            "rose from 1.9 +/- 0.8 mg per deciliter",
            "1.9 +/- 0.8 mg per deciliter",
            "0.011..0.027 kg / m ** 3",
        ),
        # approximations: the word in the span, the number as the value
        ("about 3 h later", "about 3 h", "10800 s"),
        ("weighs ~5 kg", "~5 kg", "5 kg"),
        ("approximately 60 eV each", "approximately 60 eV", "9.61306e-18 J"),
        # percentages and other fractions, in percent
        ("31% of women", "31%", "31 %"),
        ("nearly 50 percent of users", "nearly 50 percent", "50 %"),
        ("1.3 wt.% nitrogen", "1.3 wt.%", "1.3 %"),
        ("0.4‰ of it", "0.4‰", "0.04 %"),
        ("CO2 at 400 ppm today", "400 ppm", "0.04 %"),
        ("a dose of 5 mg/kg", "5 mg/kg", "0.0005 %"),
        # temperatures, in kelvin
        ("kept at 37 °C overnight", "37 °C", "310.15 K"),
        ("a fever of 98.6°F", "98.6°F", "310.15 K"),
        ("cooled to 4 K", "4 K", "4 K"),
        ("heated at 10 °C/min", "10 °C/min", "0.166667 K / s"),
        # compound units
        ("driving at 126 km/h", "126 km/h", "35 m / s"),
        ("a wind of 7.83 m s−1", "7.83 m s−1", "7.83 m / s"),
        ("a flux of 700 W/m2", "700 W/m2", "700 kg / s ** 3"),
        ("glucose ≥7.0 mmol/L", "7.0 mmol/L", "7 mol / m ** 3"),
        ("a density of 1 g cm−3", "1 g cm−3", "1000 kg / m ** 3"),
        ("yields of 11.25 Mg ha−1 year−1", "11.25 Mg ha−1 year−1", "3.56491e-08 kg / m ** 2 / s"),
        ("uplift of 5 mm per year", "5 mm per year", "1.5844e-10 m / s"),
        ("2 µmol/L of it", "2 µmol/L", "0.002 mol / m ** 3"),
        ("a count of 160 cells/mm(3).", "160 cells/mm(3)", "1.6e+11 1 / m ** 3"),
        ("homocysteine of 14 micromol/L", "14 micromol/L", "0.014 mol / m ** 3"),
        ("a 25 kDa protein", "25 kDa", "4.15135e-23 kg"),
        # powers of ten, as typed and as extraction leaves a lost superscript
        ("seeded 3.2 × 10^5 cells/mL", "3.2 × 10^5 cells/mL", "3.2e+11 1 / m ** 3"),
        ("a loss of 6 × 106 kg s−1", "6 × 106 kg s−1", "6e+06 kg / s"),
        ("about 1.5e-3 m wide", "about 1.5e-3 m", "0.0015 m"),
        # words, hyphens, no space, scale words
        ("after two weeks", "two weeks", "1.2096e+06 s"),
        ("a 2-hour run", "2-hour", "7200 s"),
        ("a 30s timeout", "30s", "30 s"),
        ("over 5 million years", "5 million years", "1.57788e+14 s"),
        ("at 40°N", "40°N", "0.698132 rad"),
        ("2 mm Hg lower", "2 mm Hg", "266.645 Pa"),
        ("a pressure of 0.06  mBar", "0.06  mBar", "6 Pa"),
        ("a reduction of 2·8%", "2·8%", "2.8 %"),  # a raised decimal point
    ],
)
def test_each_shape_is_one_mention_with_its_si_value(text, span, value):
    assert _found(text) == [(span, "QUANTITY", value)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5, 10 and 20 mg", [("5", "5e-06 kg"), ("10", "1e-05 kg"), ("20 mg", "2e-05 kg")]),
        ("3 and 4 GB", [("3", "3e+09 B"), ("4 GB", "4e+09 B")]),
        ("60 or 63 mm", [("60", "0.06 m"), ("63 mm", "0.063 m")]),
        ("34 °C and 38 °C", [("34 °C", "307.15 K"), ("38 °C", "311.15 K")]),
    ],
)
def test_a_unit_is_carried_back_across_a_list(text, expected):
    assert [(t, v) for t, _, v in _found(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "version 1.2 in 2021",
        "in the 1990s",
        "in the 80s",
        "in her mid-20s",
        "5 of 10",
        "Plan B",
        "see Fig. 3B and Figures 3A and 3B",  # figure panels, not bytes
        "in Fig. 2h",
        "10K users",  # ten thousand, not kelvin
        "COVID-19 s",
        "at 12:30 h",
        "SHA-256 bits",
        "a 64-bit build",  # a word size, not an amount of data
        "x86 s",
        "5 pm",
        "2 A",
        "3 M",
        "5 mg/patient",  # not a unit per unit
        "issue #5 B",
        "V8 9.3\n\nV8 is",  # not volts to the eighth
        "One day I will",
        "a 261-Mb genome",  # megabases, not megabits
    ],
)
def test_look_alikes_are_not_quantities(text):
    assert _found(text) == []


def test_one_day_is_a_duration_after_a_preposition():
    assert _found("done in one day") == [("one day", "QUANTITY", "86400 s")]


def test_a_year_and_a_comma_are_not_a_list():
    assert _found("In 2010, 5 hours") == [("5 hours", "QUANTITY", "18000 s")]


def test_hours_per_day_are_hours_not_a_ratio():
    assert _found("24 hours per day") == [("24 hours", "QUANTITY", "86400 s")]
    assert _found("63 percent per month")[0][2] == "2.39562e-07 1 / s"


def test_money_keeps_its_span():
    assert _found("raised $5m, then 10 GB") == [
        ("$5m", "MONEY", "USD 5000000"),
        ("10 GB", "QUANTITY", "1e+10 B"),
    ]


def test_find_gives_the_interval_in_the_unit_as_written():
    (q,) = find("about 5–10 mg/kg")
    assert (q.start, q.end, q.low, q.high, q.unit) == (0, 16, 5, 10, "milligram * kilogram ** -1")


@pytest.mark.parametrize(
    ("written", "value"),
    [("1,200", 1200), ("−3.5", -3.5), ("3.2 × 10^5", 3.2e5), ("6×106", 6e6), ("2e-3", 0.002)],
)
def test_numbers_as_written(written, value):
    assert number(written) == pytest.approx(value)


def test_load_builds_the_unit_registry_the_readers_share():
    """``load`` runs before the readers fork: it builds pint's registry there, so each
    reader shares one, where it would build its own on its first quantity."""
    r = QuantityRecognizer()
    assert r.load() is units.registry() and units.registry.cache_info().currsize == 1
    (found,) = r.recognize(["Keep 3.5 GB free."])
    assert [(m.text, m.type) for m in found] == [("3.5 GB", "QUANTITY")]


@pytest.mark.parametrize(
    "text",
    [
        "tzdata (2022g-3) unstable; urgency=medium",
        "Build against libc 2.12l-1 and 2.10d-7.",
        "an upgrade from 10g-2 to 11",
    ],
)
def test_a_number_glued_to_letters_and_a_dash_is_a_version(text):
    """Debian versions read as g⁻³ and l⁻¹ gave values like ``2.022e+12 1 / kg ** 3``."""
    assert QuantityRecognizer().recognize([text]) == [[]]


def test_a_unit_power_with_its_space_is_still_read():
    [found] = QuantityRecognizer().recognize(["a flux of 5 m-2 s-1 and 3 mg-1 here"])
    assert [(m.text, m.value) for m in found] == [
        ("5 m-2 s-1", "5 1 / m ** 2 / s"),
        ("3 mg-1", "3e+06 1 / kg"),
    ]


def test_si_named_units_are_shown_by_their_symbol_and_filtered_by_name():
    """A volt was stored (and shown in facets) as ``kg * m ** 2 / A / s ** 3``."""
    from kbx.recognizers.quantity_filter import dimension_of, parse

    [found] = QuantityRecognizer().recognize(["12V cells, a 3 kV line, 5 kW and 4 µF"])
    assert [m.value for m in found] == ["12 V", "3000 V", "5000 W", "4e-06 F"]
    assert dimension_of("V") == "voltage" and dimension_of("W") == "power"
    asked = parse("voltage>2 kV")
    assert (asked.dimension, asked.unit, asked.lo) == ("voltage", "V", 2000.0)
