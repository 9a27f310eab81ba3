"""Filters hold on one placement: a passage shared by two documents passes two filters only
where one of its documents meets both (the allowed set is an intersection of placements,
not of units)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbx.indexing.ingest import index
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.bm25 import rank
from kbx.search.filters import Filters, compile_filters
from kbx.search.search import search
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

SHARED = "The quince orchard report covers grafting and frost.\n"


@pytest.fixture
def shared(tmp_path: Path) -> Index:
    root = tmp_path / "root"
    root.mkdir()
    for name, author, day in (("a.md", "Ann Lee", "2021-05-01"), ("b.md", "Bo Chen", "2023-05-01")):
        (root / name).write_text(f"---\nauthor: {author}\ndate: {day}\n---\n{SHARED}")
    idx = Index.for_root(root)
    index(root, registry=Registry([IdentifierRecognizer(), DateRecognizer()]))
    return idx


@pytest.mark.parametrize(
    ("asked", "paths"),
    [
        (Filters(entities=["Ann Lee"]), ["a.md"]),
        (Filters(after="2023"), ["b.md"]),
        (Filters(entities=["Ann Lee"], after="2021", before="2021"), ["a.md"]),
        (Filters(after="2021-05-01", before="2021-05-01"), ["a.md"]),  # on that day
        (Filters(before="2023-04-30"), ["a.md"]),
        (Filters(after="2023-05", before="2023-05"), ["b.md"]),
        (Filters(entities=["Ann Lee"], after="2023"), []),  # each holds, never together
        (Filters(path="b*", entities=["Bo Chen"]), ["b.md"]),
    ],
)
def test_filters_meet_on_one_placement(shared: Index, asked: Filters, paths: list[str]):
    with shared.reader() as con:
        assert con.execute("SELECT count(*) FROM units").fetchone()[0] == 1
        ranked, total = rank(con, analyzer_of(con).query("quince"), compile_filters(con, asked))
    assert total == len(ranked) == min(1, len(paths))
    r = search(shared, "quince", filters=asked, exact=0)
    assert [h.path for h in r.hits] == paths[:1] and r.total == total
