"""The incremental entity layer (issue 43): after any sequence of edits, the layer a write
leaves (the stale documents' rows recomputed, or all of it) equals a whole rebuild of the
same store, table by table; an edit of one file takes the incremental path, a gazetteer
edit the whole rebuild."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from helpers import attached
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.annotate.setup import registry_for
from kbx.entities import build, incremental
from kbx.entities import gazetteer as gz
from kbx.entities.build import repair
from kbx.indexing.ingest import index
from kbx.recognizers.bylines import BylineRecognizer
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index, mark_stale, set_meta

# Lines that give every kind of row: dates (in a heading too), quantities, people who sign
# with one address under two spellings or two addresses under one, authors, identifiers,
# and names with short forms ("Foundation", "Lee") for the gazetteer's entries.
LINES = (
    "Released on 2024-06-01 with 5 MB of fixes.",
    "Contact Jane Roe <jane@example.org> for help.",
    "Signed-off-by: Jane Roe <jane.roe@example.com>",
    "Signed-off-by: J. Roe <jane@example.org>",
    " -- Ann Lee <ann@example.net>  Mon, 03 Jun 2024 10:00:00 +0200",
    "See doi:10.1000/xyz123 and the Node Foundation report.",
    "The Foundation met in March 2023; costs rose 10%.",
    "Ann Lee wrote 3 kg of notes on 12 May 2022.",
    "Lee reviewed it, and Jane Roe too.",
    "ORCID 0000-0002-1825-0097 is Ann Lee's.",
)
HEADINGS = ("## 1.0 (2024-01-15)", "## Notes", "## 2.0 (2025-02-01)")
AUTHORS = (None, "Ann Lee", "Jane Roe (@jroe)", "Node Foundation")
ENTRIES = (
    ("Node Foundation", "ORG", ["Node Foundation"]),
    ("Ann Lee", "PERSON", ["Ann Lee"]),
    ("Jane Roe", "PERSON", ["Jane Roe", "J. Roe"]),
)
NAMES = ("a.md", "b.md", "c.md", "d.md", "e.md", "f.md")

documents = st.builds(
    lambda author, sections: (
        (f"---\nauthor: {author}\n---\n" if author else "")
        + "\n\n".join(f"{h}\n\n" + "\n\n".join(lines) for h, lines in sections)
    ),
    st.sampled_from(AUTHORS),
    st.lists(
        st.tuples(st.sampled_from(HEADINGS), st.lists(st.sampled_from(LINES), max_size=3)),
        min_size=1,
        max_size=3,
    ),
)
KEYLESS = (LINES[0], LINES[6], "## 3.0 (2026-01-01)\n\nMore notes.")  # the common edit
steps = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), documents),
    st.tuples(st.just("append"), st.sampled_from(NAMES), st.sampled_from(KEYLESS)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.none()),
    st.tuples(st.just("move"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("add"), st.integers(0, len(ENTRIES) - 1), st.none()),
    st.tuples(st.just("retract"), st.integers(0, len(ENTRIES) - 1), st.none()),
)


def _registry(idx: Index) -> Registry:
    """The rule recognizers that key what the layer reads, and the index's gazetteer."""
    rules = [IdentifierRecognizer(), DateRecognizer(), BylineRecognizer(), QuantityRecognizer()]
    return registry_for(idx, Registry(rules))


def _layer(idx: Index) -> dict[str, list[str]]:
    """Every table of the layer and its basis, rows sorted."""
    with attached(idx.db) as con:
        return {
            t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall()))
            for t in (*build.LAYER, build.BASIS)
        }


def _rebuilt(idx: Index) -> dict[str, list[str]]:
    """The layer a whole rebuild of the same store gives."""
    with attached(idx.db, read_only=False) as con:
        build.refresh(con)
    return _layer(idx)


class Paths:
    """Which way each settle built the layer: what an update did (``Updated``), or
    ``"whole"``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.taken: list[object] = []
        update, refresh = incremental.update, build.refresh

        def updated(con):
            done = update(con)
            if done is not None:
                self.taken.append(done)
            return done

        def rebuilt(con):
            self.taken.append("whole")
            refresh(con)

        monkeypatch.setattr(incremental, "update", updated)
        monkeypatch.setattr(build, "refresh", rebuilt)


def _folder(root: Path, files: dict[str, str]) -> Index:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    idx = Index.for_root(root)
    index(root, registry=_registry(idx), workers=1)
    return idx


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.lists(documents, min_size=4, max_size=5), edits=st.lists(steps, max_size=6))
def test_after_any_edits_the_layer_equals_a_whole_rebuild(first, edits):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        idx = _folder(root, dict(zip(NAMES, first, strict=False)))
        entries: dict[int, str] = {}  # ENTRIES index -> its live entry ID
        for n, (op, x, y) in enumerate(edits):
            if op == "write":
                (root / x).write_text(y)
            elif op == "append" and (root / x).exists():
                (root / x).write_text((root / x).read_text() + f"\n\n{y}\n")
            elif op == "delete" and (root / x).exists():
                (root / x).unlink()
            elif op == "move" and (root / x).exists() and not (root / y).exists():
                (root / x).rename(root / y)
            elif op == "add" and x not in entries:
                name, type_, aliases = ENTRIES[x]
                entries[x] = f"Q{n}"
                gz.add(idx, name, type_, aliases, entry_id=entries[x])
            elif op == "retract" and x in entries:
                gz.retract(idx, entries.pop(x), "tester", "a test")
            index(root, registry=_registry(idx), workers=1)
            assert _layer(idx) == _rebuilt(idx), (n, op, x)


PLAIN = {  # files that share no person, author or short form
    name: f"# {name}\n\n{LINES[i]}\n" for name, i in zip(NAMES, (0, 1, 5, 7, 9), strict=False)
}


def test_an_edit_of_one_file_recomputes_that_file_alone(tmp_path, monkeypatch):
    idx = _folder(tmp_path / "docs", PLAIN)
    paths = Paths(monkeypatch)
    (tmp_path / "docs" / "b.md").write_text("# b\n\nContact Jo Bloggs <jo@example.org> in May.\n")
    index(tmp_path / "docs", registry=_registry(idx), workers=1)
    with attached(idx.db) as con:
        (b,) = con.execute("SELECT doc_id FROM documents WHERE path = 'b.md'").fetchone()
        assert con.execute("SELECT count(*) FROM layer_stale").fetchone() == (0,)
    assert paths.taken == [incremental.Updated([b], corpus=True)]  # a new person and address
    assert _layer(idx) == _rebuilt(idx)


def test_an_edit_that_names_no_new_key_rebuilds_no_corpus_wide_row(tmp_path, monkeypatch):
    idx = _folder(tmp_path / "docs", PLAIN)
    paths = Paths(monkeypatch)
    (tmp_path / "docs" / "c.md").write_text("# c\n\nSee doi:10.1000/xyz123 on 2025-03-04.\n")
    index(tmp_path / "docs", registry=_registry(idx), workers=1)
    with attached(idx.db) as con:
        (c,) = con.execute("SELECT doc_id FROM documents WHERE path = 'c.md'").fetchone()
    assert paths.taken == [incremental.Updated([c], corpus=False)]
    assert _layer(idx) == _rebuilt(idx)


def test_a_gazetteer_edit_rebuilds_the_whole_layer(tmp_path, monkeypatch):
    idx = _folder(tmp_path / "docs", PLAIN)
    paths = Paths(monkeypatch)
    gz.add(idx, "Node Foundation", "ORG", ["Node Foundation"], entry_id="Q1")
    assert paths.taken == ["whole"]
    paths.taken.clear()
    gz.retract(idx, "Q1", "tester", "a test")
    assert paths.taken == ["whole"]


def test_a_new_merge_that_another_file_reads_rebuilds_the_whole_layer(tmp_path, monkeypatch):
    """An edit signs with a known address under another spelling of its name: the two are
    one person now, and the file that wrote the first links to the merged entity."""
    files = {
        "a.md": "# a\n\nContact Jane Roe <jane@example.org> for help.\n",
        "b.md": "# b\n\nReleased on 2024-06-01.\n",
        "c.md": "# c\n\nReleased on 2024-06-02.\n",
    }
    idx = _folder(tmp_path / "docs", files)
    paths = Paths(monkeypatch)
    signed = "# c\n\nSigned-off-by: Jane Q. Roe <jane@example.org>\n"
    (tmp_path / "docs" / "c.md").write_text(signed)
    index(tmp_path / "docs", registry=_registry(idx), workers=1)
    assert paths.taken == ["whole"]
    with attached(idx.db) as con:
        linked = con.execute(
            "SELECT DISTINCT l.entity_id FROM links l JOIN documents d USING (doc_id) "
            "WHERE d.path = 'a.md' AND starts_with(l.entity_id, 'person:')"
        ).fetchall()
    assert linked == [("person:jane-q-roe",)]
    assert _layer(idx) == _rebuilt(idx)


@pytest.mark.parametrize(
    "meta",
    [
        ("layer", "2"),  # built by an older kbx's rules: LAYER_VERSION
        ("entities_dirty", "1"),  # a write that is not one document's, beside this one
    ],
)
def test_repair_rebuilds_whole_when_the_store_says_so(tmp_path, monkeypatch, meta):
    idx = _folder(tmp_path / "docs", PLAIN)
    with attached(idx.db, read_only=False) as con:
        (b,) = con.execute("SELECT doc_id FROM documents WHERE path = 'b.md'").fetchone()
        con.execute("BEGIN")
        mark_stale(con, [b])
        set_meta(con, *meta)
        con.execute("COMMIT")
    paths = Paths(monkeypatch)
    with idx.writer() as con:
        repair(con, idx)
    assert paths.taken == ["whole"]
    with attached(idx.db) as con:
        assert con.execute("SELECT count(*) FROM layer_stale").fetchone() == (0,)
        assert con.execute("SELECT value FROM kbx_meta WHERE key = 'layer'").fetchone() == (
            build.LAYER_VERSION,
        )
