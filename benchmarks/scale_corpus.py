"""The scale benchmark's corpus: Markdown files remixed from real text, so units stay distinct.

Why remix: the real text under ``../shared/eval`` makes about 20k units, and a 200k-unit
corpus of copies would collapse (units are content-addressed). So a pool of real
sentences is gathered (clean text of the Node.js pages, HTML docs and LaTeX papers as kbx
extracts them; SciFact abstracts; MeasEval paragraphs; TempEval-3 news stripped of TimeML;
CoNLL-2003 news), and document ``i`` is drawn from a generator seeded with ``i``:

* a title and four sections (the first under the title) whose headings are drawn from the
  pool's real headings and titles;
* each section's body is a run of consecutive sentences of one source document (from a
  random start, moving on to another document of the same source when it ends), of
  180-330 words, where each sentence is swapped with probability 0.25 for one from
  anywhere in the pool; in two or three paragraphs. So a unit reads like its source (its
  term statistics are real text's) and no two units are alike;
* front matter with a date drawn uniformly from 2000-2025 (the date filter's field);
* in 1% of sections, a sentence citing ``doi:10.1145/1629575.1629596`` (the entity of the
  selective filter);
* the path ``b{i % 10}/{source}/{i:06d}.md`` (the path glob ``b3/*`` keeps a tenth).

A corpus of ``n`` documents is the first ``n`` of this sequence, so a small corpus is a
prefix of a large one. A document's source is drawn in proportion to the sources' sizes.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from pathlib import Path

from kbx.extract.document import extract

DOI = "10.1145/1629575.1629596"
ENTITY = f"doi:{DOI}"
CITE = f"The verified kernel behind this is described in doi:{DOI}."
ENTITY_SHARE = 0.01
SECTIONS = 4
SWAP = 0.25
GLOB = "b3/*"
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
WORD = re.compile(r"\w+")
FIRST_DAY = dt.date(2000, 1, 1).toordinal()
LAST_DAY = dt.date(2025, 12, 31).toordinal()


def _sentences(text: str) -> list[str]:
    return [s for s in (" ".join(p.split()) for p in SENTENCE.split(text)) if len(s) > 20]


def _extracted(folder: Path, suffixes: tuple[str, ...]) -> tuple[list[list[str]], list[str]]:
    """Sentences per file and the headings of files kbx extracts (Markdown, HTML, LaTeX)."""
    docs, heads = [], []
    for p in sorted(folder.rglob("*")):
        if p.suffix not in suffixes or not p.is_file():
            continue
        try:
            doc = extract(p.name, p.read_bytes())
        except Exception:  # noqa: BLE001 - a file kbx refuses is simply not in the pool
            continue
        sents = [s for u in doc.units if u.kind == "prose" for s in _sentences(u.text)]
        if sents:
            docs.append(sents)
        heads += [h for u in doc.units for h in u.heading_path if 3 <= len(h) <= 80]
    return docs, heads


def _pool(eval_dir: Path) -> dict:
    """Real sentences by source (a list of documents, each a list of sentences) and real
    headings."""
    sources: dict[str, list[list[str]]] = {}
    heads: list[str] = []
    for name, folder, suffixes in (
        ("nodejs", eval_dir / "corpora" / "nodejs", (".md", ".mdx")),
        ("html", eval_dir / "formats" / "html", (".html", ".htm")),
        ("latex", eval_dir / "formats" / "latex", (".tex",)),
    ):
        sources[name], h = _extracted(folder, suffixes)
        heads += h
    scifact = []
    with open(eval_dir / "beir_scifact" / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            scifact.append(_sentences(row["text"]))
            heads.append(row["title"][:80])
    sources["scifact"] = [s for s in scifact if s]
    measeval = eval_dir / "quantities" / "measeval"
    sources["measeval"] = [
        s for p in sorted(measeval.glob("*_text/*.txt")) if (s := _sentences(p.read_text("utf-8")))
    ]
    tml = sorted((eval_dir / "tempeval3" / "tbaq-cleaned").rglob("*.tml"))
    sources["tempeval"] = [
        s
        for p in tml
        if (m := re.search(r"<TEXT>(.*)</TEXT>", p.read_text("utf-8"), re.S))
        and (s := _sentences(re.sub(r"<[^>]+>", "", m.group(1))))
    ]
    conll, cur = [], []
    for line in (
        (eval_dir / "ner" / "conll2003" / "conll2003_dev.txt").read_text("utf-8").split("\n")
    ):
        if line.startswith("-DOCSTART-"):
            conll.append(cur)
            cur = []
        elif line.strip():
            cur.append(line.split(" ")[0])
        elif cur and cur[-1] != "\n":
            cur.append("\n")
    conll.append(cur)
    sources["conll"] = [
        s for toks in conll if (s := [x for x in " ".join(toks).split(" \n ") if len(x) > 20])
    ]
    return {"sources": sources, "headings": sorted(set(heads))}


def load_pool(eval_dir: Path, cache: Path) -> dict:
    """The sentence pool, built once and kept in ``cache``."""
    path = cache / "pool.json"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(_pool(eval_dir)), "utf-8")
        tmp.replace(path)
    return json.loads(path.read_text("utf-8"))


def _literal(paragraph: str) -> str:
    """A paragraph that Markdown reads as text, not as a heading, list, quote or block."""
    return "\\" + paragraph if paragraph[0] in "#>*+-|`<~=_[" else paragraph


class Remix:
    """Documents drawn from the pool; document ``i`` depends on ``i`` alone."""

    def __init__(self, pool: dict):
        self.sources = pool["sources"]
        self.names = sorted(self.sources)
        self.weights = [sum(map(len, self.sources[n])) for n in self.names]  # by sentences
        self.heads = pool["headings"]
        self.everything = [d for n in self.names for d in self.sources[n]]

    def document(self, i: int) -> tuple[str, str]:
        """Document ``i``: its root-relative path and Markdown text."""
        rng = random.Random(1_000_003 * i + 17)
        source = rng.choices(self.names, self.weights)[0]
        day = dt.date.fromordinal(rng.randint(FIRST_DAY, LAST_DAY))
        title = json.dumps(rng.choice(self.heads), ensure_ascii=False)
        out = [f"---\ntitle: {title}\ndate: {day.isoformat()}\n---\n"]
        docs = self.sources[source]
        d = rng.randrange(len(docs))
        pos = rng.randrange(len(docs[d]))
        for section in range(SECTIONS):  # the first under the title, the rest under ##
            want, words, body = rng.randint(180, 330), 0, []
            while words < want:
                if pos >= len(docs[d]):
                    d, pos = rng.randrange(len(docs)), 0
                s = docs[d][pos]
                pos += 1
                if rng.random() < SWAP:
                    s = rng.choice(rng.choice(self.everything))
                body.append(s)
                words += len(WORD.findall(s))
            if rng.random() < ENTITY_SHARE:
                body.insert(rng.randrange(len(body) + 1), CITE)
            n_cuts = min(len(body) - 1, rng.randint(1, 2))
            cuts = sorted(rng.sample(range(1, len(body)), n_cuts))
            bounds = zip([0, *cuts], [*cuts, len(body)], strict=True)
            paras = "\n\n".join(_literal(" ".join(body[a:b])) for a, b in bounds)
            out.append(f"{'##' if section else '#'} {rng.choice(self.heads)}\n\n{paras}\n")
        return f"b{i % 10}/{source}/{i:06d}.md", "\n".join(out)


def write_corpus(folder: Path, n_docs: int, pool: dict) -> None:
    """The first ``n_docs`` documents under ``folder``; a finished corpus is marked (in a
    hidden file, which kbx does not index) and kept."""
    done = folder / ".complete"
    if done.exists():
        return
    remix = Remix(pool)
    for i in range(n_docs):
        rel, text = remix.document(i)
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    done.write_text(str(n_docs))
