"""Property tests: every rule recognizer and every resolver, on arbitrary text and numbers,
raises nothing, gives exact spans, and makes no value off the calendar or the floats (issue
40: one "359,000 Week Ago" stopped a whole `kbx index`). Bounded, a few seconds in all."""

from __future__ import annotations

import math
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer, finite, number
from kbx.recognizers.quantity_filter import stored
from kbx.recognizers.references import ReferenceRecognizer
from kbx.recognizers.registry import Registry
from kbx.timex import interval, resolve

QUICK = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))

BUILT_IN = [DateRecognizer(), QuantityRecognizer(), IdentifierRecognizer(), ReferenceRecognizer()]
# and every other installed recognizer but the models (the test plugin's among them)
RULES = BUILT_IN + [
    r
    for r in Registry.load()
    if not r.info.slow and r.info.name not in {b.info.name for b in BUILT_IN}
]

# Words the rules look for, so that arbitrary text often holds a candidate of each.
_WORDS = (
    "week weeks Week Ago ago years year months days hours decades century from now last next "
    "the that day later earlier quarter Q1 half spring fiscal December Dec. 6 Tuesday noon "
    "3 p.m. '90s 1996 2021-03-04 9999 0 1.5 359,000 million GB kg mg/kg °C % $ USD € "
    "× 10^400 1e400 ± to - , . | doi:10.1000/xyz ISBN 978-3-16-148410-0 ISSN 2049-3630 "
    "arXiv:2101.00001 CVE-2021-44228 0000-0002-1825-0097 @article{ key, author = } "
    "et al. (2020) Journal vol. pp."
)
WORDS = _WORDS.split()
NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 10**400),
)
UNITS = ["Week Ago", "years ago", "weeks ago", "days ago", "months from now", "hours ago"]
UNITS += ["quarters ago", "decades ago", "years earlier", "kg", "GB", "%", "× 10^5 m", "million"]


def _number(n: int | float) -> str:
    return f"{n:,}" if isinstance(n, int) else repr(n)


TEXTS = st.one_of(
    st.text(max_size=120),
    st.lists(st.sampled_from(WORDS), max_size=16).map(" ".join),
    st.tuples(NUMBERS, st.sampled_from(UNITS)).map(lambda t: f"{_number(t[0])} {t[1]}"),
    st.tuples(st.lists(st.sampled_from(WORDS), max_size=6), NUMBERS, st.sampled_from(UNITS)).map(
        lambda t: f"{' '.join(t[0])} {_number(t[1])} {t[2]}\n{'|'.join(t[0])}"
    ),
)
DAYS = st.one_of(st.dates(), st.sampled_from([date.min, date.max, date(1996, 12, 6)]))


@pytest.mark.parametrize("r", RULES, ids=lambda r: r.info.name)
@QUICK
@given(texts=st.lists(TEXTS, min_size=1, max_size=3), day=DAYS)
def test_a_rule_recognizer_raises_nothing_and_its_spans_are_exact(r, texts, day):
    found = r.recognize(texts)
    assert len(found) == len(texts)
    for text, mentions in zip(texts, found, strict=True):
        for m in mentions:
            assert 0 <= m.start < m.end <= len(text)
            assert text[m.start : m.end] == m.text
            assert m.type in r.info.types
            assert m.value is None or isinstance(m.value, str)
            if m.type in ("QUANTITY", "MONEY"):  # a value a filter reads, on the floats
                assert stored(m.type, m.value) is not None, m
                assert all(map(math.isfinite, stored(m.type, m.value)[2:])), m
            if r.info.needs_context:
                _on_the_calendar(r.resolve(m.value, day))
            _on_the_calendar(m.value)


def _on_the_calendar(value: str | None) -> None:
    """A value is None or a string, and the days it covers (if any) are on the calendar."""
    assert value is None or isinstance(value, str)
    days = interval(value)
    assert days is None or date.min <= days[0] < days[1] <= date.max


# Relative codes as the date recognizer writes them, with any number in them.
CODES = st.one_of(
    st.tuples(st.sampled_from("DWMYQH"), st.sampled_from("+-"), NUMBERS).map(
        lambda t: f"REL:{t[0]}{t[1]}{abs(t[2])}"
    ),
    st.tuples(st.sampled_from(["DE", "WE", "HY", "S:SP:", "MY:06:", "QN:"]), NUMBERS).map(
        lambda t: f"REL:{t[0]}{t[1]:+}" if isinstance(t[1], int) else f"REL:{t[0]}{t[1]}"
    ),
    st.tuples(st.sampled_from("YMWD"), st.integers(-(10**6), 10**6), st.text(max_size=12)).map(
        lambda t: f"REL:ANA:{t[0]}:{t[1]:+d}:{t[2]}"
    ),
    st.sampled_from(
        ["REL:THANKSGIVING", "REL:MD:02-29", "REL:MON:12:<", "REL:MON:01:>", "REL:WE:~"]
        + ["REL:WD:3:-", "REL:WD:6:+@T09:00", "REL:ANAT:09:00:9999-12-31", "REL:TOD:MO:-1"]
    ),
    st.text(max_size=20).map("REL:".__add__),
    st.text(max_size=20),
)


@QUICK
@given(value=st.one_of(CODES, st.none()), day=st.one_of(DAYS, st.none()))
def test_resolving_any_value_on_any_day_raises_nothing_and_stays_on_the_calendar(value, day):
    resolved = resolve(value, day)
    assert resolved == DateRecognizer().resolve(value, day)
    if value is not None and value.startswith("REL:") and resolved is not None:
        _on_the_calendar(resolved)
        assert not resolved.startswith("-")


@QUICK
@given(value=st.text(max_size=24))
def test_any_string_reads_as_days_or_none(value):
    _on_the_calendar(value)


NUMERALS = st.one_of(
    NUMBERS.map(_number),
    st.tuples(NUMBERS, st.integers(-(10**5), 10**5)).map(lambda t: f"{_number(t[0])} × 10^{t[1]}"),
    st.sampled_from(["two", "~5", "≈3", "−3.5", "6×10⁶", "3·5", "1,200"]),
)


@QUICK
@given(text=NUMERALS)
def test_a_number_as_written_is_a_float_or_refused_as_no_number(text):
    try:
        x = number(text)
    except ValueError:  # not a number as written: the pattern never gives one
        return
    assert isinstance(x, float)
    assert finite(repr(x)) == math.isfinite(x)


@QUICK
@given(type_=st.sampled_from(["QUANTITY", "MONEY", "DATE"]), value=st.text(max_size=30))
def test_a_stored_quantity_value_reads_or_is_none(type_, value):
    got = stored(type_, value)
    assert got is None or (len(got) == 4 and got[2] <= got[3])


def test_the_week_ago_column_resolves_to_no_day():
    """The reproducer's mention: 359,000 weeks before 1996 is off the calendar."""
    (m,) = [m for m in DateRecognizer().recognize(["Volume 359,000 Week Ago"])[0] if m.value]
    assert m.text == "359,000 Week Ago"
    assert resolve(m.value, date(1996, 12, 6)) is None
    assert resolve("REL:W-3", date(1996, 12, 6)) == "1996-W46"


def test_a_quantity_past_the_floats_is_no_mention():
    q = QuantityRecognizer()
    assert q.recognize(["1e400 kg", "$" + "9" * 400, "1e308 GB"]) == [[], [], []]
    assert [m.value for m in q.recognize(["5 kg"])[0]] == ["5 kg"]
    assert number("1 × 10^400") == math.inf
