"""Reference matching: written-out references linked to their DOIs through a stand-in for
Crossref's ``query.bibliographic``, with and without kbx's title-and-year agreement check.

Data: the Crossref records recorded in habanero's test cassettes
(``identifiers/sources/sckott__habanero``) list the references of real papers; 5,500 of
them carry a DOI with its article title, first author, year and journal. A sample of
``--n`` such references is written out as a numbered Markdown reference list ("Surname
(Year). Title. Journal, volume, page."), indexed, found by the references recognizer and
resolved by ``kbx resolve --only reference``.

The network is replaced by a loopback server answering from the recorded records: it
ranks them by TF-IDF cosine against the query (a stand-in for Crossref's relevance, so
its score scale is its own) and returns the top three. For ``--held-out`` of the sample
the true record is removed, as when Crossref lacks a work: the top candidate is then
always wrong, and only the verification can keep precision.

Also reported: the share of the real unstructured reference strings in the same records
(written by publishers, not by us) that the recognizer's line test accepts.

    .venv/bin/python benchmarks/references.py [--eval ../shared/eval] [--n 300]
"""

from __future__ import annotations

import glob
import json
import math
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from common import eval_arg, table

from kbx.entities.build import reference_id
from kbx.entities.resolve import resolve
from kbx.indexing.ingest import index
from kbx.linking.resolvers import Settings
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.references import ReferenceRecognizer, looks_like_reference
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers import Loopback  # noqa: E402  (the tests' loopback server)

CASSETTES = "identifiers/sources/sckott__habanero/decoded/test/cassettes/*/*.txt"
SEED = 20261130


def recorded_references(eval_dir: Path) -> list[dict]:
    out = []
    for f in sorted(glob.glob(str(eval_dir / CASSETTES))):
        try:
            data = json.loads(Path(f).read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        for d in data if isinstance(data, list) else [data]:
            m = d.get("message") if isinstance(d, dict) else None
            items = m.get("items", [m]) if isinstance(m, dict) else []
            for it in items:
                if isinstance(it, dict):
                    out.extend(r for r in it.get("reference") or [] if isinstance(r, dict))
    return out


def _tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]{2,}", text.casefold())


class StandIn:
    """TF-IDF cosine over the records' bibliographic fields: top three per query."""

    def __init__(self, records: list[dict]):
        self.records = records
        docs = [Counter(_tokens(self._text(r))) for r in records]
        df = Counter(t for d in docs for t in d)
        n = len(docs)
        self.idf = {t: math.log(1 + n / c) for t, c in df.items()}
        self.vectors = [self._unit(d) for d in docs]
        self.postings: dict[str, list[int]] = {}
        for i, d in enumerate(docs):
            for t in d:
                self.postings.setdefault(t, []).append(i)

    @staticmethod
    def _text(r: dict) -> str:
        return " ".join(
            [
                r["title"][0],
                *(a.get("family", "") for a in r["author"]),
                r["container-title"][0],
                str(r["issued"]["date-parts"][0][0]),
            ]  # fmt: skip
        )

    def _unit(self, counts: Counter) -> dict[str, float]:
        v = {t: c * self.idf.get(t, 0.0) for t, c in counts.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def answer(self, path: str) -> tuple[int, dict, dict]:
        query = parse_qs(urlparse(path).query).get("query.bibliographic", [""])[0]
        q = self._unit(Counter(_tokens(query)))
        scores: Counter = Counter()
        for t, w in q.items():
            for i in self.postings.get(t, []):
                scores[i] += w * self.vectors[i][t]
        top = [self.records[i] | {"score": round(100 * s, 2)} for i, s in scores.most_common(3)]
        return 200, {"message": {"total-results": len(top), "items": top}}, {}


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300, help="references in the sample")
    p.add_argument("--held-out", type=float, default=0.25, help="share with no true record")
    args = p.parse_args()
    refs = recorded_references(args.eval.resolve())
    structured = {}
    for r in refs:
        if r.get("DOI") and r.get("article-title") and r.get("year") and r.get("author"):
            structured.setdefault(r["DOI"].lower(), r)
    unstructured = [r["unstructured"] for r in refs if r.get("unstructured")]
    rng = random.Random(SEED)
    sample = rng.sample(sorted(structured), min(args.n, len(structured)))
    absent = set(sample[: int(len(sample) * args.held_out)])
    records = [
        {
            "DOI": doi,
            "title": [r["article-title"]],
            "author": [{"family": r["author"].split(",")[0].split()[-1]}],
            "issued": {"date-parts": [[int(r["year"][:4])]]},
            "container-title": [r.get("journal-title") or r.get("volume-title") or ""],
        }
        for doi, r in structured.items()
        if doi not in absent and r["year"][:4].isdigit()
    ]
    server = Loopback({"/works?": StandIn(records).answer, "/works/": [(404, {}, {})]})
    lines = []
    for doi in sample:
        r = structured[doi]
        tail = ", ".join(x for x in (r.get("volume"), r.get("first-page")) if x)
        lines.append(
            f"{r['author']} ({r['year'][:4]}). {r['article-title']}. "
            f"{r.get('journal-title') or ''}{', ' + tail if tail else ''}."
        )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "refs"
            root.mkdir()
            body = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, start=1))
            (root / "paper.md").write_text(f"# A paper\n\nText.\n\n## References\n\n{body}\n")
            idx = Index.for_root(root)
            index(root, registry=Registry([IdentifierRecognizer(), ReferenceRecognizer()]))
            settings = Settings(crossref_url=server.url, openalex_url=server.url, rate=1000)
            resolve(idx, only=["reference"], settings=settings)
            with idx.reader() as con:
                found = con.execute(
                    "SELECT count(*) FROM mentions WHERE type = 'REFERENCE'"
                ).fetchone()[0]
                values = con.execute(
                    "SELECT value FROM mentions WHERE type = 'REFERENCE'"
                ).fetchall()
                resolved = {
                    key: (status, doi)
                    for key, status, doi in con.execute(
                        """SELECT entity_id, status, json_extract_string(data, '$.doi')
                           FROM resolutions"""
                    ).fetchall()
                }
                rows = [
                    (v, *resolved[reference_id(v)])
                    for (v,) in values
                    if reference_id(v) in resolved
                ]
    finally:
        server.close()
    truth = {line: doi for line, doi in zip(lines, sample, strict=True)}
    standin = StandIn(records)
    results = []
    for text, status, doi in rows:
        true = truth.get(text)
        _, body, _ = standin.answer("/works?query.bibliographic=" + text)
        top = (body["message"]["items"] or [None])[0]
        results.append((true, status == "ok" and doi.lower(), top))
    present = [r for r in results if r[0] not in absent]

    def pr(picks: list[tuple[str, str | None]]) -> tuple[float, float, int]:
        linked = [(t, d) for t, d in picks if d]
        right = sum(1 for t, d in linked if d == t)
        return (right / len(linked) if linked else 1.0), right / max(len(present), 1), len(linked)

    out = []
    for label, picks in [
        ("top candidate, no check", [(t, top and top["DOI"].lower()) for t, _, top in results]),
        *[
            (
                f"top candidate, score >= {cut}",
                [(t, top and top["score"] >= cut and top["DOI"].lower()) for t, _, top in results],
            )
            for cut in (30, 50, 70)
        ],
        ("kbx: first candidate whose title and year agree", [(t, d) for t, d, _ in results]),
    ]:
        precision, recall, n = pr(picks)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out.append([label, n, f"{precision:.3f}", f"{recall:.3f}", f"{f1:.3f}"])
    print(
        f"### Reference matching ({len(sample)} references from real reference lists, "
        f"{len(absent)} with no true record)\n"
    )
    print(f"Entries the recognizer found in the written-out list: {found} of {len(lines)}.\n")
    print(table(["rule", "linked", "precision", "recall", "F1"], out))
    detected = sum(looks_like_reference(u) for u in unstructured)
    print(
        f"\nReal unstructured reference strings the line test accepts: {detected} of "
        f"{len(unstructured)} ({detected / max(len(unstructured), 1):.0%})."
    )


if __name__ == "__main__":
    main()
