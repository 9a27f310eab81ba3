"""Names on news, with the document boundaries kept: CoNLL-2003 dev (issue 18).

The 216 Reuters documents are written as plain-text files (one sentence a line, a blank
line between sentences, tokens joined by spaces) with their gold spans as character
offsets, indexed with spaCy on (the rule-based recognizers off: they find no names), and
each name is placed back in its file through the offset map. The documents split by
parity: even ones to tune the rules on, odd ones held out.

Run as a script, it scores three systems by line, surface and type (a name is right when
gold has the same text on the same line with the same type; micro F1 over PER, ORG, LOC):
raw ``nlp.pipe`` on each sentence alone (the recognizer's own pipeline: NER and the
tok2vec it listens to), kbx's unit-level mentions as recognized, and kbx's names as the
entity layer reads them (``NAMES`` in ``annotate/context.py``: after the document
context). spaCy's PERSON is PER, ORG is ORG, GPE, LOC and FAC are LOC; its other types
(NORP, EVENT, PRODUCT, ...) and gold MISC are not scored, so a NORP on a MISC span is
neither right nor wrong, while an ORG there is a false positive. It prints the error
lists (most frequent misses and false positives of kbx in context) on the tuning half::

    .venv/bin/python benchmarks/ner_news.py ../shared/eval [--keep /tmp/kbx-ner] [--errors 25]

``ner_filter.py`` uses ``documents``, ``write`` and ``scores`` (filter-grade names in
context by exact character span: filter-grade when its passage's link to the entity it
names there filters).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

from common import table

from kbx.annotate.context import NAMES
from kbx.extract.textmap import locate, unpack
from kbx.gazetteer.entries import slug
from kbx.indexing.ingest import index
from kbx.recognizers.spacy_ner import SpacyRecognizer
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
    """Per type: gold spans, spaCy names, filter-grade names, right ones, precision, recall,
    and the filter-grade ones by how the document made them (right/all). The names are
    those the entity layer links (``NAMES``: "Clinton" carried from "Bill Clinton" names
    him, with the type the document gives it), each filter-grade when its passage's link
    to the entity it names there filters."""
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
            f"""SELECT DISTINCT d.doc_id, d.path, pl.unit_id, pl.offsets, u.text, n.start_char,
                       n.end_char, n.type, n.text, n.surface, n.how
                FROM ({NAMES}) n JOIN units u USING (unit_hash)
                JOIN placements pl ON pl.unit_id = u.unit_id AND pl.doc_id = n.doc_id
                JOIN documents d ON d.doc_id = n.doc_id
                WHERE n.recognizer = 'spacy'"""
        ).fetchall()
    starts: dict[str, list[int]] = {}
    count = defaultdict(lambda: [0, 0, 0])  # names, filter-grade, right filter-grade
    hows: dict[str, Counter] = defaultdict(Counter)  # type -> (how, right) -> filter-grade
    for doc_id, path, unit_id, blob, text, s, e, type_, mtext, surface, how in rows:
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
            right = gold[path].get(span) == TYPES[type_]
            c[1] += 1
            c[2] += right
            hows[TYPES[type_]][(how, right)] += 1
    out = []
    for t in ("PERSON", "ORG", "GPE"):
        n_gold = sum(v == t for spans in gold.values() for v in spans.values())
        names, grade, right = count[t]
        made = ", ".join(
            f"{how} {hows[t][(how, True)]}/{hows[t][(how, True)] + hows[t][(how, False)]}"
            for how in ("found", "typed", "carried", "added")
            if hows[t][(how, True)] + hows[t][(how, False)]
        )
        out.append([t, n_gold, names, grade, right, right / grade if grade else 0.0,
                    right / n_gold if n_gold else 0.0, made])  # fmt: skip
    return out


SETTINGS = (
    '[recognizers]\ndisable = ["gliner", "acronyms", "dates", "quantities", "identifiers", '
    '"references"]\n'
)
SCORED = {"PERSON": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC"}
HALVES = {"tune": 0, "held": 1}
Key = tuple[str, int, str, str]  # (file, line, surface, type)


def gold_names(root: Path, gold: dict[str, dict[tuple[int, int], str]]) -> Counter[Key]:
    back = {"PERSON": "PER", "ORG": "ORG", "GPE": "LOC"}
    out: Counter[Key] = Counter()
    for path, spans in gold.items():
        text = (root / path).read_text(encoding="utf-8")
        for (a, b), t in spans.items():
            out[(path, text.count("\n", 0, a) + 1, text[a:b], back[t])] += 1
    return out


def raw_names(root: Path, paths: list[str], model: SpacyRecognizer, cache: Path) -> Counter[Key]:
    """``nlp.pipe`` on each sentence (line) alone; cached by the pipeline's identity."""
    if cache.exists():
        return Counter({tuple(k): n for k, n in json.loads(cache.read_text())})
    lines = [
        (path, i, line)
        for path in paths
        for i, line in enumerate((root / path).read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]
    out: Counter[Key] = Counter()
    nlp = model.load()
    for (path, i, _), doc in zip(
        lines, nlp.pipe((x for _, _, x in lines), batch_size=256), strict=True
    ):
        for e in doc.ents:
            if e.label_ in SCORED:
                out[(path, i, e.text, SCORED[e.label_])] += 1
    cache.write_text(json.dumps([[list(k), n] for k, n in out.items()]))
    return out


def kbx_names(root: Path, in_context: bool) -> tuple[Counter[Key], dict[str, Counter[Key]]]:
    """kbx's names placed back on their lines: as recognized, or as the entity layer reads
    them (after the document context); and those by how the context made them."""
    source = (
        NAMES
        if in_context
        else """SELECT DISTINCT pl.doc_id, m.unit_hash, m.start_char, m.end_char, m.type,
                       m.text, NULL, m.recognizer, 'found' AS how
                FROM mentions m JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
                WHERE m.recognizer = 'spacy' AND m.key IS NULL"""
    )
    with Index.for_root(root).reader() as con:
        rows = con.execute(
            f"""SELECT d.path, pl.offsets, u.text, n.start_char, n.type, n.text, n.how
                FROM ({source}) n JOIN units u USING (unit_hash)
                JOIN placements pl ON pl.doc_id = n.doc_id AND pl.unit_id = u.unit_id
                JOIN documents d ON d.doc_id = n.doc_id"""
        ).fetchall()
    out: Counter[Key] = Counter()
    made: dict[str, Counter[Key]] = defaultdict(Counter)
    for path, blob, text, start, type_, mtext, how in rows:
        if type_ in SCORED:
            key = (path, locate(unpack(blob), text, start).line, mtext, SCORED[type_])
            out[key] += 1
            made[how][key] += 1
    return out, made


def prf(gold: Counter, found: Counter) -> tuple[int, int, int, float, float, float]:
    right = sum((gold & found).values())
    g, f = sum(gold.values()), sum(found.values())
    p, r = (right / f if f else 0.0), (right / g if g else 0.0)
    return g, f, right, p, r, (2 * p * r / (p + r) if p + r else 0.0)


def by_type(gold: Counter, found: Counter, t: str | None) -> tuple:
    def keep(c: Counter) -> Counter:
        return Counter({k: n for k, n in c.items() if t is None or k[3] == t})

    return prf(keep(gold), keep(found))


def errors(gold: Counter, found: Counter, n: int) -> tuple[list, list]:
    """The most frequent misses and false positives, by (surface, type)."""

    def top(c: Counter) -> list:
        by = Counter()
        for (_, _, s, t), k in c.items():
            by[(s, t)] += k
        return by.most_common(n)

    return top(gold - found), top(found - gold)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("eval", type=Path, help="the eval folder (holds ner/conll2003)")
    p.add_argument("--keep", type=Path, default=Path("/tmp/kbx-ner"), help="index folders")
    p.add_argument("--errors", type=int, default=25, help="error-list length")
    args = p.parse_args()
    docs = documents(args.eval / CONLL)
    model = SpacyRecognizer()
    rows, hows, kept = [], [], {}
    for half, parity in HALVES.items():
        root = args.keep / f"conll-{half}"
        gold_spans = write(root, docs, parity)
        (root / "kbx.toml").write_text(SETTINGS, encoding="utf-8")
        started = time.perf_counter()
        index(root)
        took = time.perf_counter() - started
        gold = gold_names(root, gold_spans)
        cache = args.keep / f"raw-{half}-{model.info.version}.json"
        in_context, made = kbx_names(root, True)
        systems = {
            "raw nlp.pipe": raw_names(root, sorted(gold_spans), model, cache),
            "kbx units": kbx_names(root, False)[0],
            "kbx in context": in_context,
        }
        kept[half] = (gold, in_context)
        for how, c in sorted(made.items()):
            right = sum((gold & c).values())
            hows.append([half, how, sum(c.values()), right, right / sum(c.values())])
        for t in ("PER", "ORG", "LOC", None):
            raw_f1 = by_type(gold, systems["raw nlp.pipe"], t)[5]
            for name, found in systems.items():
                g, f, right, pr, rc, f1 = by_type(gold, found, t)
                rows.append([half, t or "micro", name, g, f, right, pr, rc, f1, f1 - raw_f1])
        print(f"{half}: {len(gold_spans)} documents, indexed in {took:.1f} s")
    heads = ["half", "type", "system", "gold", "found", "right", "P", "R", "F1", "F1 - raw"]
    print(f"\n{model.info.version}\n\n" + table(heads, rows, right=3))
    print("\nkbx's names in context by how the document made them (right: in gold)\n")
    print(table(["half", "how", "names", "right", "precision"], hows, right=2))
    misses, wrong = errors(*kept["tune"], args.errors)
    print("\nTop misses of kbx in context (tune half): surface, type, count")
    print("; ".join(f"{s} {t} {k}" for (s, t), k in misses))
    print("\nTop false positives of kbx in context (tune half): surface, type, count")
    print("; ".join(f"{s} {t} {k}" for (s, t), k in wrong))


if __name__ == "__main__":
    main()
