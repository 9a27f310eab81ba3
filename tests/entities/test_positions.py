"""Document positions: a span in the overlap of two windows of one long block is one place in
the file, for grep, mention listings and the entity layer alike."""

from __future__ import annotations

import re
from collections import Counter

import duckdb
import pytest

from kbx.entities.lookup import entities, entity
from kbx.entities.positions import continues
from kbx.extract import extract
from kbx.extract.units import OVERLAP, count_tokens
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.grep import grep
from kbx.search.mentions import mentions
from kbx.store.db import Index

PEOPLE = re.compile(r"\b(?:Ada Lovelace|Grace Hopper|Alan Turing)\b")


class People:
    """Finds three names as PERSON, the way a model's names arrive (no key, ``names``)."""

    info = RecognizerInfo(name="people", version="1", types=("PERSON",), names=True)

    def recognize(self, texts):
        return [[Mention(*m.span(), "PERSON", m.group()) for m in PEOPLE.finditer(t)]
                for t in texts]  # fmt: skip


def _paragraph(n: int, inserts: dict[int, str], width: int | None) -> str:
    """``n`` words with ``inserts`` before the given word indexes, wrapped at ``width`` words
    a line (None: one line)."""
    words = []
    for i in range(n):
        if i in inserts:
            words.append(inserts[i])
        words.append(f"w{i}")
    if width is None:
        return " ".join(words)
    return "\n".join(" ".join(words[i : i + width]) for i in range(0, len(words), width))


def _overlapped(units, needle: str) -> int:
    return sum(needle in u.text for u in units)


INSERTS = {  # word 370 lies in the overlap of windows 1 and 2; 100 and 600 in one window each
    370: "Ada Lovelace and Grace Hopper cite doi:10.1000/xyz123 &amp; more",
    100: "Grace Hopper",
    600: "Alan Turing",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("windows")
    # a wrapped paragraph (windows cut at line breaks), one long line (cut mid-line), and
    # Markdown whose overlap holds an entity (a synthetic segment) and bold text
    (root / "wrapped.txt").write_text("Title\n\n" + _paragraph(900, INSERTS, 11) + "\n")
    (root / "line.txt").write_text("Title\n\n" + _paragraph(900, INSERTS, None) + "\n")
    md = _paragraph(900, {**INSERTS, 380: "a **bold** word"}, 13)
    (root / "page.md").write_text("# Page\n\n" + md + "\n")
    index(root, registry=Registry([IdentifierRecognizer(), People()]))
    for name in ("wrapped.txt", "line.txt", "page.md"):  # the fixture is what it claims
        units = extract(name, (root / name).read_bytes()).units
        assert _overlapped(units, "Ada Lovelace") == 2 and _overlapped(units, "Alan Turing") == 1
    return root


def test_a_window_continues_the_one_before_it_and_nothing_else():
    text = "Title\n\n" + _paragraph(900, INSERTS, 11) + "\n\nA last short paragraph.\n"
    units = extract("a.txt", text.encode()).units
    assert len(units) == 5  # the title, three windows, the last paragraph
    pairs = list(zip(units, units[1:], strict=False))
    got = [continues(a.text, a.segments, b.text, b.segments) for a, b in pairs]
    assert got[0] is None and got[3] is None
    for (a, b), x in zip(pairs[1:3], got[1:3], strict=True):
        assert x is not None and b.text.startswith(a.text[x:])
        assert count_tokens(a.text[x:]) >= OVERLAP  # the overlap, whole
    shifted = units[2].text[1:], units[2].segments  # the text no longer fits its map
    assert continues(units[1].text, units[1].segments, *shifted) is None


def _grep_count(source: str, pattern: str, markdown: bool) -> int:
    """How often ``pattern`` occurs in a fixture's paragraph as grep sees it (clean text)."""
    body = source.split("\n", 2)[2]
    if markdown:
        body = body.replace("&amp;", "&").replace("**", "")
    return len(re.findall(pattern, body))


def test_grep_reports_a_match_in_an_overlap_once(corpus):
    idx = Index.for_root(corpus)
    sources = {p: (corpus / p).read_text() for p in ("wrapped.txt", "line.txt", "page.md")}
    for pattern in (r"\bw\d+\b", "Ada Lovelace", "&", r"\bbold\b", "o"):
        matches = grep(idx, pattern, max_matches=10_000).matches
        # the three files hold the same passages: each match shown once, the files that
        # share it in its also_in (as search folds them)
        found = Counter(p for m in matches for p in (m.path, *m.also_in))
        for path, source in sources.items():
            assert found[path] == _grep_count(source, pattern, path.endswith(".md")), pattern
    ada = grep(idx, "Ada Lovelace").matches  # once per file, or once for files sharing it
    assert Counter(p for m in ada for p in (m.path, *m.also_in)) == dict.fromkeys(sources, 1)
    assert grep(idx, r"\bw370\b").files == 3


def test_the_mentions_of_a_file_are_unique_per_position(corpus):
    idx = Index.for_root(corpus)
    for path in ("wrapped.txt", "line.txt", "page.md"):
        found = mentions(idx, path)
        people = Counter(m.text for m in found if m.type == "PERSON")
        assert people == {"Grace Hopper": 2, "Ada Lovelace": 1, "Alan Turing": 1}
        assert [m.text for m in found if m.type == "DOI"] == ["10.1000/xyz123"]


def test_the_entity_layer_holds_each_mention_once_per_document_position(corpus):
    """The invariant: an entity's listed mentions are its places in the files, one each
    (as many as the source text holds), and its passage count does not count the second
    window of an overlap that only repeats the first."""
    idx = Index.for_root(corpus)
    files = {p: (corpus / p).read_text() for p in ("wrapped.txt", "line.txt", "page.md")}
    rows = {e.entity_id: e for e in entities(idx, limit=1000)}
    for e in rows.values():
        detail = entity(idx, e.entity_id, limit=1000)
        listed = [(m["path"], m["line"], m["text"]) for m in detail.mentions if m["as"] == "text"]
        texts = set(t for _, _, t in listed)
        assert len(texts) == 1, e.entity_id
        (text,) = texts
        assert len(listed) == sum(s.count(text) for s in files.values()), e.entity_id
        lines = Counter(listed)  # one line holds each name once in the wrapped files
        assert all(n == 1 for (p, _, _), n in lines.items() if p != "line.txt"), lines
    assert rows["name:person:ada-lovelace"].passages == 3  # one per file, not two
    assert rows["name:person:alan-turing"].passages == 3
    assert rows["doi:10.1000/xyz123"].passages == 3 and rows["doi:10.1000/xyz123"].documents == 3
    assert rows["name:person:grace-hopper"].passages == 3  # two places, both in window 1


def test_a_name_in_an_overlap_is_not_named_twice_by_its_copy(corpus):
    """Named twice in a document is evidence enough to filter; a name once in an overlap
    (present in two windows) is named once and only boosts."""
    con = duckdb.connect(str(Index.for_root(corpus).db), read_only=True)
    grades = dict(
        con.execute(
            "SELECT entity_id, bool_or(filter) FROM links WHERE starts_with(entity_id, 'name:') "
            "GROUP BY 1"
        ).fetchall()
    )
    con.close()
    assert grades == {
        "name:person:grace-hopper": True,  # two places
        "name:person:ada-lovelace": False,  # one place, two windows
        "name:person:alan-turing": False,  # one place, one window
    }
