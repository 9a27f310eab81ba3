"""The index pipeline: rule-based recognizers inside the extraction workers, searchable
before the models run, an interrupted NER pass resumed and said so, readers let in."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import attached, copy_index, die_at

from kbx.annotate import run
from kbx.annotate.setup import registry_for
from kbx.entities import build
from kbx.indexing import ingest
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.spacy_ner import SpacyRecognizer
from kbx.search.search import search
from kbx.store.db import Index, WriterLease

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
NER_ON = '[recognizers]\ndisable = ["gliner", "acronyms"]\n'
SHARED = "Both notes end with doi:10.1000/xyz123, measured on 2021-03-04 at 5 kg."


def _folder(root: Path, toml: str, n: int = 6) -> Path:
    root.mkdir(parents=True)
    (root / "kbx.toml").write_text(toml)
    for i in range(n):
        (root / f"note{i}.md").write_text(
            f"# Note {i}\n\nMaya Okafor met Daniel Brooks in Lisbon about item {i}.\n\n"
            f"Anna Schmidt wrote to Acme Corporation on 4 March 202{i}.\n\n{SHARED}\n"
        )
    return root


def _rows(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    with attached(db) as con:
        return con.execute(sql, params or []).fetchall()


@pytest.fixture
def in_readers(monkeypatch):
    """The rule-based recognizers run in the extraction workers however few the files."""
    monkeypatch.setattr(ingest, "PARALLEL_THRESHOLD", 1)


def test_a_passage_in_two_files_of_one_batch_has_one_run_per_recognizer(tmp_path, in_readers):
    root = _folder(tmp_path / "docs", RULES_ONLY)
    (root / "copy.md").write_text((root / "note0.md").read_text())
    index(root, workers=1)
    db = Index.for_root(root).db
    twice = "SELECT unit_id FROM placements GROUP BY unit_id HAVING count(*) = 2"
    assert len(_rows(db, twice)) == 1  # note0.md and copy.md place one unit, stored once
    runs = _rows(
        db,
        f"""SELECT r.recognizer, count(*) FROM runs r JOIN units u USING (unit_hash)
            WHERE u.unit_id IN ({twice}) GROUP BY ALL ORDER BY ALL""",
    )
    assert runs == [
        (r, 1) for r in ("bylines", "dates", "gazetteer", "identifiers", "quantities", "references")
    ]
    kinds = _rows(
        db,
        f"""SELECT m.type, count(*) FROM mentions m JOIN units u USING (unit_hash)
            WHERE u.unit_id IN ({twice}) GROUP BY ALL ORDER BY ALL""",
    )
    assert kinds == [("DATE", 2), ("DOI", 1), ("QUANTITY", 1)]


def test_mentions_found_in_the_workers_are_those_a_pass_finds(tmp_path, in_readers):
    root = _folder(tmp_path / "docs", RULES_ONLY)
    idx = Index.for_root(root)
    first = index(root, workers=2)
    query = "SELECT * EXCLUDE (ran_at) FROM runs ORDER BY ALL"
    mentions = "SELECT * FROM mentions ORDER BY ALL"
    before = _rows(idx.db, query), _rows(idx.db, mentions)
    assert sum(r.units for r in first.recognizers) == len(before[0])  # the report counts them
    assert sum(r.mentions for r in first.recognizers) == len(before[1])
    done = reprocess(idx, registry_for(idx), redo_all=True)
    assert sum(r.units for r in done.done) == len(before[0])
    assert (_rows(idx.db, query), _rows(idx.db, mentions)) == before


def test_a_changed_file_is_recognized_only_in_its_new_passages(tmp_path, in_readers):
    root = _folder(tmp_path / "docs", RULES_ONLY)
    idx = Index.for_root(root)
    index(root, workers=1)
    runs = "SELECT u.text, r.recognizer, r.ran_at FROM runs r JOIN units u USING (unit_hash)"
    before = {(t, r): at for t, r, at in _rows(idx.db, runs)}
    note = root / "note0.md"
    note.write_text(note.read_text().replace("item 0", "item zero"))
    index(root, workers=1)
    after = {(t, r): at for t, r, at in _rows(idx.db, runs)}
    changed = {t for t, _ in after if "item zero" in t}
    assert len(changed) == 1
    for key, at in after.items():
        if key[0] in changed:
            assert key not in before
        else:
            assert before[key] == at  # not run again


def test_the_folder_is_searchable_before_the_models_run(tmp_path, monkeypatch):
    root = _folder(tmp_path / "docs", NER_ON)
    calls: list[int] = []
    real = SpacyRecognizer.recognize

    def counted(self, texts):  # the real model runs; this only notes when
        calls.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(SpacyRecognizer, "recognize", counted)
    said: list[tuple] = []
    report = index(root, workers=1, searchable=lambda r, nxt: said.append((r.new, nxt, sum(calls))))
    assert said == [(6, ["spacy"], 0)]
    spacy = next(r for r in report.recognizers if r.name == "spacy")
    assert spacy.units == sum(calls) > 0
    assert 0 < report.searchable_s <= report.seconds
    index(root, workers=1, searchable=lambda r, nxt: said.append((r.unchanged, nxt)))
    assert said[1:] == [(6, [])]  # nothing left for the models: nothing said to follow


@pytest.fixture(scope="module")
def cut_short(tmp_path_factory) -> Path:
    """A folder indexed by the rules, then an NER pass killed at its second batch: where both
    resumes below start, made once and copied."""
    root = _folder(tmp_path_factory.mktemp("cut") / "docs", RULES_ONLY)
    index(root, workers=1)
    (root / "kbx.toml").write_text(NER_ON)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run, "SLOW_BATCH_UNITS", 2)
        assert die_at("recognize.batch:2", index, root) == 137
    return root


@pytest.mark.parametrize("resume", ["index", "reprocess"])
def test_an_interrupted_ner_pass_is_said_and_resumed(cut_short, tmp_path, monkeypatch, resume):
    idx = copy_index(cut_short, tmp_path / "docs")
    root = idx.root
    monkeypatch.setattr(run, "SLOW_BATCH_UNITS", 2)
    notes = search(idx, "Lisbon", facets=True).notes
    (ner,) = [n for n in notes if n.startswith("spacy has run")]
    assert any("cut short" in n for n in notes)  # its names await the next writer's rebuild
    said = re.search(r"spacy has run on (\d+) of (\d+) passages", ner)
    done, total = int(said.group(1)), int(said.group(2))
    assert done == 4 and total > done
    assert search(idx, "Lisbon").hits  # searchable all along

    if resume == "index":
        report = index(root, workers=1).recognizers
    else:
        report = reprocess(idx, registry_for(idx)).done
    spacy = next(r for r in report if r.name == "spacy")
    assert spacy.units == total - done
    assert search(idx, "Lisbon", facets=True).notes == []
    assert _rows(idx.db, "SELECT count(*) FROM runs WHERE recognizer = 'spacy'") == [(total,)]


@pytest.mark.parametrize("batch, before_models", [(64, 0), (2, 1)])
def test_the_layer_is_built_before_the_models_only_when_they_have_batches_to_do(
    tmp_path, monkeypatch, batch, before_models
):
    """Six passages: one batch of the model's is built into the layer once, after it (a
    server's re-index of a file); three batches, before them too, so that filters work
    while they run."""
    root = _folder(tmp_path / "docs", NER_ON)
    monkeypatch.setattr(run, "SLOW_BATCH_UNITS", batch)
    calls, real = [], build.refresh
    monkeypatch.setattr(build, "refresh", lambda con: calls.append(1) or real(con))
    said = []
    index(root, workers=1, searchable=lambda r, nxt: said.append(len(calls)))
    assert said == [before_models] and len(calls) == before_models + 1
    assert not search(Index.for_root(root), "Lisbon", facets=True).notes  # settled, all run


def test_names_not_yet_recognized_anywhere_are_said(tmp_path):
    root = _folder(tmp_path / "docs", NER_ON)
    idx = Index.for_root(root)

    def interrupted(report, slow):  # ctrl-C the moment the folder is searchable
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index(root, workers=1, searchable=interrupted)
    (note,) = search(idx, "Lisbon", facets=True).notes
    assert note.startswith("spacy has run on 0 of 6 passages")
    assert search(idx, "Lisbon").hits


READER = textwrap.dedent(
    """
    import sys, time
    from kbx.store.db import Index
    started = time.monotonic()
    with Index.find(sys.argv[1]).reader() as con:
        n = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    print(n, round(time.monotonic() - started, 2))
    """
)


def test_a_writer_holding_the_file_lets_a_waiting_reader_in(tmp_path):
    root = _folder(tmp_path / "docs", RULES_ONLY, n=2)
    idx = Index.for_root(root)
    index(root, workers=1)
    with WriterLease(idx, hold=60.0) as lease:
        lease.con()
        reader = subprocess.Popen(
            [sys.executable, "-c", READER, str(idx.db)], stdout=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 20
        while not lease.expired and time.monotonic() < deadline:  # commits, as in a run
            time.sleep(0.05)
        assert lease.expired  # long before its 60 s: a reader asked
        lease.release()
        lease.con()  # steps back while the reader gets in, then holds the file again
        out, _ = reader.communicate(timeout=20)
    assert reader.returncode == 0
    assert out.split()[0] == "2"
