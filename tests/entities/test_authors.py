"""Documents' authors in the entity layer: a person of their own, or the known entity one
of their written forms names (case aside), linked to the whole document."""

from __future__ import annotations

from helpers import attached

from kbx.entities import gazetteer as gz
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

AUTHORS = {
    "a.md": "Yosuke Furukawa (@yosuke-furukawa)",
    "b.md": "ann lee",  # the gazetteer's "Ann Lee", written in lower case
    "c.md": "Apple",  # an entry's alias, but an organisation's: still its entity
    "d.md": "Yosuke Furukawa",
    "e.md": "   ",
}


def _layer(idx: Index) -> tuple[set, set, set]:
    with attached(idx.db) as con:
        links = set(
            con.execute(
                "SELECT d.path, l.entity_id FROM links l JOIN documents d USING (doc_id) "
                "WHERE l.unit_id IS NULL AND l.filter"
            ).fetchall()
        )
        people = set(
            con.execute("SELECT entity_id, label FROM entities WHERE source = 'author'").fetchall()
        )
        aliases = set(con.execute("SELECT entity_id, alias FROM aliases").fetchall())
    return links, people, aliases


def test_authors_are_people_or_the_entries_their_names_are(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for name, author in AUTHORS.items():
        (root / name).write_text(f"---\nauthor: {author!r}\n---\n# {name}\n\nA note.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([]))
    gz.add(idx, "Ann Lee", "PERSON", ["Ann Lee"], entry_id="Q1")
    gz.add(idx, "Apple Inc.", "ORG", ["Apple"], entry_id="Q312")
    links, people, aliases = _layer(idx)
    assert links == {
        ("a.md", "person:yosuke-furukawa"),
        ("d.md", "person:yosuke-furukawa"),  # one person, however the handle is written
        ("b.md", "Q1"),
        ("c.md", "Q312"),
    }
    assert people == {("person:yosuke-furukawa", "Yosuke Furukawa")}
    yosuke = "person:yosuke-furukawa"
    written = {(yosuke, "Yosuke Furukawa (@yosuke-furukawa)"), (yosuke, "Yosuke Furukawa")}
    assert written | {("Q1", "ann lee")} <= aliases
