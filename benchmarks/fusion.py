"""Which fusion of BM25 and the dense list (issue 17): chosen on one set, reported on others.

The fusions compared, each over the top ``--depth`` of both lists (100, what ``kbx search
--mode hybrid`` fuses, and 1,000): reciprocal rank fusion (``kbx.search.hybrid.rrf``, k = 20
and 60) and the convex combination of theoretically scaled scores
(``kbx.search.hybrid.convex``, Bruch, Gai and Ingber, TOIS 2023) at BM25 weights alpha from
0.1 to 0.9 by 0.1 (the dense list weighs 1 - alpha); an item a cut list lacks scores there
what its last item does, and, for comparison at the first depth, 0.

The choice is made on SciFact train's queries with an odd id (nDCG@10), and reported on its
queries with an even id (a half never looked at to choose) and on the Node.js dev questions
(hit@1, hit@5 and MRR by kind, lexical and paraphrase), which are a different kind of text
and question. The vectors and indexes are those of dense_quality.py, kept under ``--cache``:
run it first (this script embeds only what its cache lacks, the same way).

    .venv/bin/python benchmarks/fusion.py [--eval ../shared/eval] [--cache /tmp/kbx-dense]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from common import NODEJS, build_kbx, eval_arg, first_hit, load_questions, table
from dense_quality import DEPTH, KIND_HEADS, QueryVectors, UnitVectors, kind_rows, log, to_docs
from search_quality import load_scifact, scores, units_to_docs

from kbx.search.bm25 import rank
from kbx.search.hybrid import convex, rrf
from kbx.search.search import FUSION_DEPTH, hits_for
from kbx.store.db import Index
from kbx.store.postings import analyzer_of
from kbx.vectors.model import Encoder, packaged

ALPHAS = [round(a / 10, 1) for a in range(11)]
Scored = list[tuple[int, float]]
Fusion = Callable[[Scored, Scored], list[int]]


def fusions(depths: list[int]) -> dict[str, Fusion]:
    """Each fusion by name: BM25's and the dense ``(unit, score)`` rows in, units out."""
    out: dict[str, Fusion] = {
        "BM25": lambda b, d: [u for u, _ in b],
        "dense": lambda b, d: [u for u, _ in d],
    }
    for n in depths:
        for k in (20, 60):
            out[f"RRF k={k}, top {n}"] = lambda b, d, n=n, k=k: [
                f.key for f in rrf([[u for u, _ in b[:n]], [u for u, _ in d[:n]]], k)
            ]
        for a in ALPHAS[1:-1]:
            out[f"convex alpha={a}, top {n}"] = lambda b, d, n=n, a=a: [
                f.key for f in convex([b[:n], d[:n]], [a, 1 - a], [len(b) > n, len(d) > n])
            ]
    for a in ALPHAS[1:-1]:  # the same, an item a list lacks scoring 0 there, not the cut's
        out[f"convex alpha={a}, top {depths[0]}, lacking = 0"] = lambda b, d, a=a: [
            f.key for f in convex([b[: depths[0]], d[: depths[0]]], [a, 1 - a])
        ]
    return out


def scifact(eval_dir: Path, cache: Path, enc: Encoder, ways: dict[str, Fusion]) -> list[list]:
    """nDCG@10 and Recall@100 of every fusion on the odd-id and the even-id queries."""
    data = load_scifact(eval_dir / "beir_scifact")
    root, db = cache / "scifact", cache / "scifact.duckdb"
    if not root.exists():
        raise SystemExit(f"no {root}: run dense_quality.py first")
    build_kbx(root, db, "snowball")
    idx = Index.for_root(root, db)
    vecs, qvecs = UnitVectors(idx, enc, cache, "scifact"), QueryVectors(enc, cache, "scifact")
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in ways}
    with idx.reader() as con:
        an, docs_of = analyzer_of(con), units_to_docs(con)
        for qid, text in data.queries.items():
            bm = [(u, s) for u, s, _ in rank(con, an.query(text), limit=DEPTH)[0]]
            de = vecs.scored(qvecs(text))
            for name, way in ways.items():
                runs[name][qid] = to_docs(way(bm, de), docs_of)
    qvecs.save()
    halves = {
        h: {q: r for q, r in data.qrels.items() if int(q) % 2 == (h == "odd")}
        for h in ("odd", "even")
    }
    log(f"scifact: {len(halves['odd'])} odd-id queries, {len(halves['even'])} even-id")
    return [
        [name] + [m for h in ("odd", "even") for m in scores(run, halves[h])[:2]]
        for name, run in runs.items()
    ]


def nodejs(eval_dir: Path, cache: Path, enc: Encoder, ways: dict[str, Fusion]) -> list[list]:
    """hit@1, hit@5 and MRR by kind of every fusion, the top 5 passages as cited."""
    questions = load_questions(eval_dir)
    db = cache / "nodejs.duckdb"
    build_kbx(eval_dir / NODEJS, db, "snowball")
    idx = Index.for_root(eval_dir / NODEJS, db)
    vecs = UnitVectors(idx, enc, cache, "nodejs")
    firsts: dict[str, list[int | None]] = {name: [] for name in ways}
    with idx.reader() as con:
        an = analyzer_of(con)
        for q in questions:
            groups = an.query(q.text)
            bm = [(u, s) for u, s, _ in rank(con, groups, limit=DEPTH)[0]]
            de = vecs.scored(enc.query(q.text))
            for name, way in ways.items():
                hits = hits_for(con, [(u, 0.0, 0) for u in way(bm, de)[:5]], groups, an)
                firsts[name].append(
                    first_hit(q, [(h.path, h.start_line, h.end_line) for h in hits])
                )
    return kind_rows(questions, firsts)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=Path("/tmp/kbx-dense"))
    p.add_argument("--depth", type=int, action="append", help="fuse the top N (100, 1000)")
    p.add_argument("--skip-nodejs", action="store_true")
    a = p.parse_args()
    enc = packaged()
    ways = fusions(sorted({FUSION_DEPTH, *(a.depth or [DEPTH])}))  # the choice is at the first
    sci = scifact(a.eval, a.cache, enc, ways)
    product = f"top {FUSION_DEPTH}"  # what kbx search fuses: the choice is made there
    chosen = max(
        (r for r in sci if r[0].startswith("convex") and r[0].endswith(product)),
        key=lambda r: r[1],
    )[0]
    print(f"### SciFact train by query id: chosen on the odd half, {chosen}\n")
    print(
        table(["fusion", "odd nDCG@10", "odd Recall@100", "even nDCG@10", "even Recall@100"], sci)
    )
    if a.skip_nodejs:
        return
    heads = ["fusion", *KIND_HEADS]
    print("\n### Node.js dev questions (40: 20 lexical, 20 paraphrase), top 5 as cited\n")
    print(table(heads, nodejs(a.eval, a.cache, enc, ways)))


if __name__ == "__main__":
    main()
