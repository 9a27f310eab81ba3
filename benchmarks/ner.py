"""The spaCy recognizer beside raw spaCy, and the cost of a GLiNER pass.

* **Quality, WNUT-17 dev** (``ner/wnut17``): the 1,009 posts are written as plain-text
  documents of 50 posts each (a post per paragraph). Raw spaCy runs ``nlp.pipe`` on each
  whole document; kbx extracts the same files, cuts them into units and runs its spaCy
  recognizer on the units, and each mention is mapped back to the document through the
  unit's offset map. Both use the same pipeline with only NER enabled, and the same type
  mapping (PERSON→person; GPE, LOC, FAC→location; ORG→corporation; PRODUCT→product;
  WORK_OF_ART→creative-work; NORP→group). Exact span and type, per type and micro.
  WNUT is noisy social-media text with rare entities; the point is the difference between
  the two columns, not the level (en_core_web_sm is trained on news).
* **Throughput, Node.js**: the units of the first ``--files`` blog posts, indexed with the
  rule-based recognizers; then ``reprocess`` of the spaCy recognizer alone (1 worker: the
  recognizer with kbx's batching, storage and writes), beside ``nlp.pipe`` over the same
  unit texts with the same pipeline and batch size. Alternating, ``--repeat`` rounds,
  medians. The same for the tiny GLiNER model the tests build (plumbing cost only), its
  raw peer given the same windows kbx cuts the units into (the model cannot take more).

    .venv/bin/python benchmarks/ner.py [--eval ../shared/eval] [--files 150] [--repeat 3]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import eval_arg, table

from kbx.extract import extract
from kbx.extract.textmap import locate
from kbx.indexing.ingest import index
from kbx.indexing.reprocess import reprocess
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.gliner_ner import GlinerRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.recognizers.spacy_ner import SpacyRecognizer
from kbx.store.db import Index

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers import make_tiny_gliner  # noqa: E402  (the tests' tiny model, built here)

TO_WNUT = {
    "PERSON": "person",
    "GPE": "location",
    "LOC": "location",
    "FAC": "location",
    "ORG": "corporation",
    "PRODUCT": "product",
    "WORK_OF_ART": "creative-work",
    "NORP": "group",
}
POSTS_PER_DOC = 50

Span = tuple[int, int, str]


def wnut_documents(path: Path) -> list[tuple[str, set[Span]]]:
    """Documents of 50 posts (tokens joined by spaces, a blank line between posts) and
    their gold spans as character offsets."""
    posts, cur = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if cur:
                posts.append(cur)
            cur = []
            continue
        token, _, tag = line.partition("\t")
        cur.append((token, tag.strip()))
    if cur:
        posts.append(cur)
    docs = []
    for i in range(0, len(posts), POSTS_PER_DOC):
        text, gold = "", set()
        for post in posts[i : i + POSTS_PER_DOC]:
            if text:
                text += "\n\n"
            open_: list | None = None
            for j, (token, tag) in enumerate(post):
                if j:
                    text += " "
                start = len(text)
                text += token
                if tag.startswith("B-") or (tag.startswith("I-") and open_ is None):
                    if open_:
                        gold.add(tuple(open_))
                    open_ = [start, len(text), tag[2:]]
                elif tag.startswith("I-") and open_:
                    open_[1] = len(text)
                else:
                    if open_:
                        gold.add(tuple(open_))
                    open_ = None
            if open_:
                gold.add(tuple(open_))
        docs.append((text, gold))
    return docs


def scores(pred: set[Span], gold: set[Span]) -> dict[str, tuple[float, float, float, int]]:
    """P, R, F1 and gold count per type, and micro over all."""
    out = {}
    for t in sorted({s[2] for s in gold}) + ["micro"]:
        p = {s for s in pred if t == "micro" or s[2] == t}
        g = {s for s in gold if t == "micro" or s[2] == t}
        tp = len(p & g)
        prec = tp / len(p) if p else 0.0
        rec = tp / len(g) if g else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out[t] = (prec, rec, f1, len(g))
    return out


def quality(eval_dir: Path, ner: SpacyRecognizer) -> tuple[list, int]:
    docs = wnut_documents(eval_dir / "ner" / "wnut17" / "emerging.dev.conll")
    nlp = ner.load()
    raw_pred, kbx_pred, gold, misaligned = set(), set(), set(), 0
    for n, (text, spans) in enumerate(docs):
        offset = n * 10_000_000  # one span space for all documents
        gold |= {(a + offset, b + offset, t) for a, b, t in spans}
        for e in nlp(text).ents:
            if e.label_ in TO_WNUT:
                raw_pred.add((e.start_char + offset, e.end_char + offset, TO_WNUT[e.label_]))
        doc = extract(f"wnut{n}.txt", text.encode())
        starts = [0]
        for line in text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        units = doc.units
        for unit, ms in zip(units, ner.recognize([u.text for u in units]), strict=True):
            for m in ms:
                if m.type not in TO_WNUT:
                    continue
                p = locate(unit.segments, unit.text, m.start)
                a = starts[p.line - 1] + p.col
                if text[a : a + len(m.text)] != m.text:
                    misaligned += 1
                    continue
                kbx_pred.add((a + offset, a + len(m.text) + offset, TO_WNUT[m.type]))
    raw, kbx = scores(raw_pred, gold), scores(kbx_pred, gold)
    rows = [
        [
            t,
            raw[t][3],
            *(f"{x:.3f}" for x in raw[t][:3]),
            *(f"{x:.3f}" for x in kbx[t][:3]),
            f"{kbx[t][2] - raw[t][2]:+.3f}",
        ]  # fmt: skip
        for t in raw
    ]
    return rows, misaligned


def throughput(eval_dir: Path, n_files: int, repeat: int, ner: SpacyRecognizer, tmp: Path):
    corpus = eval_dir / "corpora" / "nodejs"
    root = tmp / "sample"
    for f in sorted((corpus / "blog").rglob("*.md"))[:n_files]:
        target = root / f.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.read_bytes())
    idx = Index.for_root(root)
    index(root, registry=Registry([IdentifierRecognizer(), DateRecognizer()]), workers=2)
    with idx.reader() as con:
        texts = [t for (t,) in con.execute("SELECT text FROM units ORDER BY unit_id").fetchall()]
    tokens = sum(len(d) for d in ner.load().pipe(texts, batch_size=ner.batch_size))
    gliner = GlinerRecognizer(
        str(make_tiny_gliner(tmp / "gliner")), labels=["software", "dataset"], threshold=0.5
    )
    gliner.load()
    windows = [t[a:b] for t in texts for a, b in gliner._windows(t)]  # what the model can take
    times: dict[str, list[float]] = {}

    def clock(label: str, fn) -> None:
        started = time.perf_counter()
        fn()
        times.setdefault(label, []).append(time.perf_counter() - started)

    for round_ in range(repeat):
        nlp = ner.load()
        clock("raw nlp.pipe", lambda nlp=nlp: [d.ents for d in nlp.pipe(texts, batch_size=64)])
        ner.info = _bumped(ner.info, round_)
        clock(
            "kbx spacy recognizer, reprocess (1 worker)",
            lambda: reprocess(idx, Registry([ner]), workers=1),
        )
        clock(
            "raw GLiNER inference (the same windows)",
            lambda: gliner.load().inference(windows, gliner.labels, threshold=0.5, batch_size=8),
        )
        gliner.info = _bumped(gliner.info, round_)
        clock("kbx gliner recognizer, reprocess", lambda: reprocess(idx, Registry([gliner])))
    return texts, tokens, {k: statistics.median(v) for k, v in times.items()}


def _bumped(info, round_):
    import dataclasses

    return dataclasses.replace(info, version=f"{info.version.split('~')[0]}~{round_}")


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=150)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    eval_dir = args.eval.resolve()
    ner = SpacyRecognizer()
    rows, misaligned = quality(eval_dir, ner)
    print(f"### spaCy recognizer on WNUT-17 dev ({ner.info.version}; exact span and type)\n")
    heads = ["type", "gold", "raw P", "raw R", "raw F1", "kbx P", "kbx R", "kbx F1", "F1 diff"]
    print(table(heads, rows))
    print(f"\nkbx mentions that did not map back to their text: {misaligned}.\n")
    with tempfile.TemporaryDirectory() as tmp:
        texts, tokens, medians = throughput(eval_dir, args.files, args.repeat, ner, Path(tmp))
    n = len(texts)
    print(f"### NER throughput, {n} Node.js units ({tokens:,} tokens; medians of {args.repeat})\n")
    raw = medians["raw nlp.pipe"]
    out = []
    for label, secs in medians.items():
        peer = (
            raw
            if "spacy" in label or "nlp" in label
            else medians["raw GLiNER inference (the same windows)"]
        )
        out.append(
            [
                label,
                f"{secs:.2f}",
                f"{n / secs:,.0f}",
                f"{tokens / secs:,.0f}",
                f"{peer / secs:.0%}",
                f"{secs / n * 1000:.2f}",
            ]  # fmt: skip
        )
    heads = ["pass", "seconds", "units/s", "tokens/s", "of raw", "s per 1,000 units"]
    print(table(heads, out))
    kinds = Counter(m.type for ms in ner.recognize(texts[:200]) for m in ms)
    print(f"\nTypes in the first 200 units: {dict(kinds.most_common())}.")


if __name__ == "__main__":
    main()
