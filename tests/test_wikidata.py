"""Reading Wikidata's entity JSON and SPARQL CSVs into gazetteer records, without an index:
the layouts, the P31 table, languages, filters, streaming, and bad input."""

from __future__ import annotations

import bz2
import json
import random

import pytest
from wikidata_fixtures import ADA, APPLE, APPLE_CORPS, FRUIT, entity, write_dump, write_entity_data

from kbx.errors import BadArgument
from kbx.gazetteer import wikidata as wd


def _read(path, fmt="wikidata", **kw):
    counts = wd.Counts()
    got = list(wd.records(path, fmt, wd.options(**kw), counts))
    return got, counts


def _names(got):
    return [(r.qid, r.label, r.aliases, r.type) for r in got]


EXPECTED = [
    ("Q312", "Apple Inc.", ("Apple Inc.", "Apple", "Apple Computer"), "ORG"),
    ("Q7259", "Ada Lovelace", ("Ada Lovelace", "Augusta Ada King"), "PERSON"),
]


@pytest.mark.parametrize("name", ["dump.json", "dump.json.bz2", "dump.json.gz"])
def test_a_dump_plain_or_compressed_gives_its_items(tmp_path, name):
    path = write_dump(tmp_path / name, [APPLE, FRUIT, ADA])
    got, counts = _read(path)
    assert _names(got) == EXPECTED
    assert (counts.read, counts.unmapped) == (3, 1)  # the fruit's class is not in the table


def test_json_lines_and_entity_data_read_alike(tmp_path):
    lines = tmp_path / "items.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in [APPLE, FRUIT, ADA]))
    data = write_entity_data(tmp_path / "Q312.json", [APPLE, FRUIT, ADA])
    for path in (lines, data):
        got, _ = _read(path)
        assert _names(got) == EXPECTED
    one = tmp_path / "one.json"  # an EntityData answer as the API sends it: one line
    one.write_text(json.dumps({"entities": {"Q312": APPLE}}))
    assert _names(_read(one)[0]) == EXPECTED[:1]


def test_types_come_from_p31_through_the_table_or_the_options(tmp_path):
    tricky = entity(
        "Q95",
        {"en": "Google"},
        classes=["Q5", "Q18388277", "Q4830453"],  # human (deprecated!), unmapped, business
        ranks={"Q5": "deprecated"},
    )
    preferred = entity(
        "Q2", {"en": "Earth"}, classes=["Q6256", "Q5107"], ranks={"Q5107": "preferred"}
    )
    prop = entity("P31", {"en": "instance of"}, kind="property")
    path = write_dump(tmp_path / "d.json", [tricky, preferred, FRUIT, prop])
    got, counts = _read(path)
    assert [(r.qid, r.type) for r in got] == [("Q95", "ORG"), ("Q2", "LOC")]
    assert (counts.unmapped, counts.not_items) == (1, 1)
    got, _ = _read(path, default_type="PRODUCT", mapping=["Q1364=PRODUCT"])
    assert [(r.qid, r.type) for r in got] == [("Q95", "ORG"), ("Q2", "LOC"), ("Q89", "PRODUCT")]
    got, counts = _read(path, only_types=["org"])
    assert [r.qid for r in got] == ["Q95"] and counts.filtered == 1


def test_labels_and_aliases_in_the_chosen_languages(tmp_path):
    path = write_dump(tmp_path / "d.json", [APPLE, entity("Q1", {"fr": "Univers"}, classes=["Q5"])])
    got, _ = _read(path, langs=["de", "en"])
    (apple, bad) = got
    assert apple.label == "Apple"
    assert apple.aliases == ("Apple", "Apple Inc.", "Apple Computer Inc.", "Apple Computer")
    assert isinstance(bad, wd.Bad) and (bad.line, bad.qid, bad.why) == (
        3,
        "Q1",
        "no label in de/en",
    )


def test_a_qid_filter_passes_over_other_lines_unparsed(tmp_path):
    broken = '{"type":"item","id":"Q999","labels": {oops'  # not JSON, and not wanted
    path = write_dump(tmp_path / "d.json", [APPLE, broken, ADA, "{also broken"])
    got, counts = _read(path, qids=["Q7259", "http://www.wikidata.org/entity/Q312"])
    assert [r.qid for r in got if isinstance(r, wd.Record)] == ["Q312", "Q7259"]
    (bad,) = [r for r in got if isinstance(r, wd.Bad)]  # no id to filter on: parsed, bad
    assert (bad.line, bad.why.split(" (")[0]) == (5, "not JSON")
    assert counts.filtered == 1
    qids = tmp_path / "wanted.txt"
    qids.write_text("# wanted\nQ7259\n\nQ312  # the company\n")
    assert wd.read_qids(qids) == ["Q7259", "Q312"]
    qids.write_text("Q7259\nApple\n")
    with pytest.raises(BadArgument, match=r"--qids wanted.txt, line 2: 'Apple' is not a Wikidata"):
        wd.read_qids(qids)


def test_a_dump_is_read_as_it_streams(tmp_path):
    """The first record comes after reading a sliver of the file, plain or bz2 (a block of
    it): the reader holds a line at a time, never the file."""
    rng = random.Random(7)  # varied names, so that bz2 cannot shrink the file to nothing
    many = [
        entity(f"Q{i}", {"en": f"{rng.getrandbits(64):x} {i}"}, {"en": [f"T{i}"]}, ["Q5"])
        for i in range(1, 2001)
    ]
    for name in ("big.json", "big.json.bz2"):
        path = write_dump(tmp_path / name, many)
        source = wd.Source(path)
        try:
            it = wd.read(source, name, "wikidata", wd.options(), wd.Counts())
            first = next(it)
            assert first.qid == "Q1"
            assert source.done() < source.size / 4, (name, source.done(), source.size)
        finally:
            source.close()


def test_a_sparql_csv(tmp_path):
    path = tmp_path / "query.csv"
    path.write_text(
        "qid,label,aliases,type\n"
        "http://www.wikidata.org/entity/Q312,Apple Inc.,Apple|Apple Computer,Q4830453\n"
        "Q7259,Ada Lovelace,,PERSON\n"
        "Q89,apple,apples,\n"
        'Q1,"Big, Co",,ORG\n'
        "Q2,Nowhere,,PLANET\n"
        "Apple,Apple,,ORG\n"
    )
    got, counts = _read(path, "csv")
    assert _names(got[:3]) == [
        EXPECTED[0],
        ("Q7259", "Ada Lovelace", ("Ada Lovelace",), "PERSON"),
        ("Q1", "Big, Co", ("Big, Co",), "ORG"),
    ]
    assert [(b.line, b.why.split(";")[0]) for b in got[3:]] == [
        (6, "unknown type 'PLANET'"),
        (7, "'Apple' is not a Wikidata item ID (Q followed by digits)"),
    ]
    assert counts.unmapped == 1  # the fruit has no type and there is no --type
    path.write_text("entry_id,name,type\ngz:a,A,ORG\n")
    with pytest.raises(BadArgument, match="the header must name qid and label"):
        _read(path, "csv")


def test_bad_files_are_one_clear_error(tmp_path):
    with pytest.raises(BadArgument, match="no such file"):
        _read(tmp_path / "nope.json")
    with pytest.raises(BadArgument, match="unknown format 'xml'; choose from wikidata, csv"):
        _read(tmp_path / "nope.json", "xml")
    (tmp_path / "empty.json").write_text("\n")
    with pytest.raises(BadArgument, match="empty.json: the file is empty"):
        _read(tmp_path / "empty.json")
    (tmp_path / "x.json").write_text("<html>\n")
    with pytest.raises(BadArgument, match=r"x.json, line 1: not Wikidata JSON"):
        _read(tmp_path / "x.json")
    cut = tmp_path / "cut.json.bz2"
    cut.write_bytes(bz2.compress(b"[\n" + json.dumps(APPLE).encode() * 50 + b"\n]\n")[:-40])
    with pytest.raises(BadArgument, match=r"cut.json.bz2, line \d+: cannot decompress"):
        _read(cut)
    (tmp_path / "l.json").write_bytes(b"[\n" + json.dumps(APPLE_CORPS).encode() + b",\n\xff\n]\n")
    with pytest.raises(BadArgument, match=r"l.json, line 3: not UTF-8"):
        _read(tmp_path / "l.json")
    with pytest.raises(BadArgument, match=r"--map 'Q5': write it as QID=TYPE"):
        wd.options(mapping=["Q5"])
    with pytest.raises(BadArgument, match=r"unknown type 'PLANET'"):
        wd.options(default_type="PLANET")
