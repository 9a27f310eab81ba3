"""Dates a section gives its passages: its heading's, or its signed closing line's, down to
its last passage; the nearest dated heading wins; an unsigned last line dates nothing."""

from __future__ import annotations

from datetime import date

from helpers import attached

from kbx.indexing.ingest import index
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

ITEMS = "\n\n".join(
    f"- Item {i}: the parser now handles case number {i} of the long list of changes."
    for i in range(40)
)
NOTES = f"""# Release notes

## 2.3.0 (2024-06-01)

{ITEMS}

### Security (2024-06-20)

- A fix for the header parser.

## 2.2.0

- Fixed a crash on empty files.

The crash was first reported in 2019.
"""
ENTRIES = "\n".join(
    f"  * Fix number {i} of the many crashes found by fuzzing the parser." for i in range(60)
)
CHANGELOG = f"""pkg (1.2-1) unstable; urgency=medium

{ENTRIES}

 -- Ann Smith <ann@example.org>  Mon, 03 Jun 2024 10:00:00 +0200

pkg (1.1-1) unstable; urgency=low

  * Initial release.

 -- Ann Smith <ann@example.org>  Tue, 02 Jan 2018 10:00:00 +0200
"""


def _dates(root) -> dict[tuple[str, int], set[date]]:
    """Each passage's own dates (not its document's), by file and ordinal."""
    with attached(Index.for_root(root).db) as con:
        rows = con.execute(
            """SELECT d.path, pl.ordinal, list(x.lo) FILTER (WHERE x.lo IS NOT NULL)
               FROM placements pl JOIN documents d USING (doc_id)
               LEFT JOIN passage_dates x ON x.doc_id = pl.doc_id AND x.unit_id = pl.unit_id
               GROUP BY ALL"""
        ).fetchall()
    return {(path, ordinal): set(days or ()) for path, ordinal, days in rows}


def test_sections_date_every_passage_below_them(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "NOTES.md").write_text(NOTES)
    (root / "changelog.txt").write_text(CHANGELOG)
    index(root, registry=Registry([DateRecognizer()]))
    dates = _dates(root)
    notes = [dates[k] for k in sorted(k for k in dates if k[0] == "NOTES.md")]
    release = [d for d in notes if date(2024, 6, 1) in d]
    assert len(release) >= 2  # the section runs over several passages, each dated
    assert {date(2024, 6, 20)} in notes  # the nearer dated heading, not its parent's
    assert notes[0] == set()  # the title above every dated heading
    assert notes[-1] == {date(2019, 1, 1)}  # an undated section: only what it mentions
    log = [dates[k] for k in sorted(k for k in dates if k[0] == "changelog.txt")]
    assert len(log) >= 3
    assert all(d == {date(2024, 6, 3)} for d in log[:-1])  # the entry, by its closing line
    assert log[-1] == {date(2018, 1, 2)}


GNU_NEWS = f"""GNU frob NEWS                                    -*- outline -*-

* Noteworthy changes in release 1.12 (2022-04-07) [stable]

{ITEMS}

* Version 1.11 (released 2021-09-03)

** Bug fixes

  frob no longer crashes on an empty file.
"""


def test_a_news_files_release_lines_date_their_sections(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "NEWS").write_text(GNU_NEWS)
    index(root, registry=Registry([DateRecognizer()]))
    news = [d for k, d in sorted(_dates(root).items())]
    assert news[0] == set()  # the file's title line, above every release
    assert len(news) >= 4 and all(d == {date(2022, 4, 7)} for d in news[1:-1])
    assert news[-1] == {date(2021, 9, 3)}


def test_a_layer_an_older_kbx_built_is_rebuilt_by_the_next_index(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "NOTES.md").write_text(NOTES)
    index(root, registry=Registry([DateRecognizer()]))
    built = _dates(root)
    with attached(Index.for_root(root).db, read_only=False) as con:
        con.execute("DELETE FROM passage_dates")  # as an older kbx's rules left it
        con.execute("UPDATE kbx_meta SET value = '1' WHERE key = 'layer'")
    assert all(not d for d in _dates(root).values())
    index(root, registry=Registry([DateRecognizer()]))  # no file changed
    assert _dates(root) == built
