"""Quantities in SI base units and money as currency and amount; bare numbers are not quantities."""

from __future__ import annotations

import pytest

from kbx.recognizers.quantities import QuantityRecognizer


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


@pytest.mark.parametrize("text", ["version 1.2 in 2021", "in the 1990s", "5 of 10", "Plan B"])
def test_numbers_without_units_are_not_quantities(text):
    assert _found(text) == []
