"""The unit table: a prefix-tree pattern that keeps the longest form, pint expressions of
written units, and SI values."""

from __future__ import annotations

import re

import pytest

from kbx.recognizers.units import ALL_SYMBOLS, WORDS, pint_expr, si, trie


def test_the_tree_matches_each_form_whole_and_nothing_else():
    forms = ["m", "mm", "mmol", "min", "ms", "°", "°C", "per cent"]
    rx = re.compile(trie(forms))
    assert [rx.match(f).group() for f in forms] == forms
    assert rx.match("x") is None and rx.match("mi").group() == "m"


def test_every_listed_unit_is_found_whole_and_known_to_pint():
    symbols, words = re.compile(trie(ALL_SYMBOLS)), re.compile(trie(WORDS))
    assert [s for s in ALL_SYMBOLS if symbols.match(s).group() != s] == []
    assert [w for w in WORDS if words.match(w).group() != w] == []
    assert [s for s in ALL_SYMBOLS if not si(1, 1, pint_expr(s))] == []


@pytest.mark.parametrize(
    ("written", "expr"),
    [
        ("m s−1", "meter * second ** -1"),
        ("mg cm− 2", "milligram * centimeter ** -2"),
        ("µmol/L", "micromole * liter ** -1"),
        ("km²", "kilometer ** 2"),
        ("°C/min", "delta_degC * minute ** -1"),
        ("cells/mL", "milliliter ** -1"),
        ("cm2/Vs", "centimeter ** 2 * (volt*second) ** -1"),
        ("% per year", "percent * year ** -1"),
    ],
)
def test_written_units_as_pint_expressions(written, expr):
    assert pint_expr(written) == expr


@pytest.mark.parametrize(
    ("low", "high", "expr", "value"),
    [
        (5, 5, "milligram", "5e-06 kg"),
        (5, 10, "milligram", "5e-06..1e-05 kg"),
        (37, 37, "degC", "310.15 K"),
        (2, 2, "gigabyte", "2e+09 B"),
        (64, 64, "kibibyte", "65536 B"),
        (3, 3, "ppm", "0.0003 %"),
        (1, 1, "ppt", "1e-10 %"),  # parts per trillion, not pint's picopint
        (90, 90, "degree", "1.5708 rad"),
        (2, 2, "decade_of_years", "6.31152e+08 s"),
    ],
)
def test_si_values(low, high, expr, value):
    assert si(low, high, expr) == value
