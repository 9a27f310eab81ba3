"""The rules a recognizer declares for inline code and table cells, applied by kbx to every run."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.base import Mention, RecognizerInfo, within_rules
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

# What issue 13 found recognizers reading in inline code, each also written as plain text.
EXAMPLES = ["\\x1b\\[31m", "0B 9B", "%5B", "1L", "MONDAY", "RFC 2060"]
BOGUS = {"31m", "0B", "9B", "5B", "1L", "MONDAY"}  # "RFC 2060": no year even as text (v9)
DOC = (
    "# In code\n\nWrote "
    + ", ".join(f"`{x.replace(chr(92) + '[', '[')}`" for x in EXAMPLES)
    + "; cited `doi:10.1000/xyz123`; waited `30` seconds.\n\n"
    "# As text\n\nWrote " + ", ".join(EXAMPLES) + ".\n\n"
    "# Table\n\n| Timeout | 5 |\n|---|---|\n| seconds | March 3 |\n| 2021 | x |\n\n"
    "# Prose\n\nTimeout 5\nseconds, March 3\n2021.\n"
)


def _registry() -> Registry:
    return Registry([DateRecognizer(), QuantityRecognizer(), IdentifierRecognizer()])


def _mentions(root: Path) -> set[tuple[str, str, str]]:
    """(first heading, recognizer, text) of every stored mention."""
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT u.heading_path[1], m.recognizer, m.text FROM mentions m JOIN units u USING "
        "(unit_hash)"
    ).fetchall()
    con.close()
    return set(rows)


def _docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir(parents=True)
    (root / "a.md").write_text(DOC)
    return root


def test_dates_and_quantities_stay_out_of_inline_code_and_table_cells(tmp_path):
    root = _docs(tmp_path)
    index(root, registry=_registry())
    found = _mentions(root)
    as_text = {t for h, r, t in found if h == "As text" and r in ("dates", "quantities")}
    assert as_text >= BOGUS  # the recognizers still read this text outside code
    assert "2060" not in {t for _, _, t in found}
    in_code = {(r, t) for h, r, t in found if h == "In code"}
    assert in_code == {
        ("identifiers", "10.1000/xyz123"),  # a DOI in backticks is a DOI
        ("quantities", "30 seconds"),  # only partly code: a real measure
        ("dates", "30 seconds"),  # and a duration
    }
    table = "Timeout | 5\nseconds | March 3\n2021 | x"
    raw = {m.text for r in _registry() for m in r.recognize([table])[0]}
    assert {"5\nseconds", "March 3\n2021"} <= raw  # what the recognizers read across rows
    kept = {(r, t) for h, r, t in found if h == "Table"}
    assert kept == {("dates", "March 3"), ("dates", "2021")}  # each in its own cell
    prose = {(r, t) for h, r, t in found if h == "Prose"}  # one paragraph: one date
    assert prose >= {("quantities", "5 seconds"), ("dates", "March 3 2021")}


class Pattern:
    """Finds a regex; declares the rules it is given (none by default, as a plugin might)."""

    PATTERN = re.compile(r"tool\n\ncedar|x\ny|cedar")

    def __init__(self, name: str, **rules):
        self.info = RecognizerInfo(name=name, version="1", types=("X",), **rules)

    def recognize(self, texts):
        return [[_m(*m.span(), m.group()) for m in self.PATTERN.finditer(t)] for t in texts]


def test_a_recognizer_reads_code_and_crosses_cells_unless_it_declares_otherwise(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "b.md").write_text("# C\n\nthe `cedar` tool\n\n| cedar | x |\n|-|-|\n| y | cedar |\n")
    strict = Pattern("strict", inline_code=False, cross_cells=False)
    index(root, registry=Registry([Pattern("plugin"), strict]))
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True)
    sql = "SELECT text FROM mentions WHERE recognizer = ? ORDER BY start_char"
    plugin, strict_found = (con.execute(sql, [n]).fetchall() for n in ("plugin", "strict"))
    con.close()
    assert plugin == [("cedar",), ("tool\n\ncedar",), ("x\ny",), ("cedar",)]
    assert strict_found == [("cedar",)]  # the last cell's: the other two are code, or cross


def test_reprocess_applies_the_same_rules_as_index(tmp_path):
    first = _docs(tmp_path / "one")
    index(first, registry=_registry())
    later = _docs(tmp_path / "two")
    index(later, registry=Registry([IdentifierRecognizer()]))
    assert {r for _, r, _ in _mentions(later)} == {"identifiers"}
    reprocess(Index.for_root(later), _registry())
    sql = "SELECT * EXCLUDE (confidence) FROM mentions ORDER BY ALL"
    rows = []
    for root in (first, later):
        con = duckdb.connect(str(root / ".kbx" / "index.duckdb"), read_only=True)
        rows.append(con.execute(sql).fetchall())
        con.close()
    assert rows[0] == rows[1] and len(rows[0]) > 10


def _m(start: int, end: int, text: str) -> Mention:
    return Mention(start, end, "X", text)


def test_a_break_is_crossed_only_by_a_mention_that_holds_it():
    info = RecognizerInfo(name="strict", version="1", types=("X",), cross_cells=False)
    text = "a 5 | 6 b\nc\n\nd"
    found = [_m(2, 3, "5"), _m(2, 7, "5 | 6"), _m(6, 11, "6 b\nc"), _m(10, 14, "c\n\nd")]
    assert within_rules(info, text, found, breaks=[4, 9]) == [found[0]]
    assert within_rules(info, text, found[:1] + found[3:]) == found[:1]  # a blank line
    anything = RecognizerInfo(name="plugin", version="1", types=("X",))
    assert within_rules(anything, text, found, [(0, 14)], [4, 9]) == found


def test_inline_code_drops_only_what_lies_wholly_inside():
    info = RecognizerInfo(name="strict", version="1", types=("X",), inline_code=False)
    text = "wait 30 seconds"
    found = [_m(5, 7, "30"), _m(5, 15, "30 seconds"), _m(8, 15, "seconds")]
    assert within_rules(info, text, found, code_spans=[(5, 7)]) == found[1:]
    assert within_rules(info, text, found, code_spans=[(0, 15)]) == []
