"""Precision of the spaCy names that filter on real technical text, judged by eye, and how
many right names still filter on news (CoNLL-2003 dev, against its gold spans).

A spaCy name filters (``links.filter``: ``--entity``, ``--type PERSON`` and the facets keep
it) only with evidence (``CONFIRMED`` in ``entities/build.py``): an alias of a known entity,
or named in two places of its document as one type (the model found it, or its short form,
twice, and never typed it two ways), and not made only of words the corpus writes as code.
Measured here:

* Technical corpora, each a seeded sample copied to a temporary (or ``--keep``) folder with a
  ``kbx.toml`` that keeps spaCy on (GLiNER and the test plugin's acronyms off) and indexed:
  ``nodejs`` (150 files of the Node.js website, seed 1: the rules were tuned looking at it),
  ``nodejs-held`` (150 other files of it, seed 2) and ``html-docs`` (the documentation sites
  of ``formats/html`` without the two manubot manuscripts), both held out.
* The sample: ``--draw N`` draws N passage links of PERSON, ORG or GPE entities that a spaCy
  name made and that filter, seeded, and appends them unlabelled to
  ``data/ner_filter_labels.jsonl`` (key: corpus, entity ID, unit hash; with the path, line
  and the kbx commit that drew them). ``--show`` prints the sample's passages with the name
  marked ⟦ ⟧ to label by reading: right when the marked text is a named entity of the
  entity's type in that passage (a person typed ORG is wrong; so is a product, protocol,
  library, identifier or heading). A run then reports, on the labelled sample, precision
  when drawn and now: the links that still filter, and those demoted to boost only.
* News: the CoNLL-2003 dev documents (even ones tuned on, odd ones held out), per type:
  the names as the entity layer reads them in context, filter-grade when the link to the
  entity each names there filters, by how the document made them (found, typed, carried,
  added: ``annotate/names.py``).

    .venv/bin/python benchmarks/ner_filter.py ../shared/eval [--keep DIR] [--draw 60] \
        [--show] [--corpora nodejs,nodejs-held,html-docs,conll-tune,conll-held]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import ner_news
from common import table

from kbx.entities.build import refresh, short_form
from kbx.gazetteer.entries import slug
from kbx.indexing.ingest import index
from kbx.store.db import Index

HERE = Path(__file__).resolve().parent
LABELS = HERE / "data" / "ner_filter_labels.jsonl"
SETTINGS = '[recognizers]\ndisable = ["gliner", "acronyms"]\n'
TYPES = ("PERSON", "ORG", "GPE")
# name -> (folder under the eval folder, file suffixes, path prefixes left out, files, seed,
# the corpus whose files are left out, role)
CORPORA = {
    "nodejs": ("corpora/nodejs", (".md", ".mdx"), (), 150, "1", None, "tuned on"),
    "nodejs-held": ("corpora/nodejs", (".md", ".mdx"), (), 150, "2", "nodejs", "held out"),
    "html-docs": ("formats/html", (".html", ".htm"), ("manubot/",), 150, "1", None, "held out"),
}
NEWS = {"conll-tune": (0, "tuned on"), "conll-held": (1, "held out")}


@dataclass
class Link:
    """One passage link a spaCy name made: a passage naming an entity."""

    path: str
    line: int
    unit_hash: str
    text: str
    entity_id: str
    type: str
    label: str
    filter: bool
    spans: list[tuple[int, int]]  # the spaCy mentions behind it (none: a carried short form)

    def key(self, corpus: str) -> tuple[str, str, str]:
        return (corpus, self.entity_id, self.unit_hash[:16])


def sample_files(eval_dir: Path, name: str) -> list[str]:
    """The seeded sample of root-relative paths of corpus ``name``."""
    sub, suffixes, skip, n, seed, exclude, _ = CORPORA[name]
    folder = eval_dir / sub
    files = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in suffixes
    )
    files = [f for f in files if not f.startswith(skip)]
    if exclude:
        files = sorted(set(files) - set(sample_files(eval_dir, exclude)))
    return sorted(random.Random(f"{seed}:{sub}").sample(files, min(n, len(files))))


def build(root: Path, copy: dict[str, Path]) -> float:
    """Index ``copy`` (relative path -> source file) in ``root``; a kept index is brought up
    to this kbx (recognizers re-run where their version changed, the entity layer rebuilt)."""
    fresh = not (root / ".kbx").exists()
    for rel, source in copy.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if fresh:
            shutil.copyfile(source, target)
    (root / "kbx.toml").write_text(SETTINGS, encoding="utf-8")
    started = time.perf_counter()
    report = index(root)
    if "spacy" in {name for name, _ in report.unavailable}:
        raise SystemExit(f"spaCy did not run: {report.unavailable}")
    with Index.for_root(root).writer() as con:
        refresh(con)
    return time.perf_counter() - started


def spacy_links(root: Path) -> list[Link]:
    """Every passage link of a PERSON, ORG or GPE entity that a spaCy name made: a spaCy
    mention in the passage names the entity (by alias, or as ``name:TYPE:surface``), or the
    passage holds the short form of a spaCy name of its document (carried by the document
    context, ``annotate/names.py``)."""
    with Index.for_root(root).reader() as con:
        owners: dict[str, str] = {}
        for entity_id, alias in con.execute(
            "SELECT entity_id, alias FROM aliases WHERE NOT starts_with(entity_id, 'name:')"
        ).fetchall():
            owners[alias.lower()] = min(owners.get(alias.lower(), entity_id), entity_id)
        mentions = con.execute(
            """SELECT unit_hash, start_char, end_char, type, text, coalesce(value, text)
               FROM mentions WHERE recognizer = 'spacy' AND key IS NULL"""
        ).fetchall()
        rows = con.execute(
            f"""SELECT d.doc_id, d.path, min(pl.start_line), u.unit_hash, u.text, l.entity_id,
                       e.type, e.label, l.filter
                FROM links l JOIN documents d USING (doc_id) JOIN units u USING (unit_id)
                JOIN placements pl ON pl.doc_id = l.doc_id AND pl.unit_id = l.unit_id
                JOIN entities e USING (entity_id)
                WHERE e.type IN {TYPES} AND e.source <> 'identifier'
                GROUP BY ALL"""
        ).fetchall()
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for unit_hash, a, b, type_, text, surface in mentions:
        target = owners.get(surface.lower()) or owners.get(text.lower())
        target = target or f"name:{type_.lower()}:{slug(surface)}"
        spans.setdefault((unit_hash, target), []).append((a, b))
    from_spacy = {(r[0], r[5]) for r in rows if (r[3], r[5]) in spans}  # (doc, entity)
    out = []
    for doc_id, path, line, unit_hash, text, entity_id, type_, label, f in rows:
        found = spans.get((unit_hash, entity_id), [])
        if found or entity_id.startswith("name:") or (doc_id, entity_id) in from_spacy:
            out.append(Link(path, line, unit_hash, text, entity_id, type_, label, f, found))
    return sorted(out, key=lambda x: (x.path, x.line, x.entity_id))


def marked(link: Link, width: int = 600) -> str:
    """The passage with the name marked ⟦…⟧, cut to ``width`` characters around it."""
    text, spans = link.text, list(link.spans)
    if not spans:  # a carried short form: its occurrences
        short = short_form(link.label, link.type) or link.label
        spans = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(short)}(?!\w)", text)]
    for a, b in sorted(spans, reverse=True):
        text = text[:a] + "⟦" + text[a:b] + "⟧" + text[b:]
    lo = max(0, text.find("⟦") - width // 2)
    cut = re.sub(r"\s+", " ", text[lo : lo + width])
    return ("…" if lo else "") + cut + ("…" if lo + width < len(text) else "")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if not n:
        return (math.nan, math.nan)
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (mid - half, mid + half)


def load_labels() -> list[dict]:
    if not LABELS.exists():
        return []
    return [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line]


def save_labels(items: list[dict]) -> None:
    LABELS.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(i, ensure_ascii=False) for i in items]
    LABELS.write_text("\n".join(lines) + "\n", encoding="utf-8")


def draw(corpus: str, links: list[Link], n: int, items: list[dict], commit: str) -> list[dict]:
    """``n`` more filtering links of ``corpus`` (seeded), appended unlabelled."""
    have = {(i["corpus"], i["entity_id"], i["unit"]) for i in items}
    pool = [x for x in links if x.filter and x.key(corpus) not in have]
    picked = random.Random(f"{corpus}:draw:{len(have)}").sample(pool, min(n, len(pool)))
    return items + [
        {"corpus": corpus, "entity_id": x.entity_id, "unit": x.unit_hash[:16], "path": x.path,
         "line": x.line, "type": x.type, "drawn_by": commit, "right": None, "note": ""}
        for x in picked
    ]  # fmt: skip


def judged(corpus: str, links: list[Link], items: list[dict]) -> list[list]:
    """The labelled sample of ``corpus`` against the links now: a table row per commit that
    drew links (each drew from the links that filtered under its rules)."""
    now = {x.key(corpus): x for x in links}
    filtering = [x for x in links if x.filter]
    types = ", ".join(f"{t} {n}" for t, n in Counter(x.type for x in filtering).most_common())
    rows = []
    for commit in dict.fromkeys(i["drawn_by"] for i in items if i["corpus"] == corpus):
        mine = [i for i in items if i["corpus"] == corpus and i["drawn_by"] == commit]
        mine = [i for i in mine if i["right"] is not None]
        kept = [i for i in mine if (x := now.get((corpus, i["entity_id"], i["unit"]))) and x.filter]
        dropped = [i for i in mine if i not in kept]
        right, kept_right = sum(i["right"] for i in mine), sum(i["right"] for i in kept)
        lo, hi = wilson(kept_right, len(kept))
        rows.append(
            [
                corpus,
                commit,
                len(mine),
                f"{right}/{len(mine)} = {right / max(1, len(mine)):.2f}",
                f"{kept_right}/{len(kept)} = {kept_right / max(1, len(kept)):.2f} "
                f"[{lo:.2f}, {hi:.2f}]",
                f"{sum(i['right'] for i in dropped)}/{len(dropped)}",
                f"{len(filtering)} ({types})",
                CORPORA[corpus][6],
            ]
        )
    return rows


def show(corpus: str, links: list[Link], items: list[dict], unlabelled_only: bool) -> None:
    now = {x.key(corpus): x for x in links}
    for n, i in enumerate(x for x in items if x["corpus"] == corpus):
        if unlabelled_only and i["right"] is not None:
            continue
        x = now.get((corpus, i["entity_id"], i["unit"]))
        state = "gone" if x is None else "filters" if x.filter else "boosts"
        print(f"[{corpus} {n}] {i['path']}:{i['line']} {i['entity_id']} ({i['type']}; now "
              f"{state}) right={i['right']} {i['note']}")  # fmt: skip
        if x is not None:
            print(f"      {marked(x)}\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("eval", type=Path, help="the evaluation data folder (../shared/eval)")
    p.add_argument("--keep", type=Path, help="build (or reuse) the indexes here")
    p.add_argument("--draw", type=int, default=0, help="links to add to each corpus's sample")
    p.add_argument("--show", action="store_true", help="print the sample's passages")
    p.add_argument("--corpora", default=",".join([*CORPORA, *NEWS]))
    args = p.parse_args()
    eval_dir = args.eval.resolve()
    wanted = args.corpora.split(",")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    items, rows, news = load_labels(), [], []
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        for name in (c for c in CORPORA if c in wanted):
            folder = eval_dir / CORPORA[name][0]
            files = sample_files(eval_dir, name)
            secs = build(base / name, {f: folder / f for f in files})
            links = spacy_links(base / name)
            print(f"{name}: {len(files)} files, {secs:.0f} s, {sum(x.filter for x in links)} "
                  f"of {len(links)} spaCy links filter", file=sys.stderr)  # fmt: skip
            if args.draw:
                items = draw(name, links, args.draw, items, commit)
                save_labels(items)
            if args.show:
                show(name, links, items, unlabelled_only=bool(args.draw))
            rows += judged(name, links, items)
        docs = ner_news.documents(eval_dir / ner_news.CONLL)
        for name in (c for c in NEWS if c in wanted):
            parity, role = NEWS[name]
            root = base / name
            gold = ner_news.write(root, docs, parity)
            build(root, {})
            news += [[name, role, *r] for r in ner_news.scores(root, gold)]
    unlabelled = sum(i["right"] is None for i in items)
    heads = ["corpus", "drawn by kbx", "labelled", "precision when drawn",
             "precision of those filtering now (95% CI)", "right among demoted",
             "links filtering now", "role"]  # fmt: skip
    print(f"### spaCy names that filter, technical text (labelled sample; kbx {commit})\n")
    print(table(heads, rows))
    if news:
        print("\n### Names on news: CoNLL-2003 dev (exact span and type against gold)\n")
        heads = ["split", "role", "type", "gold", "spaCy names", "filter-grade", "right",
                 "precision", "recall", "filter-grade by how (right/all)"]  # fmt: skip
        print(table(heads, news, right=3))
    if unlabelled:
        print(f"\nwarning: {unlabelled} sampled links have no label yet", file=sys.stderr)


if __name__ == "__main__":
    main()
