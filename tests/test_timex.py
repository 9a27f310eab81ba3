"""TIMEX values that real text produced and resolve once failed on."""

from __future__ import annotations

from datetime import date

from kbx.timex import resolve


def test_a_fractional_offset_resolves_to_nothing_instead_of_failing():
    # "4.2 years later" in a SciFact abstract stopped a whole `kbx index` in the context pass
    assert resolve("REL:Y+4.2", date(2020, 5, 1)) is None
    assert resolve("REL:D-1.5", date(2020, 5, 1)) is None
    assert resolve("REL:Y+4", date(2020, 5, 1)) == "2024"


def test_thanksgiving_is_the_nearest_one():
    # an article of 7 January 2000 means the Thanksgiving just past, not the next
    assert resolve("REL:THANKSGIVING", date(2000, 1, 7)) == "1999-11-25"
    assert resolve("REL:THANKSGIVING", date(2000, 11, 1)) == "2000-11-23"


def test_a_time_on_a_relative_day_needs_the_day():
    assert resolve("REL:D-1@TMO", date(2020, 5, 1)) == "2020-04-30TMO"
    assert resolve("REL:WD:0:>@T09:00", date(2020, 5, 1)) == "2020-05-04T09:00"
    assert resolve("REL:WD:0:>@T09:00", None) is None


def test_a_shift_from_an_earlier_date_needs_that_precision():
    doc = date(2000, 3, 1)
    assert resolve("REL:ANA:M:+1:1998-12", doc) == "1999-01"
    assert resolve("REL:ANA:D:+1:1998", doc) is None  # "the next day" after "in 1998"
    assert resolve("REL:ANA:Y:+0:WD:1:<", doc) == "2000"  # from a weekday, resolved first


def test_a_clock_time_after_a_coarser_date_is_on_the_documents_day():
    assert resolve("REL:ANAT:09:00:1995", date(1998, 8, 8)) == "1998-08-08T09:00"
    assert resolve("REL:ANAT:09:00:1998-08-07", date(1998, 8, 8)) == "1998-08-07T09:00"
