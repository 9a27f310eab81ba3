"""TIMEX values that real text produced and resolve once failed on."""

from __future__ import annotations

from datetime import date

from kbx.timex import resolve


def test_a_fractional_offset_resolves_to_nothing_instead_of_failing():
    # "4.2 years later" in a SciFact abstract stopped a whole `kbx index` in the context pass
    assert resolve("REL:Y+4.2", date(2020, 5, 1)) is None
    assert resolve("REL:D-1.5", date(2020, 5, 1)) is None
    assert resolve("REL:Y+4", date(2020, 5, 1)) == "2024"
