"""News beside technical text: how many right names still filter on CoNLL-2003 dev.

The 216 Reuters documents are written as plain-text files (one sentence a paragraph, tokens
joined by spaces) with their gold spans as character offsets, indexed with spaCy on, and
each spaCy mention of PERSON, ORG or GPE/LOC is placed back in its file through the offset
map. A mention is filter-grade when its passage's link to the entity it names filters;
it is right when gold holds the same span with the same type (PER, ORG, LOC).
Used by ``ner_filter.py``; the documents split by parity, even ones to tune, odd ones held.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from kbx.extract.textmap import locate, unpack
from kbx.gazetteer.entries import slug
from kbx.store.db import Index

CONLL = Path("ner") / "conll2003" / "conll2003_dev.txt"
GOLD = {"PER": "PERSON", "ORG": "ORG", "LOC": "GPE"}
TYPES = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "GPE", "LOC": "GPE"}  # spaCy's, as gold's


def documents(path: Path) -> list[tuple[str, dict[tuple[int, int], str]]]:
    """Each document's text and gold spans ``(start, end) -> type``."""
    docs, sentences, tokens = [], [], []

    def close_sentence():
        if tokens:
            sentences.append(list(tokens))
            tokens.clear()

    def close_document():
        close_sentence()
        if sentences:
            docs.append(_written(sentences))
            sentences.clear()

    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("-DOCSTART-"):
            close_document()
        elif not line.strip():
            close_sentence()
        else:
            word, *_, tag = line.split()
            tokens.append((word, tag))
    close_document()
    return docs


def _written(sentences: list[list[tuple[str, str]]]) -> tuple[str, dict[tuple[int, int], str]]:
    parts, gold, at = [], {}, 0
    for i, sentence in enumerate(sentences):
        if i:
            parts.append("\n\n")
            at += 2
        open_span = None
        for j, (word, tag) in enumerate(sentence):
            if j:
                parts.append(" ")
                at += 1
            kind = tag[2:]
            starts = tag.startswith("B-") or (tag.startswith("I-") and not open_span)
            if starts or (tag.startswith("I-") and open_span[2] != kind):
                if open_span:
                    gold[(open_span[0], open_span[1])] = open_span[2]
                open_span = [at, at + len(word), kind]
            elif tag.startswith("I-"):
                open_span[1] = at + len(word)
            elif open_span:
                gold[(open_span[0], open_span[1])] = open_span[2]
                open_span = None
            parts.append(word)
            at += len(word)
        if open_span:
            gold[(open_span[0], open_span[1])] = open_span[2]
    return "".join(parts) + "\n", {k: GOLD[v] for k, v in gold.items() if v in GOLD}


def write(root: Path, docs: list, parity: int) -> dict[str, dict[tuple[int, int], str]]:
    """The documents of one parity as files under ``root``; their gold spans by path."""
    root.mkdir(parents=True, exist_ok=True)
    gold = {}
    for n, (text, spans) in enumerate(docs):
        if n % 2 == parity:
            name = f"doc{n:03d}.txt"
            (root / name).write_text(text, encoding="utf-8")
            gold[name] = spans
    return gold


def scores(root: Path, gold: dict[str, dict[tuple[int, int], str]]) -> list[list]:
    """Per type: gold spans, spaCy names, filter-grade names, right ones, precision, recall."""
    with Index.for_root(root).reader() as con:
        owners: dict[str, str] = {}
        for entity_id, alias in con.execute(
            "SELECT entity_id, alias FROM aliases WHERE NOT starts_with(entity_id, 'name:')"
        ).fetchall():
            owners[alias.lower()] = min(owners.get(alias.lower(), entity_id), entity_id)
        links = {
            (d, u, e): f
            for d, u, e, f in con.execute(
                "SELECT doc_id, unit_id, entity_id, filter FROM links WHERE unit_id IS NOT NULL"
            ).fetchall()
        }
        rows = con.execute(
            """SELECT d.doc_id, d.path, pl.unit_id, pl.offsets, u.text, m.start_char,
                      m.end_char, m.type, m.text, coalesce(m.value, m.text)
               FROM mentions m JOIN units u USING (unit_hash)
               JOIN placements pl USING (unit_id) JOIN documents d USING (doc_id)
               WHERE m.recognizer = 'spacy' AND m.key IS NULL"""
        ).fetchall()
    starts: dict[str, list[int]] = {}
    count = defaultdict(lambda: [0, 0, 0])  # names, filter-grade, right filter-grade
    for doc_id, path, unit_id, blob, text, s, e, type_, mtext, surface in rows:
        if type_ not in TYPES:
            continue
        if path not in starts:
            source = (root / path).read_text(encoding="utf-8")
            starts[path] = [0] + [m.end() for m in re.finditer("\n", source)]
        segments = unpack(blob)
        a, b = locate(segments, text, s), locate(segments, text, e - 1)
        span = (starts[path][a.line - 1] + a.col, starts[path][b.line - 1] + b.col + 1)
        target = owners.get(surface.lower()) or owners.get(mtext.lower())
        target = target or f"name:{type_.lower()}:{slug(surface)}"
        c = count[TYPES[type_]]
        c[0] += 1
        if links.get((doc_id, unit_id, target)):
            c[1] += 1
            c[2] += gold[path].get(span) == TYPES[type_]
    out = []
    for t in ("PERSON", "ORG", "GPE"):
        n_gold = sum(v == t for spans in gold.values() for v in spans.values())
        names, grade, right = count[t]
        out.append([t, n_gold, names, grade, right, right / grade if grade else 0.0,
                    right / n_gold if n_gold else 0.0])  # fmt: skip
    return out
