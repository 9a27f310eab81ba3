"""Search quality: kbx's BM25 beside bm25s and SQLite FTS5, on SciFact and on Node.js questions.

What is compared, and why:

* **BEIR SciFact (train qrels)** - a standard ad-hoc retrieval set, so kbx's BM25 can be read
  against published-style numbers and against two peers run here on the same text: bm25s
  (Lucene BM25, English stopwords, Snowball stemmer, on "title text") and SQLite FTS5
  (``porter unicode61``, columns title and text, ``bm25()`` default and title weight 2).
  kbx indexes each document as ``<id>.md`` holding ``# title`` and the abstract, so the title
  is both body text and the heading path (kbx's BM25F heading field). Units are ranked with
  ``rank(..., limit=1000)`` (one row per unit) and a document scores its best unit.
  Metrics: nDCG@10, Recall@100, MRR@10 over the queries that have train qrels.
* **Node.js questions** - the product's real task: 40 questions (20 asked in the passage's
  words, 20 paraphrased) whose answers are known lines of known files. kbx ``search(k=5,
  exact=0)`` is scored by the probes' rule (a passage from the answer file, or an alternative
  file, whose line range overlaps the answer lines): hit@1, hit@5, MRR by kind. The
  baseline is what one would build in an afternoon: FTS5 over heading-split windows of at
  most 1,800 characters of raw Markdown, heading column weight 2. A diagnostic row runs the
  same FTS5 ranking over kbx's own units, to separate segmentation from ranking.

* **RFC dev questions** - long plain-text documents, where passages of one file compete:
  50 questions over 160 RFCs (``corpora/rfcs_dev``; 25 literal, 25 paraphrased), ``search(k=8,
  exact=0)`` and the same hit rule, hit@5 and MRR (over the top 5) by kind, each kind split
  in two halves: questions with an odd number are the half a ranking change may be tuned
  on, those with an even number the half it is only reported on. Rule recognizers only.

kbx variants: stemmer (snowball, plural, none), heading weight (0, 1, 2), k1/b, the weight of
a file's best passage as a prior for its other passages (``doc_prior``, search/prior.py; 1
by default, 0 is plain BM25), and kbx's query-time function-word list on or off
(``QUERY_STOPWORDS`` in ``analysis.py``).
A script, not a test: it prints Markdown tables and asserts nothing.

    .venv/bin/python benchmarks/search_quality.py [--eval ../shared/eval] [--full]
        [--only scifact|nodejs|rfcs]
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bm25s
import duckdb
import Stemmer
from common import (
    NODEJS,
    RFC_QUESTIONS,
    RFCS_DEV,
    PassageFTS5,
    Question,
    build_kbx,
    eval_arg,
    first_hit,
    fts5_or_query,
    hit_metrics,
    load_questions,
    table,
)

from kbx.analysis import Analyzer
from kbx.search.bm25 import DEFAULT_PARAMS, BM25Params, rank
from kbx.search.prior import docs_of, rank_with_prior
from kbx.search.search import hits_for
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

RANK_LIMIT = 1000
Run = dict[str, list[str]]  # query id -> document ids, best first


@dataclass(frozen=True)
class Variant:
    """One kbx configuration."""

    stemmer: str = "snowball"
    heading_weight: float = 1.0
    k1: float = 1.2
    b: float = 0.75
    stop: bool = True  # kbx's query-time function-word list
    prior: float = DEFAULT_PARAMS.doc_prior  # a file's best passage as a prior (search/prior.py)

    @property
    def params(self) -> BM25Params:
        return BM25Params(self.k1, self.b, self.heading_weight, self.prior)

    @property
    def name(self) -> str:
        s = f"kbx {self.stemmer}, hw {self.heading_weight:g}, k1 {self.k1:g} b {self.b:g}"
        s += "" if self.prior == DEFAULT_PARAMS.doc_prior else f", file prior {self.prior:g}"
        return s + ("" if self.stop else ", no stopwords")


def grid(full: bool) -> list[Variant]:
    """The variants to run: every combination with ``full``, else a one-factor-at-a-time set
    around the default (snowball, heading weight 1, k1 1.2, b 0.75)."""
    if full:
        base = [
            Variant(s, w, k1, b)
            for s in ("snowball", "plural", "none")
            for w in (0.0, 1.0, 2.0)
            for k1, b in ((1.2, 0.75), (0.9, 0.4))
        ]
    else:
        base = [
            Variant(),
            Variant(heading_weight=0.0),
            Variant(heading_weight=2.0),
            Variant(k1=0.9, b=0.4),
            Variant("plural"),
            Variant("none"),
        ]
    others = [Variant(stop=False), Variant(heading_weight=0.0, stop=False)]
    return (
        base + others + [Variant(prior=0.0), Variant(prior=0.5), Variant(prior=0.0, k1=0.9, b=0.4)]
    )


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def kbx_rows(
    con: duckdb.DuckDBPyConnection, an: Analyzer, text: str, v: Variant, limit: int
) -> tuple[list[tuple], list[list[str]]]:
    """``rank`` for one query under a variant: rows ``(unit_id, score, matched)``, best
    first, and the query term groups used."""
    groups = an.query(text, stopwords=v.stop)
    rows, _ = rank_with_prior(  # as search ranks
        lambda cut: rank(con, groups, params=v.params, limit=cut),
        lambda units: docs_of(con, units),
        v.prior,
        limit,
    )
    return rows, groups


def by_stemmer(variants: list[Variant]) -> dict[str, list[Variant]]:
    out: dict[str, list[Variant]] = defaultdict(list)
    for v in variants:
        out[v.stemmer].append(v)
    return out


# --- SciFact ---------------------------------------------------------------------------------


@dataclass
class SciFact:
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_scifact(folder: Path) -> SciFact:
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = (d.get("title", ""), d.get("text", ""))
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with open(folder / "qrels" / "train.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels[qid][did] = int(score)
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["_id"] in qrels:
                queries[d["_id"]] = d["text"]
    return SciFact(corpus, queries, dict(qrels))


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def scores(run: Run, qrels: dict[str, dict[str, int]]) -> tuple[float, float, float]:
    """Mean nDCG@10, Recall@100 and MRR@10 over the queries with qrels."""
    nd, rec, mrr = [], [], []
    for qid, rels in qrels.items():
        ranked = run.get(qid, [])
        relevant = {d for d, r in rels.items() if r > 0}
        nd.append(ndcg_at(ranked, rels))
        rec.append(len(relevant & set(ranked[:100])) / len(relevant))
        first = next((i for i, d in enumerate(ranked[:10], 1) if d in relevant), None)
        mrr.append(1 / first if first else 0.0)
    n = len(qrels)
    return sum(nd) / n, sum(rec) / n, sum(mrr) / n


def units_to_docs(con: duckdb.DuckDBPyConnection) -> dict[int, list[str]]:
    """SciFact document ids (file names without ``.md``) holding each unit; a unit that
    several documents share ranks all of them, in path order."""
    rows = con.execute(
        "SELECT pl.unit_id, list(DISTINCT d.path ORDER BY d.path) FROM placements pl "
        "JOIN documents d USING (doc_id) GROUP BY pl.unit_id"
    ).fetchall()
    return {u: [p.rsplit(".", 1)[0] for p in paths] for u, paths in rows}


def scifact_kbx(data: SciFact, variants: list[Variant], tmp: Path) -> dict[str, tuple[Run, float]]:
    """kbx runs per variant, with the seconds spent ranking all queries."""
    root = tmp / "scifact"
    root.mkdir()
    for did, (title, text) in data.corpus.items():
        (root / f"{did}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    db = tmp / "scifact.duckdb"
    out: dict[str, tuple[Run, float]] = {}
    for stemmer, vs in by_stemmer(variants).items():
        log(f"scifact: kbx index ({stemmer}) {build_kbx(root, db, stemmer):.1f} s")
        idx = Index.for_root(root, db)
        with idx.reader() as con:
            an = analyzer_of(con)
            docs_of = units_to_docs(con)
            for v in vs:
                t = time.perf_counter()
                run = {}
                for qid, text in data.queries.items():
                    rows, _ = kbx_rows(con, an, text, v, RANK_LIMIT)
                    run[qid] = list(dict.fromkeys(d for r in rows for d in docs_of[r[0]]))
                out[v.name] = (run, time.perf_counter() - t)
                log(f"scifact: {v.name} {out[v.name][1]:.1f} s")
    return out


def scifact_bm25s(data: SciFact) -> tuple[Run, float]:
    """bm25s as its README sets it up: English stopwords, PyStemmer English, Lucene BM25;
    timed from query tokenizing on, all queries in one batch."""
    stemmer = Stemmer.Stemmer("english")
    ids = list(data.corpus)
    texts = [f"{title} {text}" for title, text in data.corpus.values()]
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    t = time.perf_counter()
    qids = list(data.queries)
    qtok = bm25s.tokenize(
        [data.queries[q] for q in qids],
        stopwords="en",
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )
    docs, _ = retriever.retrieve(qtok, k=100, show_progress=False)
    run = {q: [ids[i] for i in row] for q, row in zip(qids, docs.tolist(), strict=True)}
    return run, time.perf_counter() - t


def scifact_fts5(data: SciFact, weights: list[tuple[float, float]]) -> list[tuple[Run, float]]:
    """FTS5 (porter unicode61) on (title, text); one run per (title, text) weight pair."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(title, text, tokenize='porter unicode61')")
    with con:
        con.executemany(
            "INSERT INTO t(rowid, title, text) VALUES (?, ?, ?)",
            [(int(i), a, b) for i, (a, b) in data.corpus.items()],
        )
    out = []
    for wt, wx in weights:
        t = time.perf_counter()
        run = {}
        sql = f"SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t, {wt}, {wx}) LIMIT 1000"
        for qid, text in data.queries.items():
            q = fts5_or_query(text)
            run[qid] = [str(r[0]) for r in con.execute(sql, [q]).fetchall()] if q else []
        out.append((run, time.perf_counter() - t))
    return out


def scifact_section(eval_dir: Path, variants: list[Variant], tmp: Path) -> str:
    data = load_scifact(eval_dir / "beir_scifact")
    runs: dict[str, tuple[Run, float]] = {}
    runs["bm25s (en stopwords, Snowball)"] = scifact_bm25s(data)
    fts = scifact_fts5(data, [(1.0, 1.0), (2.0, 1.0)])
    runs["FTS5 porter, bm25()"] = fts[0]
    runs["FTS5 porter, bm25(t, 2.0, 1.0)"] = fts[1]
    runs.update(scifact_kbx(data, variants, tmp))
    rows = [(name, *scores(run, data.qrels), f"{sec:.1f}") for name, (run, sec) in runs.items()]
    head = (
        f"### BEIR SciFact, train qrels ({len(data.qrels)} queries, {len(data.corpus):,} "
        "documents)\n\n"
    )
    return head + table(["system", "nDCG@10", "Recall@100", "MRR@10", "s, all queries"], rows)


# --- Node.js questions -----------------------------------------------------------------------

Searcher = Callable[[Question], list[tuple[str, int, int]]]


def kbx_searcher(idx: Index, v: Variant) -> Searcher:
    """What ``search(k=5, exact=0)`` returns, with the variant's query analysis."""

    def stopped(q: Question) -> list[tuple[str, int, int]]:
        with idx.reader() as con:
            an = analyzer_of(con)
            rows, groups = kbx_rows(con, an, q.text, v, 5)
            hits = hits_for(con, rows, groups, an)
        return [(h.path, h.start_line, h.end_line) for h in hits]

    return stopped


class UnitFTS5:
    """A diagnostic: FTS5 (porter, heading path weight 2) over kbx's own units, each cited at
    its first placement, so segmentation and ranking can be told apart."""

    def __init__(self, idx: Index):
        with idx.reader() as con:
            rows = con.execute(
                """SELECT u.unit_id, array_to_string(u.heading_path, ' / '), u.text, d.path,
                          pl.start_line, pl.end_line
                   FROM units u JOIN placements pl USING (unit_id) JOIN documents d USING (doc_id)
                   QUALIFY row_number() OVER (PARTITION BY u.unit_id
                                              ORDER BY d.path, pl.ordinal) = 1"""
            ).fetchall()
        self.con = sqlite3.connect(":memory:")
        self.con.execute(
            "CREATE VIRTUAL TABLE u USING fts5(heading, text, path UNINDEXED, "
            "start UNINDEXED, stop UNINDEXED, tokenize='porter unicode61')"
        )
        with self.con:
            self.con.executemany(
                "INSERT INTO u(rowid, heading, text, path, start, stop) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def search(self, text: str, k: int = 5) -> list[tuple[str, int, int]]:
        q = fts5_or_query(text)
        return (
            self.con.execute(
                "SELECT path, start, stop FROM u WHERE u MATCH ? ORDER BY bm25(u, 2.0, 1.0) "
                f"LIMIT {int(k)}",
                [q],
            ).fetchall()
            if q
            else []
        )


def nodejs_ranks(questions: list[Question], searcher: Searcher) -> list[int | None]:
    return [first_hit(q, searcher(q)) for q in questions]


def metric_row(name: str, questions: list[Question], ranks: list[int | None]) -> list:
    row: list = [name]
    for kind in ("lexical", "paraphrase", None):
        sel = [r for q, r in zip(questions, ranks, strict=True) if kind in (None, q.kind)]
        row.extend(f"{m:.2f}" for m in hit_metrics(sel))
    return row


def nodejs_section(eval_dir: Path, variants: list[Variant], tmp: Path) -> str:
    questions = load_questions(eval_dir)
    root = eval_dir / NODEJS
    t = time.perf_counter()
    fts = PassageFTS5(root)
    log(f"nodejs: FTS5 passages ({fts.n:,}) {time.perf_counter() - t:.1f} s")
    ranks: dict[str, list[int | None]] = {
        "FTS5 passages, heading x2": nodejs_ranks(questions, lambda q: fts.search(q.text))
    }
    db = tmp / "nodejs.duckdb"
    for stemmer, vs in by_stemmer(variants).items():
        log(f"nodejs: kbx index ({stemmer}) {build_kbx(root, db, stemmer):.1f} s")
        idx = Index.for_root(root, db)
        if "FTS5 over kbx units, heading x2" not in ranks:
            units = UnitFTS5(idx)
            ranks["FTS5 over kbx units, heading x2"] = nodejs_ranks(
                questions, lambda q, u=units: u.search(q.text)
            )
        for v in vs:
            ranks[v.name] = nodejs_ranks(questions, kbx_searcher(idx, v))
    heads = ["system"] + [
        f"{k} {m}" for k in ("lex", "para", "all") for m in ("hit@1", "hit@5", "MRR")
    ]
    out = [
        f"### Node.js questions ({len(questions)}: "
        f"{sum(q.kind == 'lexical' for q in questions)} lexical, "
        f"{sum(q.kind == 'paraphrase' for q in questions)} paraphrase), top 5\n",
        table(heads, [metric_row(n, questions, r) for n, r in ranks.items()]),
        "",
        misses_table(questions, ranks),
    ]
    return "\n".join(out)


def misses_table(questions: list[Question], ranks: dict[str, list[int | None]]) -> str:
    """Per question, the rank of the first answering passage, where any shown system
    misses rank 1."""
    shown = [n for n in ranks if n.startswith("FTS5")] + [
        Variant().name,
        Variant(stop=False).name,
        Variant(heading_weight=2.0).name,
    ]
    shown = [n for n in shown if n in ranks]
    rows = []
    for i, q in enumerate(questions):
        rs = [ranks[n][i] for n in shown]
        if any(r != 1 for r in rs):
            rows.append([q.id, q.kind, *(r or "-" for r in rs), q.text[:90]])
    return (
        "Questions some of these systems miss at rank 1 (rank of the first answering "
        "passage, - if not in the top 5):\n\n"
        + table(["id", "kind", *shown, "question"], rows, right=2)
    )


# --- RFC dev questions -----------------------------------------------------------------------

RFC_K = 8  # what the RFC figures in issue 41 were measured with


def half(q: Question) -> str:
    """``tune`` for an odd question number (rd001, rd003, ...), ``held`` for an even one."""
    return "tune" if int(q.id[2:]) % 2 else "held"


def rfc_row(name: str, questions: list[Question], ranks: list[int | None]) -> list:
    row: list = [name]
    for kind in ("lexical", "paraphrase"):
        for part in ("tune", "held", None):
            sel = [
                r
                for q, r in zip(questions, ranks, strict=True)
                if q.kind == kind and part in (None, half(q))
            ]
            _, h5, mrr = hit_metrics(sel)
            row.append(f"{h5:.2f} / {mrr:.2f}")
    return row


def rfcs_section(eval_dir: Path, variants: list[Variant], tmp: Path) -> str:
    questions = load_questions(eval_dir, RFC_QUESTIONS)
    root = eval_dir / RFCS_DEV
    db = tmp / "rfcs.duckdb"
    ranks: dict[str, list[int | None]] = {}
    units = 0
    for stemmer, vs in by_stemmer(variants).items():
        log(f"rfcs: kbx index ({stemmer}) {build_kbx(root, db, stemmer):.1f} s")
        idx = Index.for_root(root, db)
        with idx.reader() as con:
            units = con.execute("SELECT count(*) FROM units").fetchone()[0]
        for v in vs:
            ranks[v.name] = [
                first_hit(q, hits) for q in questions for hits in [_rfc_hits(idx, v, q)]
            ]
    heads = ["system"] + [
        f"{k} {p} hit@5 / MRR" for k in ("lex", "para") for p in ("tune", "held", "all")
    ]
    n = {k: sum(q.kind == k for q in questions) for k in ("lexical", "paraphrase")}
    return "\n".join(
        [
            f"### RFC dev questions ({len(questions)}: {n['lexical']} lexical, "
            f"{n['paraphrase']} paraphrase; {units:,} units), top {RFC_K}; tune = odd "
            "question numbers, held = even\n",
            table(heads, [rfc_row(name, questions, r) for name, r in ranks.items()]),
        ]
    )


def _rfc_hits(idx: Index, v: Variant, q: Question) -> list[tuple[str, int, int]]:
    with idx.reader() as con:
        an = analyzer_of(con)
        rows, groups = kbx_rows(con, an, q.text, v, RFC_K)
        hits = hits_for(con, rows, groups, an)
    return [(h.path, h.start_line, h.end_line) for h in hits]


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="every stemmer x heading x k1/b")
    p.add_argument("--only", choices=("scifact", "nodejs", "rfcs"), help="run one part")
    args = p.parse_args()
    eval_dir = args.eval.resolve()
    variants = grid(args.full)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kbx-quality-") as tmp:
        sections = []
        if args.only in (None, "scifact"):
            sections.append(scifact_section(eval_dir, variants, Path(tmp)))
        if args.only in (None, "nodejs"):
            nodejs_vs = grid(True) + [Variant(s, stop=False) for s in ("snowball", "none")]
            sections.append(nodejs_section(eval_dir, nodejs_vs, Path(tmp)))
        if args.only in (None, "rfcs"):
            sections.append(rfcs_section(eval_dir, variants, Path(tmp)))
    print("\n\n".join(sections))
    print(f"\nTotal run time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
