"""A unit never fails a run (issue 40): a recognizer that raises on one unit, a value that
cannot be resolved, a document whose context raises fail that unit, value or document
alone; the failure is recorded and listed like a failed file, and the run goes on."""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from helpers import Words
from inprocess import run_cli

from kbx.annotate import context
from kbx.annotate.failures import listed
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers import dates
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.status import status
from kbx.serve.text import status as status_text
from kbx.store.db import Index

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
PRICES = "Stock prices, 6 December 1996\n\nVolume 359,000 Week Ago\n"


def _q(root, sql, params=()):
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _folder(tmp_path, name: str, files: dict[str, str]):
    root = tmp_path / name
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    for rel, text in files.items():
        (root / rel).write_text(text)
    return root


def test_the_week_ago_table_is_indexed_its_value_refused(tmp_path):
    """The reproducer: `kbx index` exited 70 on it (OverflowError in the context pass)."""
    root = _folder(tmp_path, "stocks", {"prices.md": PRICES})
    r = run_cli("index", str(root))
    assert r.returncode == 0, r.stderr
    assert _q(root, "SELECT path, status, doc_date FROM documents") == [
        ("prices.md", "ok", "1996-12-06")
    ]
    assert _q(
        root,
        """SELECT m.text, x.value FROM doc_mentions x JOIN mentions m USING (unit_hash, recognizer,
           version, start_char) WHERE m.recognizer = 'dates' ORDER BY m.start_char""",
    ) == [("6 December 1996", "1996-12-06"), ("359,000 Week Ago", None)]


def test_a_value_that_raises_fails_alone_and_is_listed(tmp_path, monkeypatch):
    """As before the fix, the resolver raises on that value: the run goes on, the file and
    its other values are in, and index, status and --json name the file, line, recognizer
    and error."""
    real = dates.resolve

    def overflowing(value, day):
        if value == "REL:W-359000":
            raise OverflowError("date value out of range")
        return real(value, day)

    monkeypatch.setattr(dates, "resolve", overflowing)
    root = _folder(tmp_path, "stocks", {"prices.md": PRICES, "other.md": "Due 4 March 2021.\n"})
    r = run_cli("index", str(root))
    assert r.returncode == 0, r.stderr
    line = "prices.md:3: dates (a value) failed: OverflowError: date value out of range"
    assert line in r.stdout
    assert _q(root, "SELECT count(*) FROM documents WHERE status = 'ok'") == [(2,)]
    assert _q(root, "SELECT value FROM doc_mentions WHERE value IS NOT NULL ORDER BY 1") == [
        ("1996-12-06",),
        ("2021-03-04",),
    ]
    r = run_cli("status", cwd=root)
    assert r.returncode == 0 and line in r.stdout
    shown = json.loads(run_cli("status", "--json", cwd=root).stdout)
    (failure,) = shown["unit_failures"]
    assert f"  ! {line}" in status_text(shown).splitlines()  # MCP's kbx_status says it too
    assert failure == {
        "path": "prices.md",
        "line": 3,
        "recognizer": "dates",
        "stage": "resolve",
        "error": "OverflowError: date value out of range",
    }
    again = run_cli("index", str(root), "--json")  # nothing changed: nothing new failed
    assert again.returncode == 0 and json.loads(again.stdout)["unit_failures"] == []
    (root / "prices.md").write_text(PRICES.replace("359,000", "3"))  # gone with its value
    assert run_cli("index", str(root)).returncode == 0
    assert json.loads(run_cli("status", "--json", cwd=root).stdout)["unit_failures"] == []


class Odd(Words):
    """Words, but a unit holding "Runbook" gets a mention with a value no store holds: the
    batch's answer is fine, what is made of it is not."""

    def recognize(self, texts):
        out = super().recognize(texts)
        return [
            ms + ([Mention(0, 1, "WORD", t[0], value=5)] if "Runbook" in t else [])  # type: ignore[arg-type]
            for t, ms in zip(texts, out, strict=True)
        ]


@pytest.mark.parametrize("words", [Words(fail_on="Runbook"), Odd()], ids=["raises", "odd value"])
def test_a_unit_a_recognizer_fails_on_fails_alone_listed_and_retried(corpus, words):
    report = index(corpus, registry=Registry([words]))
    ((unit, why),) = report.recognizers[0].failures
    n_units = _q(corpus, "SELECT count(*) FROM units")[0][0]
    assert report.recognizers[0].units == n_units
    assert _q(corpus, "SELECT count(*) FROM runs WHERE error IS NULL")[0][0] == n_units - 1
    assert _q(corpus, "SELECT count(*) FROM mentions")[0][0] > 0  # the other units' mentions
    (failure,) = report.unit_failures
    path, line = _q(
        corpus,
        """SELECT d.path, pl.start_line FROM placements pl JOIN units u USING (unit_id)
           JOIN documents d USING (doc_id) WHERE u.unit_hash = ?""",
        [unit],
    )[0]
    assert failure == {
        "path": path,
        "line": line,
        "recognizer": "words",
        "stage": "recognize",
        "error": why,
    }
    assert re.match(r"(RuntimeError: cannot read this one|TypeError: .*non-text field)", why)
    idx = Index.for_root(corpus)
    shown = status(idx, Registry([words]))
    assert shown.unit_failures == [failure] and shown.recognizers[0]["failed"] == 1
    fixed = Words()
    done = reprocess(idx, Registry([fixed]), ["words"])
    assert fixed.calls == 1 and done.failures == []  # the failed unit alone, again
    assert listed(duckdb.connect(str(idx.db), read_only=True)) == []


class Names:
    """Capitalized words after "Dr." as names (a cheap stand-in for a model)."""

    info = RecognizerInfo(name="caps", version="1", types=("PERSON",), names=True)

    def recognize(self, texts):
        return [
            [
                Mention(m.start(1), m.end(1), "PERSON", m[1], m[1])
                for m in re.finditer(r"Dr\. (\w+)", t)
            ]
            for t in texts
        ]


def test_a_document_whose_context_raises_keeps_what_its_units_found(corpus, monkeypatch):
    """The names carried through a document and its own date: one document that raises in
    either fails alone, keeps its names as found and has no date from its head; the
    others' rules run."""
    text = "4 March 2021. Dr. Kowalski met Dr. Nowak.\n"
    (corpus / "boom.md").write_text(f"# Boom\n\n{text}")
    (corpus / "calm.md").write_text(f"# Calm\n\n{text}")
    carried, ran = context.in_context, []

    def in_context(units, *args):
        if any("Boom" in u.text for u in units):
            raise RuntimeError("a rule's bug")
        ran.append(units[0].text)
        return carried(units, *args)

    class Dates(DateRecognizer):
        def recognize(self, texts):
            if any(t.startswith("Boom") for t in texts):
                raise ValueError("a pattern's bug")
            return super().recognize(texts)

    monkeypatch.setattr(context, "in_context", in_context)
    report = index(corpus, registry=Registry([Names(), Dates()]))
    got = {(f["path"], f["recognizer"], f["stage"], f["error"]) for f in report.unit_failures}
    assert got == {
        ("boom.md", "caps", "names", "RuntimeError: a rule's bug"),
        ("boom.md", "dates", "date", "ValueError: a pattern's bug"),
        ("boom.md", "dates", "recognize", "ValueError: a pattern's bug"),
    }
    assert any(t.startswith("Calm") for t in ran)
    rows = _q(
        corpus,
        """SELECT d.path, d.doc_date FROM doc_context c JOIN documents d USING (doc_id)
           WHERE c.recognizer = 'names' AND d.path IN ('boom.md', 'calm.md') ORDER BY 1""",
    )
    assert rows == [("boom.md", None), ("calm.md", "2021-03-04")]
    for path in ("boom.md", "calm.md"):  # the failed one's as its units found them
        names = _q(
            corpus,
            """SELECT n.text, n.how FROM doc_names n JOIN documents d USING (doc_id)
               WHERE d.path = ? ORDER BY 1""",
            [path],
        )
        assert names == [("Kowalski", "found"), ("Nowak", "found")]
