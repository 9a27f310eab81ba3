"""Quantities as filters (``--quantity``) and as a facet, on a small index of the quantity
recognizer alone: values compared in SI by dimension, a stated range kept when it overlaps
what is asked, and every bad filter one clear error."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from helpers import unchanged

from kbx.errors import BadArgument, SchemaError
from kbx.indexing.ingest import index
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.quantity_filter import (
    DIMENSIONS,
    bin_filter,
    bin_label,
    parse,
    stored,
    written,
)
from kbx.recognizers.registry import Registry
from kbx.search.filters import Filters
from kbx.search.grep import grep
from kbx.search.search import search
from kbx.store.consistency import contents
from kbx.store.db import Index
from kbx.store.schema import SCHEMA_VERSION

DOCS = {
    "heavy.md": "The parcel weighs 1500 g.",
    "light.md": "The parcel weighs 900 g.",
    "range.md": "A parcel of 0.5–2 kg holds a 4 GB disk.",
    "one.md": "The parcel weighs 1 kg.",
    "gib.md": "The parcel image is 4 GiB.",
    "warm.md": "Keep the parcel at 37 °C.",
    "hot.md": "The parcel oven reaches 451 °F.",
    "cold.md": "The parcel freezer holds 250 K.",
    "share.md": "The parcel share is 31 %.",
    "trace.md": "The parcel trace is 5 ppm.",
    "price.md": "The parcel costs $1,200.",
    "none.md": "The parcel has no measure at all.",
}


def build(root: Path, docs: dict[str, str]) -> Index:
    root.mkdir(parents=True)
    for name, text in docs.items():
        (root / name).write_text(f"# {name}\n\n{text}\n")
    index(root, registry=Registry([QuantityRecognizer()]))
    return Index.for_root(root)


@pytest.fixture(scope="module")
def parcels(tmp_path_factory) -> Index:
    with unchanged(build(tmp_path_factory.mktemp("q") / "docs", DOCS)) as idx:
        yield idx


def paths(idx: Index, *quantities: str) -> set[str]:
    hits = search(idx, "parcel", k=100, exact=0, filters=Filters(quantities=list(quantities)))
    return {h.path for h in hits.hits}


@pytest.mark.parametrize(
    ("asked", "kept"),
    [  # 1500 g, 900 g, 0.5–2 kg, 1 kg
        ("mass>1kg", {"heavy.md", "range.md"}),
        ("mass>=1kg", {"heavy.md", "range.md", "one.md"}),
        ("mass<1kg", {"light.md", "range.md"}),
        ("mass<=1kg", {"light.md", "range.md", "one.md"}),
        ("mass=1kg", {"range.md", "one.md"}),
        ("mass=1.5kg", {"heavy.md", "range.md"}),
        ("mass=1.2kg..1.4kg", {"range.md"}),  # only the stated range meets it
        ("mass=1..1.5 kg", {"heavy.md", "range.md", "one.md"}),  # both ends count
        ("mass=3kg..5kg", set()),
        ("mass>1000 g", {"heavy.md", "range.md"}),  # converted: 1000 g is 1 kg
        ("mass>1 lb", {"heavy.md", "light.md", "range.md", "one.md"}),  # 0.454 kg
        (">1kg", {"heavy.md", "range.md"}),  # a bare unit names its dimension
        ("[mass]>1kg", {"heavy.md", "range.md"}),  # pint's name of it
    ],
)
def test_each_operator_compares_in_si_and_a_range_counts_when_it_overlaps(parcels, asked, kept):
    assert paths(parcels, asked) == kept


@pytest.mark.parametrize(
    ("asked", "kept"),
    [  # 37 °C = 310.15 K, 451 °F = 505.93 K, 250 K
        ("temperature>36°C", {"warm.md", "hot.md"}),
        ("temperature<0 °C", {"cold.md"}),
        ("temperature>=98.6 °F", {"warm.md", "hot.md"}),  # 98.6 °F is exactly 37 °C
        ("temperature>98.6 °F", {"hot.md"}),
        ("temperature=310.15 K", {"warm.md"}),
        ("temperature>400 K", {"hot.md"}),
    ],
)
def test_temperatures_compare_in_kelvin_from_celsius_fahrenheit_and_kelvin(parcels, asked, kept):
    assert paths(parcels, asked) == kept


@pytest.mark.parametrize(
    ("asked", "kept"),
    [  # GB is 10^9 bytes and GiB 2^30, as pint reads them: 4 GiB is above 4 GB
        ("size<=4GB", {"range.md"}),
        ("size>4GB", {"gib.md"}),
        ("size>=4GiB", {"gib.md"}),
        ("data=4GB", {"range.md"}),
        ("size>3.9 GiB", {"gib.md"}),  # 3.9 GiB is 4.19e9 B: above 4 GB
        ("size>3.7 GiB", {"range.md", "gib.md"}),  # 3.97e9 B: below 4 GB
    ],
)
def test_data_sizes_read_gb_as_decimal_and_gib_as_binary(parcels, asked, kept):
    assert paths(parcels, asked) == kept


def test_percent_and_money(parcels):
    assert paths(parcels, "percent>30") == {"share.md"}
    assert paths(parcels, "percent=30..40") == {"share.md"}  # bare numbers, in percent
    assert paths(parcels, "<1%") == {"trace.md"}  # 5 ppm is 0.0005 %
    assert paths(parcels, "usd>1000") == {"price.md"}
    assert paths(parcels, "money>=$1,200") == {"price.md"}
    assert paths(parcels, "money>1300 USD") == set()


def test_several_quantity_filters_all_must_match(parcels):
    assert paths(parcels, "mass>1kg", "size<=4GB") == {"range.md"}
    assert paths(parcels, "mass>1kg", "size>4GB") == set()


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("mass>4GB", "--quantity 'mass>4GB': 4GB is data (B), not mass (kg) (e.g. mass>1kg"),
        ("mass>5 blorps", "--quantity 'mass>5 blorps': unknown unit 'blorps': neither"),
        ("mass>>1kg", "--quantity 'mass>>1kg': '>1kg' is not a number with a unit (e.g."),
        ("mass 1kg", "--quantity 'mass 1kg': write [DIMENSION] OP VALUE (e.g. mass>1kg"),
        ("weight>1kg", "--quantity 'weight>1kg': unknown dimension 'weight'; use mass, length"),
        ("mass>1", "--quantity 'mass>1': give 1 a unit, e.g. 1kg or 1 GB"),
        ("mass>1kg..5kg", "--quantity 'mass>1kg..5kg': a range takes =, as in mass=1kg..5kg"),
        ("mass=5kg..1kg", "the range's low end is above its high end"),
        ("money>1000", "money takes a currency, as in money>=USD 1000 or usd>=1000"),
        ("eur>5", "--quantity 'eur>5': no passage mentions money (EUR); passages by dimension:"),
        ("length>1 m", "no passage mentions length (m); passages by dimension: mass (kg) 4,"),
    ],
)
def test_a_bad_filter_is_one_clear_line_with_the_right_form(parcels, asked, said):
    with pytest.raises(BadArgument) as e:
        paths(parcels, asked)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_grep_takes_the_filter(parcels):
    g = grep(parcels, "parcel", filters=Filters(quantities=["mass>1kg"]), max_matches=50)
    assert {m.path for m in g.matches} == {"heavy.md", "range.md"}


def _bins(facet: dict) -> list[tuple]:
    return [(b["from"], b["to"], b["count"]) for b in facet["bins"]]


def test_the_facet_counts_passages_per_dimension_with_a_histogram(parcels):
    r = search(parcels, "parcel", k=1, exact=0, facets=True)
    got = {q["dimension"]: q for q in r.facets.quantities.values}
    assert {d: q["count"] for d, q in got.items()} == {
        "mass": 4,
        "temperature": 3,
        "data": 2,
        "percent": 2,
        "money": 1,
    }
    # a passage counts in each bin its quantities overlap: 0.5–2 kg in both
    assert _bins(got["mass"]) == [("1 g", "1 kg", 2), ("1 kg", "1 t", 3)]
    assert _bins(got["temperature"]) == [
        (None, "0 °C", 1),
        ("0 °C", "100 °C", 1),
        ("100 °C", "1000 °C", 1),
    ]
    assert _bins(got["data"]) == [("1 GB", "1 TB", 2)]
    # the bins between the first and the last that hold any are shown, empty or not
    assert _bins(got["percent"]) == [(None, "0.1 %", 1), ("0.1 %", "1 %", 0),
                                     ("1 %", "10 %", 0), ("10 %", "100 %", 1)]  # fmt: skip
    assert _bins(got["money"]) == [("USD 1,000", "USD 1 million", 1)]
    assert got["mass"]["unit"] == "kg" and got["mass"]["bins"][0]["lo"] == 0.001
    assert [b["filter"] for b in got["mass"]["bins"]] == [
        "mass=0.001 kg..0.999999 kg",
        "mass=1 kg..999.999 kg",
    ]
    for q in got.values():  # choosing a bin returns what it counts, edges included (1 kg)
        for b in q["bins"]:
            assert len(paths(parcels, b["filter"])) == b["count"], b


def test_under_a_quantity_filter_the_facet_counts_only_what_it_kept(parcels):
    r = search(
        parcels, "parcel", k=1, exact=0, facets=True, filters=Filters(quantities=["mass>1kg"])
    )
    mass, data = r.facets.quantities.values  # the range's passage holds 4 GB too
    assert r.facets.passages == 2 and (mass["count"], data["count"]) == (2, 1)
    assert _bins(mass) == [("1 g", "1 kg", 1), ("1 kg", "1 t", 2)]  # the range, and both


def test_the_filter_reads_values_as_the_recognizer_stores_them():
    assert parse("size<=4GB").lo == 4e9 and parse("size<=4GiB").lo == 4.29497e9
    assert parse("temperature>37°C").lo == 310.15 == parse("temperature>98.6°F").lo
    assert parse("speed>10 km/h").unit == "m / s" and parse("speed>10 km/h").lo == 2.77778
    assert parse(">5 mg").dimension == "mass" and parse(">5 mg").lo == 5e-06
    assert (parse("mass=5–10 mg").lo, parse("mass=5–10 mg").hi) == (5e-06, 1e-05)
    assert parse("length>3 furlong").lo == 603.505  # a unit only pint knows


def test_an_index_of_schema_5_gains_the_table_on_its_next_write(tmp_path):
    docs = {"heavy.md": DOCS["heavy.md"], "light.md": DOCS["light.md"]}
    idx = build(tmp_path / "old", docs)
    con = duckdb.connect(str(idx.db))  # as kbx wrote it at schema 5
    con.execute("DROP TABLE passage_quantities")
    con.execute("DELETE FROM kbx_meta WHERE key = 'entities_dirty'")
    con.execute("UPDATE kbx_meta SET value = '5' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(SchemaError, match=f"version 5, this kbx reads {SCHEMA_VERSION}; run `kbx"):
        paths(idx, "mass>1kg")
    report = index(idx.root, registry=Registry([QuantityRecognizer()]))
    assert report.unchanged == 2  # nothing read again: the table comes from the mentions
    assert paths(idx, "mass>1kg") == {"heavy.md"}
    fresh = build(tmp_path / "fresh", docs)
    with idx.reader() as old, fresh.reader() as new:
        assert contents(old) == contents(new)
        assert old.execute("SELECT count(*) FROM passage_quantities").fetchone() == (2,)


def test_stored_values_are_read_as_the_recognizer_writes_them_and_others_left_out():
    assert stored("QUANTITY", "5e-06..1e-05 kg") == ("mass", "kg", 5e-06, 1e-05)
    assert stored("QUANTITY", "2.77778 m / s") == ("speed", "m / s", 2.77778, 2.77778)
    assert stored("QUANTITY", "3 kg / m ** 2") == ("kg/m²", "kg / m ** 2", 3.0, 3.0)
    assert stored("MONEY", "USD 1234567.8") == ("money", "USD", 1234567.8, 1234567.8)
    for type_, value in (("QUANTITY", "about 5 kg"), ("QUANTITY", None), ("MONEY", "$5")):
        assert stored(type_, value) is None  # a plugin's own format: not filterable, no error


@pytest.mark.parametrize(
    "unit",
    sorted({*DIMENSIONS.values(), "kg / m ** 2", "1 / m", "1 / m / s", "m / s ** 2"} - {"%"}),
)
def test_units_are_shown_as_written_and_read_back_as_stored(unit):
    shown = written(unit)
    assert "**" not in shown and " / " not in shown  # pint's expression never shows
    assert parse(f">1 {shown}").unit == unit  # what a facet shows is a filter that works
    dimension = stored("QUANTITY", f"3 {unit}")[0]
    asked = parse(bin_filter(dimension, unit, 1.0, 10.0))  # a histogram bin's --quantity
    assert (asked.unit, asked.lo, asked.hi) == (unit, 1.0, 9.99999)


def test_bins_of_a_unit_with_no_name_read_as_numbers():
    assert written("kg * m ** 2 / A / s ** 3") == "kg·m²/(A·s³)"
    assert bin_label("kg/m²", "kg / m ** 2", "1000") == "1000 kg/m²"
