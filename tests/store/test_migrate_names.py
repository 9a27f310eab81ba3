"""Schema 10 (issue 43): a document's names, one JSON list in its ``names`` context row before,
become rows of ``doc_names``, read one document at a time; nothing is recomputed."""

from __future__ import annotations

import json
import re

from helpers import attached

from kbx.annotate.context import NAME_COLUMNS
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.registry import Registry
from kbx.store.db import Index
from kbx.store.schema import SCHEMA_VERSION


class Pairs:
    """Capitalized pairs as PERSON: names enough to carry."""

    info = RecognizerInfo(name="pairs", version="1", types=("PERSON",), names=True)

    def recognize(self, texts):
        found = r"[A-Z]\w+ [A-Z]\w+|(?<=\. )[A-Z]\w+"
        return [[Mention(*m.span(), "PERSON", m.group()) for m in re.finditer(found, t)]
                for t in texts]  # fmt: skip


def test_names_lists_become_rows_and_the_layer_stays(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAda Lovelace wrote. Lovelace spoke.\n")
    (root / "b.md").write_text("# B\n\nGrace Hopper and Ada Lovelace met.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([Pairs()]))
    with attached(idx.db, read_only=False) as con:
        names = sorted(con.execute("SELECT * FROM doc_names").fetchall())
        links = sorted(con.execute("SELECT * FROM links").fetchall())
        docs = con.execute("SELECT DISTINCT doc_id FROM doc_names ORDER BY 1").fetchall()
        for (doc_id,) in docs:  # as schema 9 stored them: a list per document
            rows = con.execute(
                "SELECT * EXCLUDE (doc_id) FROM doc_names WHERE doc_id = ?", [doc_id]
            ).fetchall()
            fields = ("unit", "start", "end", "type", "text", "surface", "recognizer", "how")
            data = json.dumps({"names": [dict(zip(fields, r, strict=True)) for r in rows]})
            con.execute(
                "UPDATE doc_context SET data = ? WHERE recognizer = 'names' AND doc_id = ?",
                [data, doc_id],
            )
        con.execute(  # one that kbx cannot read
            "UPDATE doc_context SET data = '{\"x\": 1}' WHERE recognizer = 'names' AND doc_id = ?",
            [docs[-1][0]],
        )
        con.execute("DROP TABLE doc_names")
        con.execute("UPDATE kbx_meta SET value = '9' WHERE key = 'schema_version'")
    assert len(docs) == 2 and len(NAME_COLUMNS) == 9
    with idx.writer() as con:  # migrates
        (version,) = con.execute(
            "SELECT value FROM kbx_meta WHERE key = 'schema_version'"
        ).fetchone()
        migrated = sorted(con.execute("SELECT * FROM doc_names").fetchall())
        kept = con.execute(
            "SELECT doc_id FROM doc_context WHERE recognizer = 'names' AND data IS NULL ORDER BY 1"
        ).fetchall()
    assert version == str(SCHEMA_VERSION)
    assert migrated == [n for n in names if n[0] != docs[-1][0]]  # the unreadable one: none
    assert kept == docs[:-1]  # and its row goes, so the next index carries it again
    index(root, registry=Registry([Pairs()]))
    with attached(idx.db) as con:
        assert sorted(con.execute("SELECT * FROM doc_names").fetchall()) == names
        assert sorted(con.execute("SELECT * FROM links").fetchall()) == links
