"""Precision of the spaCy names that filter, on real technical text, judged by eye.

A spaCy name filters (``links.filter``: ``--entity``, ``--type PERSON`` and the facets keep
it) only with evidence: it is an alias of a known entity (a gazetteer entry, an author), or
its document names it at least twice, always as one type; any other name only boosts
(``entities/layer.py``). This script measures what that leaves:

* From each technical corpus of the eval folder (the Node.js website's Markdown, and the
  HTML documentation sites of ``formats/html`` without the two manubot manuscripts, which
  are scientific reviews, not software docs), a seeded sample of ``--files`` files is
  copied to a temporary folder with a ``kbx.toml`` that keeps spaCy on (GLiNER and the
  test plugin's acronyms off) and indexed with ``kbx.indexing.ingest.index``.
* Every passage link (doc, passage, entity) that a spaCy name made is classified from the
  index file: ``direct`` (a spaCy mention in the passage links to the entity: by alias to a
  known entity, or as ``name:TYPE:surface``) or ``carried`` (no spaCy mention there: the
  short form of a multi-word name, ``Dahl`` after ``Ryan Dahl``, see ``_carried``), with
  the evidence that makes it filter. "Before" is the rule this replaced: every link from a
  mention of a filtering type (PERSON, ORG, GPE, LOC, NORP, FAC) filtered.
* Seeded samples of ``--sample`` links that filter, and as many that were demoted (a
  filtering type without evidence: they filtered before and only boost now), are printed
  with their passage, the name marked with ⟦ ⟧. The judgements (is the marked text a named
  entity of that type, in that passage?) are recorded below in ``LABELS``, keyed by
  corpus, entity ID and the passage's unit hash (first 12 hex digits), so a rerun
  reports the same precision; an item with no label is counted apart and warned about.

    .venv/bin/python benchmarks/ner_filter.py ../shared/eval [--files 150] [--seed 1] \
        [--sample 30] [--summary]
"""

from __future__ import annotations

import argparse
import math
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from common import table

from kbx.entities.build import short_form
from kbx.gazetteer.entries import slug
from kbx.indexing.ingest import index
from kbx.recognizers.spacy_ner import BOOST_ONLY
from kbx.store.db import Index

# name -> (folder under the eval folder, file suffixes, path prefixes left out)
CORPORA = {
    "nodejs": ("corpora/nodejs", (".md", ".mdx"), ()),
    "html-docs": ("formats/html", (".html", ".htm"), ("manubot/",)),
}
SETTINGS = '[recognizers]\ndisable = ["gliner", "acronyms"]\n'

# (corpus, entity_id, unit hash[:12]) -> is the marked text a named entity of that type here
# Right: a person's name as PERSON, a company or body as ORG, a place as GPE/LOC, and so
# on, with the span covering the name. A person tagged ORG or GPE is wrong; so is a product,
# a protocol, a library, a code identifier or a heading, whatever its type.
LABELS: dict[tuple[str, str, str], bool] = {
    # nodejs, links that filter
    ("nodejs", "name:org:rene", "b748330a78cc"): False,
    ("nodejs", "name:org:javascript", "1d95f15284c7"): False,
    ("nodejs", "name:person:merge-config", "21ad2513c2e1"): False,
    ("nodejs", "name:person:anna-henningsen", "8c16cdc67581"): True,
    (
        "nodejs",
        "name:person:https-nodejs-org-dist-v14-21-2-node-v14-21-2-pkg-macos-intel",
        "18192f8606e9",
    ): False,
    ("nodejs", "person:michael-dawson", "dc2f608d37f9"): True,
    ("nodejs", "name:gpe:leko", "fc35be9d2c11"): False,
    ("nodejs", "name:person:juan-jose-arboleda", "7aa27e93fbda"): True,
    ("nodejs", "name:person:anna-henningsen", "5cf5821130c4"): True,
    ("nodejs", "name:person:roman-shtylman", "9bd65b5adbb7"): True,
    ("nodejs", "name:org:pbmac1", "97937200f499"): False,
    ("nodejs", "name:org:esm", "9a6e129ed7c4"): False,
    ("nodejs", "name:person:gireesh-punathil", "69b21cae19a3"): True,
    ("nodejs", "name:person:brian-white", "403d6201f702"): True,
    ("nodejs", "name:person:rodion-abdurakhimov", "75f04725d29b"): True,
    ("nodejs", "name:org:stefanstojanovic", "ca102dba27f0"): False,
    ("nodejs", "name:person:tim-perry", "55374e58e59d"): True,
    ("nodejs", "person:stewart-x-addison", "ff06885d48dc"): True,
    ("nodejs", "person:danielle-adams", "69b21cae19a3"): True,
    ("nodejs", "name:person:ali-ijaz-sheikh", "5b3f90f48a93"): True,
    ("nodejs", "name:person:miguel-marcondes-filho", "bee13ed4776f"): True,
    ("nodejs", "person:shelley-vohr", "d716ecdeb286"): True,
    ("nodejs", "name:person:jon-moss", "40cee47dc97e"): True,
    ("nodejs", "name:person:rich-trott", "943fd60f4b2c"): True,
    ("nodejs", "person:james-m-snell", "4bebe95a053c"): True,
    ("nodejs", "person:michael-zasso", "e9aa24b571d6"): True,
    ("nodejs", "name:org:ci", "130cf0df830b"): False,
    ("nodejs", "name:person:facundo-tuesca", "15c52bcb4558"): True,
    ("nodejs", "name:person:robert-nagy", "0fc416f16396"): True,
    ("nodejs", "name:org:sarat-addepalli", "7c294d2e99fc"): False,
    # nodejs, links demoted
    ("nodejs", "name:norp:non-node", "8f01860b9e69"): False,
    ("nodejs", "name:org:alba-mendez", "0201b12496e2"): False,
    ("nodejs", "name:org:zlib", "5460fd07686e"): False,
    ("nodejs", "name:gpe:utf-8", "33fd7d7697b8"): False,
    ("nodejs", "name:org:poojadurgad", "c72f7812c54c"): False,
    ("nodejs", "name:gpe:node-js", "9c796728000d"): False,
    ("nodejs", "name:person:assert-test", "bd08a2b39261"): False,
    ("nodejs", "name:org:ouyang-yadong", "9d6ac886f742"): False,
    ("nodejs", "name:person:macos-64-bit", "23f70ddff54c"): False,
    ("nodejs", "name:norp:b08687f739", "cedaad94fddd"): False,
    ("nodejs", "name:person:working-groups-md", "58b635dc8a5e"): False,
    ("nodejs", "name:org:createenvironment", "9e6cbbbcd961"): False,
    ("nodejs", "name:org:dsa", "fe2d4a72afb7"): False,
    ("nodejs", "name:person:histogram", "a46f6630c456"): False,
    ("nodejs", "name:gpe:md-lint", "eeab35f8b8c7"): False,
    ("nodejs", "name:org:tsarevich-dmitry", "6926927195dc"): False,
    ("nodejs", "name:org:setimmediate", "274e028a791e"): False,
    ("nodejs", "name:gpe:node", "9a6e129ed7c4"): False,
    ("nodejs", "name:person:godaddy", "f1a26c46315f"): False,
    ("nodejs", "name:org:aix", "52bf8ee7ffd8"): False,
    ("nodejs", "name:person:max", "e0fedd700830"): False,
    ("nodejs", "name:gpe:node-js", "9f375048e941"): False,
    ("nodejs", "name:org:aix", "f1c1bb9bd942"): False,
    ("nodejs", "name:org:github", "cce4ca6a015b"): True,
    (
        "nodejs",
        "name:person:https-nodejs-org-dist-v19-0-0-win-x64-node-exe-macos-64-bit",
        "d716ecdeb286",
    ): False,
    ("nodejs", "name:org:cjs-esm", "6de01dc1efd1"): False,
    ("nodejs", "name:norp:windows-64", "7847ab571c5d"): False,
    ("nodejs", "name:person:ssl-op-single-dh-use", "16ab6e7bf76f"): False,
    ("nodejs", "name:org:gha-macos", "fe3de7abc6c4"): False,
    ("nodejs", "name:person:linux-s390x", "7847ab571c5d"): False,
    # html-docs, links that filter
    ("html-docs", "name:org:ttproxy", "96d9910372c0"): False,
    ("html-docs", "name:org:ssh", "b0b2b02aec90"): False,
    ("html-docs", "name:org:ansi", "c2af050dced5"): False,
    ("html-docs", "name:org:kex", "e2d83a627517"): False,
    ("html-docs", "name:org:home-and-end", "bb30e674043e"): False,
    ("html-docs", "name:person:nathanael-schaeffer", "3ae44a1b9d1b"): True,
    ("html-docs", "name:org:telnet", "950d12c237e8"): False,
    ("html-docs", "name:person:tr-2", "b64e58a8fc05"): False,
    ("html-docs", "name:fac:additional-plug", "dc16a70ea425"): False,
    ("html-docs", "name:org:tek-window", "4ac4923551fe"): False,
    ("html-docs", "name:org:name", "e8076e88e531"): False,
    ("html-docs", "name:org:ttproxy", "263c811e1d10"): False,
    ("html-docs", "name:org:ttxresizemenu", "ab2c3448fa7a"): False,
    ("html-docs", "name:org:ttssh", "2e65d31cce5d"): False,
    ("html-docs", "name:person:tera-term", "97c468403d3c"): False,
    ("html-docs", "name:org:vt-window", "e7edf0d7d4e2"): False,
    ("html-docs", "name:person:command-line-interface", "5f736f5ad877"): False,
    ("html-docs", "name:org:logtimestampformat", "7acf6b998907"): False,
    ("html-docs", "name:org:telnet", "ee0068a6c93c"): False,
    ("html-docs", "name:org:keyboardinteractive", "1c0e96dbd70e"): False,
    ("html-docs", "name:org:teraterm-menu", "f39463af84e4"): False,
    ("html-docs", "name:org:ime", "3934e4fc11a7"): False,
    ("html-docs", "name:gpe:entity-id", "3cc715695918"): False,
    ("html-docs", "name:org:ttssh", "0c1ccb304611"): False,
    ("html-docs", "name:org:pandas-dataframe", "dec32a7f9d8b"): False,
    ("html-docs", "name:org:sprintf2", "97c468403d3c"): False,
    ("html-docs", "name:org:teraterm-menu", "bb30e674043e"): False,
    ("html-docs", "name:person:inno-setup", "15abcd8eed29"): False,
    ("html-docs", "name:org:zlib", "4dc8e621f54e"): False,
    ("html-docs", "name:person:misc", "b64d8ac43ae9"): False,
    # html-docs, links demoted
    ("html-docs", "name:norp:blowfish", "b58a41257dda"): False,
    ("html-docs", "name:norp:k", "47eb9707cec3"): False,
    ("html-docs", "name:org:ankit-barik-made", "898a657521f3"): False,
    ("html-docs", "name:person:max", "e8c2da1f0ca9"): False,
    ("html-docs", "name:org:a-j-1-a-j-2-a-j", "fc7a54e10187"): False,
    ("html-docs", "name:org:zmodem", "43f0a4058524"): False,
    ("html-docs", "name:org:eukulele", "d22ae6772212"): False,
    ("html-docs", "name:org:french-lng", "49b6a6099adb"): False,
    ("html-docs", "name:gpe:francois", "49b6a6099adb"): False,
    ("html-docs", "name:person:hmac-sha1-96", "815f8168c2e7"): False,
    ("html-docs", "name:person:down", "7b866b1fc337"): False,
    ("html-docs", "name:person:matplotlib", "bb1d515ecd32"): False,
    ("html-docs", "name:org:p", "d9cf9100abbe"): False,
    ("html-docs", "name:org:reverse-video", "b64d8ac43ae9"): False,
    ("html-docs", "name:org:condon-shortley", "25d02645eff1"): False,
    ("html-docs", "name:org:sntrup761x25519-sha512-openssh-com", "7897354f22bc"): False,
    ("html-docs", "name:org:connectingtimeout", "96d9910372c0"): False,
    ("html-docs", "name:person:y-x", "ecce8b926ed5"): False,
    ("html-docs", "name:org:oniguruma", "576c16554a79"): False,
    ("html-docs", "name:gpe:u-2000", "e7edf0d7d4e2"): False,
    ("html-docs", "name:org:parity", "ba3d220be2aa"): False,
    ("html-docs", "name:org:teraterm-license-file-license-txt", "75353b94cc74"): False,
    ("html-docs", "name:person:logrotatesizetype", "87d1878c49f8"): False,
    ("html-docs", "name:person:kanji", "acc62e13c1d9"): False,
    ("html-docs", "name:org:byte", "26cef131bb5d"): False,
    ("html-docs", "name:org:hypothesize", "808a65903d82"): False,
    ("html-docs", "name:org:kr", "9dd0e8734ca5"): False,
    ("html-docs", "name:org:oniguruma", "a0ffc20d0760"): False,
    ("html-docs", "name:org:menu", "71b06bd872b2"): False,
    ("html-docs", "name:org:tera", "803658e3653e"): False,
}


@dataclass
class Link:
    """One passage link a spaCy name made, with what the rule saw."""

    path: str
    line: int
    ordinal: int
    unit_hash: str
    text: str
    entity_id: str
    type: str
    label: str
    source: str
    filter: bool
    mentions: list[tuple[int, int, str, str]] = field(default_factory=list)  # start, end, type
    evidence: str = ""
    before: bool = False

    def key(self, corpus: str) -> tuple[str, str, str]:
        return (corpus, self.entity_id, self.unit_hash[:12])


def sample_files(folder: Path, suffixes, skip, n: int, seed: int, name: str) -> list[str]:
    """A seeded sample of ``n`` root-relative paths (all of them when there are fewer)."""
    files = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in suffixes
    )
    files = [f for f in files if not f.startswith(skip)]
    return sorted(random.Random(f"{seed}:{name}").sample(files, min(n, len(files))))


def build(folder: Path, files: list[str], root: Path, workers: int) -> float:
    for rel in files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / rel, target)
    (root / "kbx.toml").write_text(SETTINGS, encoding="utf-8")
    started = time.perf_counter()
    report = index(root, workers=workers)
    if report.failed:
        print(f"warning: {report.failed} files failed: {report.failures[:3]}", file=sys.stderr)
    if "spacy" in {name for name, _ in report.unavailable}:
        raise SystemExit(f"spaCy did not run: {report.unavailable}")
    return time.perf_counter() - started


def spacy_links(root: Path) -> list[Link]:
    """Every passage link a spaCy name made, classified (see the module docstring)."""
    with Index.for_root(root).reader() as con:
        mentions = con.execute(
            """SELECT unit_hash, start_char, end_char, type, text, coalesce(value, text)
               FROM mentions WHERE recognizer = 'spacy' AND key IS NULL"""
        ).fetchall()
        owners: dict[str, str] = {}
        for entity_id, alias in con.execute(
            "SELECT entity_id, alias FROM aliases WHERE NOT starts_with(entity_id, 'name:')"
        ).fetchall():
            a = alias.lower()
            owners[a] = min(owners.get(a, entity_id), entity_id)
        placed = con.execute(
            """SELECT pl.doc_id, u.unit_hash FROM placements pl JOIN units u USING (unit_id)"""
        ).fetchall()
        rows = con.execute(
            """SELECT d.doc_id, d.path, min(pl.start_line), min(pl.ordinal), u.unit_hash,
                      u.text, l.entity_id, e.type, e.label, e.source, l.filter
               FROM links l JOIN documents d USING (doc_id) JOIN units u USING (unit_id)
               JOIN placements pl ON pl.doc_id = l.doc_id AND pl.unit_id = l.unit_id
               JOIN entities e USING (entity_id)
               WHERE l.unit_id IS NOT NULL
               GROUP BY ALL"""
        ).fetchall()
    by_unit: dict[tuple[str, str], list[tuple[int, int, str, str]]] = defaultdict(list)
    in_unit: dict[str, list[tuple[str, str]]] = defaultdict(list)  # unit -> (surface, type)
    for unit_hash, a, b, type_, text, surface in mentions:
        target = owners.get(surface.lower()) or owners.get(text.lower())
        target = target or f"name:{type_.lower()}:{slug(surface)}"
        by_unit[(unit_hash, target)].append((a, b, type_, surface))
        in_unit[unit_hash].append((surface.lower(), type_))
    seen: dict[tuple[int, str], list[str]] = defaultdict(list)  # (doc, surface) -> types
    for doc_id, unit_hash in placed:
        for surface, type_ in in_unit.get(unit_hash, ()):
            seen[(doc_id, surface)].append(type_)
    spacy_docs = {(r[0], r[6]) for r in rows if (r[4], r[6]) in by_unit}
    out = []
    for doc_id, path, line, ordinal, unit_hash, text, entity_id, type_, label, source, f in rows:
        ms = by_unit.get((unit_hash, entity_id), [])
        if source == "identifier":
            continue  # an identifier's own link filters whatever spaCy called its text
        if not ms and not (entity_id.startswith("name:") or (doc_id, entity_id) in spacy_docs):
            continue  # not from spaCy
        link = Link(path, line, ordinal, unit_hash, text, entity_id, type_, label, source, f, ms)
        grade = any(t not in BOOST_ONLY for _, _, t, _ in ms)
        confirmed = any(
            len(seen[(doc_id, s.lower())]) >= 2 and len(set(seen[(doc_id, s.lower())])) == 1
            for _, _, _, s in ms
        )
        if not ms:
            link.evidence, link.before = "short form carried", f
        elif not entity_id.startswith("name:"):
            link.evidence, link.before = f"alias of {source}", grade or f
        elif f and confirmed:
            link.evidence, link.before = "named twice, one type", True
        elif f:
            link.evidence, link.before = "short form carried", True
        else:
            link.evidence = "boost type" if not grade else "no evidence"
            link.before = grade
        out.append(link)
    return sorted(out, key=lambda k: (k.path, k.ordinal, k.entity_id))


def marked(link: Link, width: int = 700) -> str:
    """The passage with the name marked ⟦…⟧, cut to ``width`` characters around it."""
    text = link.text
    spans = [(a, b) for a, b, _, _ in link.mentions]
    if not spans:  # a carried short form: its occurrences
        short = short_form(link.label, link.type) or link.label
        spans = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(short)}(?!\w)", text)]
    for a, b in sorted(spans, reverse=True):
        text = text[:a] + "⟦" + text[a:b] + "⟧" + text[b:]
    first = text.find("⟦")
    lo = max(0, first - width // 2)
    cut = text[lo : lo + width]
    return ("…" if lo else "") + re.sub(r"\s+", " ", cut) + ("…" if lo + width < len(text) else "")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if not n:
        return (float("nan"), float("nan"))
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (mid - half, mid + half)


def judged(corpus: str, items: list[Link]) -> tuple[int, int, list[Link]]:
    """Right, labelled, and the items with no recorded label."""
    labels = [LABELS.get(i.key(corpus)) for i in items]
    missing = [i for i, v in zip(items, labels, strict=True) if v is None]
    return sum(v is True for v in labels), sum(v is not None for v in labels), missing


def show(corpus: str, tag: str, items: list[Link]) -> None:
    for n, i in enumerate(items, start=1):
        label = LABELS.get(i.key(corpus))
        types = ",".join(sorted({t for _, _, t, _ in i.mentions})) or "-"
        print(
            f"[{tag}{n:02d}] {i.path}:{i.line}  {i.entity_id} ({i.type} {i.label!r}; "
            f"mention types {types}; {i.evidence})  label={label}\n"
            f"      key={i.key(corpus)!r}\n      {marked(i)}\n"
        )


def top_people(links: list[Link], rule: str, k: int = 10) -> list[tuple[str, str, int]]:
    counts = Counter(
        (x.entity_id, x.label)
        for x in links
        if x.type == "PERSON" and (x.before if rule == "before" else x.filter)
    )
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))[:k]
    return [(e, label, n) for (e, label), n in ranked]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("eval", type=Path, help="the evaluation data folder (../shared/eval)")
    p.add_argument("--files", type=int, default=150, help="files sampled per corpus")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sample", type=int, default=30, help="links judged per corpus and kind")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--summary", action="store_true", help="leave the sampled items out")
    args = p.parse_args()
    summary, people, by_evidence, notes, unlabeled = [], [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (sub, suffixes, skip) in CORPORA.items():
            folder = args.eval.resolve() / sub
            files = sample_files(folder, suffixes, skip, args.files, args.seed, name)
            root = Path(tmp) / name
            secs = build(folder, files, root, args.workers)
            links = spacy_links(root)
            rng = random.Random(f"{args.seed}:{name}:links")
            filtering = [x for x in links if x.filter]
            demoted = [x for x in links if x.before and not x.filter]
            boosting = [x for x in links if not x.filter]
            f_items = rng.sample(filtering, min(args.sample, len(filtering)))
            d_items = rng.sample(demoted, min(args.sample, len(demoted)))
            if not args.summary:
                print(f"## {name}: {len(files)} files, indexed in {secs:.0f} s\n")
                print("### links that filter\n")
                show(name, "F", f_items)
                print("### links demoted to boost-only (a filtering type, no evidence)\n")
                show(name, "D", d_items)
            fk, fn, fmiss = judged(name, f_items)
            dk, dn, dmiss = judged(name, d_items)
            unlabeled += len(fmiss) + len(dmiss)
            for i in fmiss + dmiss:
                print(f"warning: no label for {i.key(name)!r}", file=sys.stderr)
            evidence = Counter(x.evidence for x in filtering)
            before = sum(x.before for x in links)
            pf = fk / fn if fn else float("nan")
            pd = dk / dn if dn else float("nan")
            est = (pf * len(filtering) + pd * len(demoted)) / before if before else float("nan")
            lo, hi = wilson(fk, fn)
            summary.append(
                [
                    name,
                    len(files),
                    len(links),
                    before,
                    len(filtering),
                    len(boosting),
                    len(demoted),
                    ", ".join(f"{k} {v}" for k, v in evidence.most_common()),
                    f"{fk}/{fn} = {pf:.2f} [{lo:.2f}, {hi:.2f}]",
                    f"{dk}/{dn} = {pd:.2f}",
                    f"{est:.2f}",
                ]
            )
            for ev in sorted({x.evidence for x in f_items}):
                k, n, _ = judged(name, [x for x in f_items if x.evidence == ev])
                by_evidence.append([name, ev, evidence[ev], f"{k}/{n}"])
            docs = Counter(x.path for x in filtering).most_common(1)
            if docs:
                notes.append(
                    f"{name}: the largest document, {docs[0][0]}, holds {docs[0][1]} of the "
                    f"{len(filtering)} filtering links ({docs[0][1] / len(filtering):.0%}), and "
                    f"{sum(x.path == docs[0][0] for x in f_items)} of the {len(f_items)} sampled"
                )
            persons = [
                len({x.entity_id for x in links if x.type == "PERSON" and x.before}),
                len({x.entity_id for x in links if x.type == "PERSON" and x.filter}),
            ]
            notes.append(
                f"{name}: PERSON entities that filter: {persons[0]} before, {persons[1]} now"
            )
            carried = Counter(
                x.entity_id for x in links if x.filter and x.evidence == "short form carried"
            )
            rows_before, rows_after = top_people(links, "before"), top_people(links, "after")
            for n in range(max(len(rows_before), len(rows_after))):
                b = f"{rows_before[n][1]} ({rows_before[n][2]})" if n < len(rows_before) else ""
                a = ""
                if n < len(rows_after):
                    e, label, k = rows_after[n]
                    a = f"{label} ({k}, {carried[e]} carried)" if carried[e] else f"{label} ({k})"
                people.append([name, n + 1, b, a])
    heads = [
        "corpus",
        "files",
        "spaCy links",
        "filter before",
        "filter now",
        "boost only now",
        "demoted",
        "why the filtering links filter",
        "precision, filtering (95% CI)",
        "precision, demoted",
        "precision before (estimated)",
    ]
    print(f"### Passage links from spaCy names (--files {args.files} --seed {args.seed})\n")
    print(table(heads, summary))
    print("\n" + "\n".join(f"- {n}." for n in notes))
    print("\n### The filtering sample by evidence\n")
    print(table(["corpus", "evidence", "filtering links", "right in the sample"], by_evidence, 2))
    print("\n### Top 10 PERSON entities by filtering passages, before and after\n")
    print(table(["corpus", "rank", "before (passages)", "after (passages)"], people, right=4))
    if unlabeled:
        print(f"\nwarning: {unlabeled} sampled items have no label in LABELS", file=sys.stderr)


if __name__ == "__main__":
    main()
