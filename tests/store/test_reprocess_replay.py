"""kbx reprocess after a gazetteer edit killed once its log line was written: the repair
replays the edit into the store, and the pass then runs the gazetteer as it now stands
(its recognizer was read before the repair, from the store without the edit)."""

from __future__ import annotations

from helpers import die_at, write_corpus

from kbx.annotate.setup import registry_for
from kbx.entities import gazetteer
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.store.db import Index


def test_a_replayed_edit_is_reprocessed(tmp_path):
    root = write_corpus(tmp_path / "docs")
    index(root, workers=1)
    idx = Index.for_root(root)
    assert die_at("journal.appended", gazetteer.add, idx, "Cedar Holdings", "ORG", ["Cedar"]) == 137
    registry = registry_for(idx)  # as kbx reprocess builds it: before its repair
    report = reprocess(idx, registry, ["gazetteer"])
    (done,) = report.done
    assert done.name == "gazetteer" and done.mentions > 0
    with idx.reader() as con:
        found = con.execute(
            "SELECT count(*) FROM mentions WHERE recognizer = 'gazetteer' AND text = 'Cedar'"
        ).fetchone()[0]
    assert found == done.mentions
