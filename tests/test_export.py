"""kbx export: each format read back with its ecosystem's reader (a strict brat parser
written here, since PyPI's brat readers refuse overlapping spans; json for W3C Web
Annotation against the model's required fields; spaCy's DocBin; DuckDB's Parquet reader),
every span checked against the text it points into."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from helpers import unchanged

from kbx import api
from kbx.errors import BadArgument, KbxError
from kbx.export import read as export_read
from kbx.export.run import export
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.filters import Filters
from kbx.store.db import Index

WORDS = " ".join(  # one paragraph long enough to be cut into overlapping windows
    f"w{i:04d}" + (f" on {1 + i % 28} May {1990 + i % 30}" if i % 40 == 7 else "")
    for i in range(900)
)
FILES = {
    "notes/cedar.md": "---\ntitle: Cedar\ndate: 2021-03-04\n---\n# Cedar\n\n"
    "Café Zoë 😀 met on 5 May 2022 about Python and doi:10.1145/1629575.1629596.\n\n"
    "The pallet weighs 12 kg; Project Cedar ships by 1 June 2022. END\n\n"
    "START of the next part, in Python again.\n",
    "runbook.txt": "Runbook\r\n\r\nOn 2023-01-15 we moved 3.5 GB.\r\nRust builds it.\r\n",
    "web.html": "<html><head><title>Web</title></head><body><h1>Web</h1>"
    "<p>Since 1 June 2020, AT&amp;T paid $1,200 for Rust.</p></body></html>\n",
    "long.md": f"# Long\n\n{WORDS}\n",
}


class Tags:
    """Names of languages, as a type brat cannot write as it is, and one span that crosses
    a paragraph break."""

    info = RecognizerInfo(
        name="tags", version="2", types=("PROGRAMMING LANGUAGE", "SPLIT"), filter=False
    )

    def recognize(self, texts):
        out = []
        for t in texts:
            found = [
                Mention(m.start(), m.end(), "PROGRAMMING LANGUAGE", m.group(), m.group().lower())
                for m in re.finditer(r"\b(?:Python|Rust)\b", t)
            ]
            found += [
                Mention(m.start(), m.end(), "SPLIT", m.group())
                for m in re.finditer(r"END\s+START", t)
            ]
            out.append(found)
        return out


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    root = tmp_path_factory.mktemp("export") / "docs"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    rules = [IdentifierRecognizer(), DateRecognizer(), QuantityRecognizer(), Tags()]
    index(root, registry=api.registry_for(Index.for_root(root), Registry(rules)), workers=1)
    i = Index.for_root(root)
    api.gazetteer_add(i, "Project Cedar", "PROJECT", ["Cedar"], actor="agent:test")
    with unchanged(i):
        yield i


def _text(path: Path) -> str:
    """A file's characters as they are (``\r\n`` kept)."""
    with path.open(encoding="utf-8", newline="") as f:
        return f.read()


def _mentions(idx: Index) -> list[dict]:
    """Every mention of the store as its document reads it, one per place (kbx mentions)."""
    with idx.reader() as con:
        paths = [p for (p,) in con.execute("SELECT path FROM documents ORDER BY path").fetchall()]
    return [m.__dict__ for p in paths for m in api.mentions(idx, p)]


# --- brat ------------------------------------------------------------------------------------

T_LINE = re.compile(r"T(\d+)\t([A-Za-z0-9_-]+) (\d+ \d+(?:;\d+ \d+)*)\t([^\t\n]*)")
NOTE = re.compile(r"#(\d+)\tAnnotatorNotes T(\d+)\t([^\t\n]*)")


def parse_ann(path: Path) -> list[tuple[str, list[tuple[int, int]], str, str]]:
    """A strict reader of the .ann lines kbx writes: ``(type, fragments, surface, note)``;
    any other line fails."""
    spans, notes = {}, {}
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
        if m := T_LINE.fullmatch(line):
            frags = [tuple(map(int, f.split())) for f in m[3].split(";")]
            spans[m[1]] = (m[2], frags, m[4])
        elif m := NOTE.fullmatch(line):
            notes[m[2]] = m[3]
        else:
            raise AssertionError(f"not a brat line: {line!r}")
    assert set(notes) == set(spans)
    return [(*spans[k], notes[k]) for k in sorted(spans, key=int)]


def test_brat_every_span_cuts_exactly_its_surface(idx, tmp_path):
    out = tmp_path / "brat"
    r = export(idx, "brat", out)
    expected = _mentions(idx)
    anns = sorted(out.rglob("*.ann"))
    assert len(anns) == len(FILES) and r.documents == len(FILES)
    conf = (out / "annotation.conf").read_text()
    declared = set(conf.split("[entities]\n")[1].split("\n\n")[0].split("\n"))
    written = 0
    for ann in anns:
        text = _text(ann.with_suffix(".txt"))
        for type_, frags, surface, note in parse_ann(ann):
            assert " ".join(text[a:b] for a, b in frags) == surface
            assert type_ in declared and re.search(r"recognizer=\w+@\w+", note)
            written += 1
    assert written == r.mentions == len(expected)
    assert r.renamed == {"PROGRAMMING LANGUAGE": "PROGRAMMING_LANGUAGE"}
    cedar = parse_ann(out / "notes/cedar.md.ann")
    split = [x for x in cedar if x[0] == "SPLIT"]
    assert len(split) == 1 and len(split[0][1]) == 2 and split[0][2] == "END START"
    assert any("type=PROGRAMMING LANGUAGE" in x[3] and "value=python" in x[3] for x in cedar)
    assert any(x[2] == "Project Cedar" and "entity=gz:project-cedar" in x[3] for x in cedar)


def test_brat_joins_the_windows_of_a_long_block_without_repeating_them(idx, tmp_path):
    out = tmp_path / "brat"
    export(idx, "brat", out)
    text = (out / "long.md.txt").read_text(encoding="utf-8")
    assert [text.count(f"w{i:04d} ") + text.endswith(f"w{i:04d}") for i in range(900)] == [1] * 900
    with idx.reader() as con:
        units = dict(con.execute("SELECT unit_hash, text FROM units").fetchall())
        windows = con.execute(
            "SELECT count(*) FROM placements JOIN documents USING (doc_id) WHERE path = 'long.md'"
        ).fetchone()[0]
    rows = (out / "kbx-units.tsv").read_text().splitlines()
    header = ["txt", "start", "end", "path", "ordinal", "unit", "start_line", "end_line"]
    assert rows[0].split("\t") == header
    mine = [row.split("\t") for row in rows[1:] if row.startswith("long.md.txt\t")]
    assert len(mine) == windows > 2  # long enough to be windowed
    for row in rows[1:]:
        name, a, b, _, _, unit, _, _ = row.split("\t")
        txt = _text(out / name)
        assert txt[int(a) : int(b)] == units[unit]
    dates = [x for x in parse_ann(out / "long.md.ann") if x[0] == "DATE"]
    assert len(dates) == len({x[1][0] for x in dates}) == WORDS.count(" May ")


# --- W3C Web Annotation ----------------------------------------------------------------------


def _iri(value: object) -> bool:
    return isinstance(value, str) and re.match(r"[a-z][a-z0-9+.-]*:", value) is not None


def test_webanno_has_the_w3c_fields_and_quotes_the_original_file(idx, tmp_path):
    out = tmp_path / "mentions.jsonld"
    r = export(idx, "webanno", out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["@context"] == "http://www.w3.org/ns/anno.jsonld"
    assert doc["type"] == "AnnotationCollection" and _iri(doc["id"]) and doc["label"]
    page = doc["first"]
    assert page["type"] == "AnnotationPage" and _iri(page["id"]) and page["partOf"] == doc["id"]
    items = page["items"]
    assert doc["total"] == len(items) == r.mentions == len(_mentions(idx)) and r.stale == 0
    assert len({a["id"] for a in items}) == len(items)
    files: dict[str, str] = {}
    for a in items:
        assert a["type"] == "Annotation" and _iri(a["id"]) and a["target"]
        assert a["creator"]["type"] == "Software" and "@" in a["creator"]["name"]
        purposes = {b["purpose"]: b for b in a["body"]}
        assert purposes["tagging"]["type"] == "TextualBody" and purposes["tagging"]["value"]
        if "identifying" in purposes:
            assert purposes["identifying"]["type"] == "SpecificResource"
            assert _iri(purposes["identifying"]["source"])
        source = a["target"]["source"]
        assert source.startswith("file:///")
        path = Path(source.removeprefix("file://"))
        if source not in files:
            files[source] = _text(path)
        pos, quote = a["target"]["selector"]
        assert pos["type"] == "TextPositionSelector" and quote["type"] == "TextQuoteSelector"
        start, end = pos["start"], pos["end"]
        assert 0 <= start < end and files[source][start:end] == quote["exact"]
        assert files[source][:start].endswith(quote["prefix"])
        assert files[source][end:].startswith(quote["suffix"])
    exact = {(a["body"][0]["value"], a["target"]["selector"][1]["exact"]) for a in items}
    assert ("DATE", "5 May 2022") in exact  # after an accent and a character past U+FFFF
    assert ("DATE", "2023-01-15") in exact and ("QUANTITY", "3.5 GB") in exact  # CRLF lines
    assert ("MONEY", "$1,200") in exact  # after an HTML entity
    assert ("SPLIT", "END\n\nSTART") in exact  # the file's characters, line breaks and all
    identified = {b["source"] for a in items for b in a["body"] if b["purpose"] == "identifying"}
    assert "https://doi.org/10.1145/1629575.1629596" in identified
    assert "urn:kbx:entity:gz:project-cedar" in identified


def test_webanno_quotes_the_clean_text_of_a_file_changed_since_indexed(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nShipped on 5 May 2022.\n")
    index(root, registry=Registry([DateRecognizer()]), workers=1)
    (root / "a.md").write_text("# A\n\nMoved.\n")
    r = export(Index.for_root(root), "webanno", tmp_path / "a.jsonld")
    (a,) = json.loads((tmp_path / "a.jsonld").read_text())["first"]["items"]
    assert (
        r.stale == 1
        and r.notes
        and [s["type"] for s in a["target"]["selector"]] == ["TextQuoteSelector"]
    )
    assert a["target"]["selector"][0]["exact"] == "5 May 2022"


# --- spaCy DocBin ----------------------------------------------------------------------------


def test_docbin_reads_back_one_doc_per_unit(idx, tmp_path):
    import spacy
    from spacy.tokens import DocBin

    out = tmp_path / "docbin"
    r = export(idx, "docbin", out)
    nlp = spacy.blank("en")
    parts = sorted(out.glob("*.spacy"))
    docs = [d for part in parts for d in DocBin().from_disk(part).get_docs(nlp.vocab)]
    with idx.reader() as con:
        units = dict(con.execute("SELECT unit_hash, text FROM units").fetchall())
        stored = con.execute("SELECT count(*) FROM mentions").fetchone()[0]
    assert len(docs) == len(units) == r.units and r.unaligned == 0
    spans = 0
    for doc in docs:
        data = doc.user_data["kbx"]
        assert doc.text == units[data["unit"]] and data["placements"]
        group = list(doc.spans["kbx"])
        assert len(group) == len(data["mentions"])
        for span, m in zip(group, data["mentions"], strict=True):
            assert span.label_
            assert span.start_char <= m["start"] < m["end"] <= span.end_char
            assert doc.text[m["start"] : m["end"]] == m["text"]
            assert span.kb_id_ == (m["entity"] or "") and m["recognizer"] and m["version"]
        ents = list(doc.ents)
        assert all(a.end <= b.start for a, b in zip(ents, ents[1:], strict=False))
        assert {(e.start, e.end, e.label_) for e in ents} <= {
            (s.start, s.end, s.label_) for s in group
        }
        spans += len(group)
    assert spans == r.mentions == stored  # per unit: nothing deduplicated, nothing lost
    labels = {s.label_ for d in docs for s in d.spans["kbx"]}
    assert {"DATE", "DOI", "PROGRAMMING LANGUAGE", "PROJECT"} <= labels


# --- Parquet ---------------------------------------------------------------------------------

TABLES = ("documents", "units", "placements", "mentions", "doc_mentions", "entities")
TABLES += ("gazetteer_log",)


def test_parquet_is_every_table_as_the_store_holds_it(idx, tmp_path):
    out = tmp_path / "tables"
    r = export(idx, "parquet", out)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{t}.parquet" for t in TABLES)
    con = duckdb.connect()
    con.execute(f"ATTACH '{idx.db}' AS kbx (READ_ONLY)")
    for t in TABLES:
        file = out / f"{t}.parquet"
        cols = [c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE kbx.{t})").fetchall()]
        assert [
            c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE '{file}')").fetchall()
        ] == cols
        same = ", ".join(f'"{c}"' for c in cols)
        for a, b in ((f"kbx.{t}", f"'{file}'"), (f"'{file}'", f"kbx.{t}")):
            left = f"SELECT {same} FROM {a} EXCEPT ALL SELECT {same} FROM {b}"
            assert con.execute(f"SELECT count(*) FROM ({left})").fetchone() == (0,)
    n = con.execute(f"SELECT count(*) FROM '{out / 'mentions.parquet'}'").fetchone()[0]
    assert n == r.mentions > 0 and r.files == 7
    assert con.execute(f"SELECT count(*) FROM '{out / 'gazetteer_log.parquet'}'").fetchone()[0]


def test_parquet_with_filters_keeps_what_the_chosen_passages_reach(idx, tmp_path):
    out = tmp_path / "tables"
    export(idx, "parquet", out, Filters(path="notes/*"), recognizers=["dates"])
    con = duckdb.connect()
    read = lambda t, what="*": con.execute(f"SELECT {what} FROM '{out / t}.parquet'").fetchall()  # noqa: E731
    assert read("documents", "path") == [("notes/cedar.md",)]
    (doc_id,) = read("documents", "doc_id")[0]
    assert {d for (d,) in read("placements", "doc_id")} == {doc_id}
    assert {r for (r,) in read("mentions", "recognizer")} == {"dates"}
    texts = [t for (t,) in read("units", "text")]
    assert all(any(m in t for t in texts) for (m,) in read("mentions", "text"))
    assert sorted(t for (t,) in read("mentions", "text")) == ["1 June 2022", "5 May 2022"]
    assert {(d, r) for d, r in read("doc_mentions", "doc_id, recognizer")} == {(doc_id, "dates")}
    named = {e for (e,) in read("entities", "entity_id")}  # by the passages, not the mentions
    assert named == {"gz:project-cedar", "doi:10.1145/1629575.1629596"}
    assert [e for (e,) in read("gazetteer_log", "entry_id")] == ["gz:project-cedar"]


# --- JSONL -----------------------------------------------------------------------------------


def test_jsonl_cites_each_mention_at_its_own_lines(idx, tmp_path):
    out = tmp_path / "m.jsonl"
    r = export(idx, "jsonl", out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == r.mentions == len(_mentions(idx))
    keys = "path hash start_line end_line unit start end text type value entity recognizer "
    keys += "version confidence"
    assert all(list(row) == keys.split() for row in rows)
    lines = {rel: (idx.root / rel).read_text(encoding="utf-8").splitlines() for rel in FILES}
    for row in rows:
        held = " ".join(lines[row["path"]][row["start_line"] - 1 : row["end_line"]])
        assert " ".join(row["text"].split()) in " ".join(held.split()), row
    by_text = {(row["path"], row["text"]): row for row in rows}
    assert by_text[("runbook.txt", "Rust")]["start_line"] == 4
    split = by_text[("notes/cedar.md", "END\n\nSTART")]
    assert (split["start_line"], split["end_line"]) == (9, 11)  # not the unit's 6-11
    cedar = by_text[("notes/cedar.md", "Project Cedar")]
    assert cedar["entity"] == "gz:project-cedar" and cedar["recognizer"] == "gazetteer"
    assert by_text[("notes/cedar.md", "5 May 2022")]["value"] == "2022-05-05"


def test_jsonl_streams_the_same_in_small_chunks(idx, tmp_path, monkeypatch):
    export(idx, "jsonl", tmp_path / "a.jsonl")
    monkeypatch.setattr(export_read, "CHUNK", 1)
    export(idx, "jsonl", tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


@pytest.mark.parametrize(
    ("filters", "recognizers", "want"),
    [
        (Filters(types=["DATE"]), [], {"type": {"DATE"}}),
        (Filters(), ["tags"], {"recognizer": {"tags"}}),
        (Filters(path="*.txt"), [], {"path": {"runbook.txt"}}),
        (Filters(entities=["Cedar"]), [], {"path": {"notes/cedar.md"}}),
        (Filters(quantities=["mass>1kg"]), [], {"path": {"notes/cedar.md"}}),
        (Filters(types=["PROGRAMMING LANGUAGE"], after="2023"), [], {"path": {"runbook.txt"}}),
    ],
)
def test_the_filters_choose_what_is_exported(idx, tmp_path, filters, recognizers, want):
    out = tmp_path / "m.jsonl"
    export(idx, "jsonl", out, filters, recognizers)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows
    for key, values in want.items():
        assert {row[key] for row in rows} == values


# --- errors ----------------------------------------------------------------------------------


def test_an_unknown_format_or_recognizer_is_a_bad_argument(idx, tmp_path):
    with pytest.raises(BadArgument) as e:
        export(idx, "conll", tmp_path / "x")
    assert "choose from brat, docbin, parquet, webanno, jsonl" in str(e.value)
    with pytest.raises(BadArgument, match="no such recognizer ran in this index; choose from"):
        export(idx, "jsonl", tmp_path / "x.jsonl", recognizers=["spacy"])
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("error", "raised", "said"),
    [
        (RuntimeError("a bug"), RuntimeError, "a bug"),  # a bug stays a bug (exit 70)
        (OSError(28, "No space left on device"), KbxError, "No space left on device; nothing"),
    ],
)
def test_an_export_that_fails_leaves_nothing_under_out(
    idx, tmp_path, monkeypatch, error, raised, said
):
    from kbx.export import brat

    real = brat.render

    def fail_late(doc, types):
        if doc.path == "runbook.txt":
            raise error
        return real(doc, types)

    monkeypatch.setattr(brat, "render", fail_late)
    with pytest.raises(raised, match=said):
        export(idx, "brat", tmp_path / "brat")
    assert list(tmp_path.iterdir()) == []


def test_progress_counts_the_documents_written(idx, tmp_path):
    seen = []
    export(idx, "jsonl", tmp_path / "m.jsonl", progress=lambda done, total: seen.append(done))
    assert seen == list(range(1, len(FILES) + 1))


def test_a_stored_path_that_would_leave_out_is_left_out(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nShipped on 5 May 2022.\n")
    index(root, registry=Registry([DateRecognizer()]), workers=1)
    i = Index.for_root(root)
    with i.writer() as con:  # an index file someone else made
        con.execute("UPDATE documents SET path = '../../escaped.md'")
    r = export(i, "brat", tmp_path / "out" / "brat")
    assert r.notes == ["left out '../../escaped.md': its path would leave --out"]
    assert sorted(p.name for p in tmp_path.rglob("*.txt")) == []
    assert not (tmp_path / "escaped.md.txt").exists() and r.mentions == 0
