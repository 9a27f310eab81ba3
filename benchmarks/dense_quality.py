"""Dense retrieval quality (issue 17): kbx BM25, the dense model, and their RRF fusion.

One run, on the same kbx indexes, through the library:

* **SciFact train** (BEIR layout; each document ``<id>.md`` holding ``# title`` and the
  abstract, as search_quality.py builds it): nDCG@10 and Recall@100. BM25 is kbx's
  ``rank(limit=1000)``; dense is the exact cosine of the query vector with every unit's
  (top 1000); a document scores its best unit. Fusion by ``kbx.search.hybrid.rrf`` at
  k = 20 and 60, passage-level (units fused, then mapped to documents) and file-level
  (each list mapped to documents first, then fused).
* **Node.js dev questions** (../shared/eval/probes): hit@1, hit@5 and MRR by kind,
  lexical and paraphrase; a passage is cited at its first placement (``hits_for``), the
  top 5 of each list, as ``kbx search -k 5`` shows.

Vectors are computed once per (model, version) and kept under ``--cache`` (default
/tmp/kbx-dense) by unit hash, so a rerun only ranks; the kbx indexes are kept there too.
A script, not a test: it prints Markdown tables and asserts nothing.

    .venv/bin/python benchmarks/dense_quality.py [--eval ../shared/eval] [--skip-nodejs]
        [--skip-scifact]
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from common import (
    NODEJS,
    Question,
    build_kbx,
    eval_arg,
    first_hit,
    hit_metrics,
    load_questions,
    table,
)
from search_quality import load_scifact, scores, units_to_docs

from kbx.search.bm25 import rank
from kbx.search.hybrid import fuse, rrf
from kbx.search.search import FUSION_DEPTH, hits_for
from kbx.store.db import Index
from kbx.store.postings import analyzer_of
from kbx.vectors.matrix import best_per_unit
from kbx.vectors.model import BATCH, Encoder, Windows, packaged, passage_text

DEPTH = 1000  # of each list, as search_quality.py ranks BM25
Rows = list[int]  # unit ids, best first


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class UnitVectors:
    """Every window's vector of every unit, computed once and kept in an .npz keyed by unit
    hash (a row per window, in order). ``--seed VERSION`` takes each unit's first window
    from the cache of an older version whose vectors were the first window alone (the
    same text, truncated the same way), and checks on a sample that they agree."""

    def __init__(
        self,
        idx: Index,
        enc: Encoder,
        cache: Path,
        label: str,
        reverse: bool = False,
        seed: str | None = None,
        pool: Callable[[dict[str, np.ndarray]], set[str]] | None = None,
    ):
        stem = f"{label}-{enc.name}-{enc.version}"
        path = cache / f"{stem}{'-reverse' if reverse else ''}.npz"
        with idx.reader() as con:
            rows = con.execute(
                "SELECT unit_id, unit_hash, heading_path, text FROM units ORDER BY unit_id"
            ).fetchall()
        known: dict[str, np.ndarray] = {}
        for part in cache.glob(f"{stem}*.npz"):  # a second process may have run from the end
            if not part.name.endswith(".tmp.npz"):
                z = np.load(part)
                rows_of: dict[str, list[np.ndarray]] = {}
                for h, v in zip(z["hashes"].tolist(), z["vectors"], strict=True):
                    rows_of.setdefault(h, []).append(v)
                for h, v in rows_of.items():  # a unit both files hold: its rows once
                    known.setdefault(h, np.stack(v))
        firsts = self._seed(cache, label, enc, seed, rows) if seed else {}
        only = pool(firsts) if pool else None  # windows for these; the rest's first alone
        todo = [
            r
            for r in rows
            if r[1] not in known and (only is None or r[1] in only or r[1] not in firsts)
        ]
        if reverse:
            todo.reverse()
        self.rate = None
        if todo:
            t, windows = time.perf_counter(), 0
            for s in range(0, len(todo), 64):
                part = todo[s : s + 64]
                texts = [passage_text(r[2], r[3]) for r in part]
                seeded = [r[1] in firsts for r in part]
                w = later_windows(enc, texts, seeded)
                for i, r in enumerate(part):
                    rows_i = w.vectors[w.owner == i]
                    known[r[1]] = np.vstack([firsts[r[1]][None], rows_i]) if seeded[i] else rows_i
                windows += len(w.owner)
                took = time.perf_counter() - t
                log(
                    f"{label}: embedded {s + len(part)}/{len(todo)} units, {windows} windows "
                    f"({windows / took:.1f} windows/s, load {os.getloadavg()[0]:.1f})"
                )
                self._save(path, known)
            self.rate = (len(todo) / took, windows / took)
        self.partial = sum(1 for r in rows if r[1] not in known)
        known.update({r[1]: firsts[r[1]][None] for r in rows if r[1] not in known})
        self.ids = np.concatenate([np.full(len(known[r[1]]), r[0]) for r in rows])
        self.matrix = np.vstack([known[r[1]] for r in rows])
        self.first_rows = np.concatenate(
            [np.arange(len(known[r[1]])) == 0 for r in rows]
        )  # the first window of each unit: what the model read before windows

    @staticmethod
    def _save(path: Path, known: dict[str, np.ndarray]) -> None:
        tmp = path.with_suffix(".tmp.npz")
        hashes = np.array([h for h, v in known.items() for _ in range(len(v))])
        np.savez(tmp, hashes=hashes, vectors=np.vstack(list(known.values())))
        os.replace(tmp, path)  # a killed run keeps what it had

    @staticmethod
    def _seed(cache: Path, label: str, enc: Encoder, seed: str, rows) -> dict[str, np.ndarray]:
        firsts: dict[str, np.ndarray] = {}
        for part in cache.glob(f"{label}-{enc.name}-{seed}*.npz"):
            z = np.load(part)
            firsts.update(zip(z["hashes"].tolist(), z["vectors"], strict=True))
        sample = [r for r in rows if r[1] in firsts][:: max(1, len(rows) // 16)][:16]
        if sample:
            now = enc.passages([passage_text(r[2], r[3]) for r in sample]).first()
            cos = (now * np.stack([firsts[r[1]] for r in sample])).sum(1)
            log(f"{label}: seed {seed}: {len(firsts)} first windows, cosine min {cos.min():.6f}")
            if cos.min() < 0.9999:
                raise SystemExit(f"the seed's vectors are not today's first windows ({cos})")
        return firsts

    def rank(self, q: np.ndarray, depth: int = DEPTH) -> Rows:
        return [u for u, _ in self.scored(q, depth)]

    def scored(
        self, q: np.ndarray, depth: int = DEPTH, first_only: bool = False
    ) -> list[tuple[int, float]]:
        """The units by their best window (or by their first, as before windows)."""
        rows = self.first_rows if first_only else slice(None)
        ids, s = best_per_unit(self.ids[rows], self.matrix[rows] @ q)
        top = np.argpartition(-s, min(depth, len(s) - 1))[:depth]
        top = top[np.argsort(-s[top], kind="stable")]
        return [(int(ids[i]), float(s[i])) for i in top]


def later_windows(enc: Encoder, texts: list[str], skip_first: list[bool]) -> Windows:
    """``enc.passages(texts)``, less the first window of the texts marked (the seed has
    them): the same tokenizer, batches and model call."""
    encs, owner = [], []
    for i, e in enumerate(
        enc._weights().tok.encode_batch([enc.recipe.passage_prefix + t for t in texts])
    ):
        parts = [e, *e.overflowing][: enc.recipe.max_windows][1 if skip_first[i] else 0 :]
        encs.extend(parts)
        owner.extend([i] * len(parts))
    out = np.zeros((len(encs), enc.dim), dtype=np.float32)
    order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
    for s in range(0, len(order), BATCH):
        chunk = order[s : s + BATCH]
        out[chunk] = enc._run([encs[i] for i in chunk])
    return Windows(out, np.array(owner, dtype=np.int64))


class QueryVectors:
    """Query vectors kept beside the unit vectors, so a rerun only ranks."""

    def __init__(self, enc: Encoder, cache: Path, label: str):
        self.enc, self.path = enc, cache / f"{label}-queries-{enc.name}-{enc.version}.npz"
        self.known: dict[str, np.ndarray] = {}
        if self.path.exists():
            z = np.load(self.path)
            self.known = dict(zip(z["texts"].tolist(), z["vectors"], strict=True))
        self.added = 0

    def __call__(self, text: str) -> np.ndarray:
        if text not in self.known:
            self.known[text] = self.enc.query(text)
            self.added += 1
        return self.known[text]

    def save(self) -> None:
        if self.added:
            texts = np.array(list(self.known))
            np.savez(self.path, texts=texts, vectors=np.stack(list(self.known.values())))


def minmax(rows: list[tuple]) -> dict[int, float]:
    """Scores of a list scaled to [0, 1] by its own best and worst."""
    if not rows:
        return {}
    hi, lo = max(r[1] for r in rows), min(r[1] for r in rows)
    return {r[0]: (r[1] - lo) / (hi - lo) if hi > lo else 1.0 for r in rows}


def score_fusion(bm: list[tuple], de: list[tuple[int, float]]) -> Rows:
    """A comparison for RRF: the sum of each list's min-max scaled scores (CombSUM,
    unweighted; a unit missing from a list scores 0 there)."""
    a, b = minmax(bm), minmax(de)
    return sorted(a.keys() | b.keys(), key=lambda u: (-(a.get(u, 0.0) + b.get(u, 0.0)), u))


def to_docs(units: Rows, docs_of: dict[int, list[str]]) -> list[str]:
    return list(dict.fromkeys(d for u in units for d in docs_of.get(u, [])))


def fusions(
    bm_rows: list[tuple], de_rows: list[tuple[int, float]], docs_of: dict[int, list[str]]
) -> dict[str, list[str]]:
    """Each fused document ranking of one query, by name."""
    bm, de = [r[0] for r in bm_rows], [r[0] for r in de_rows]
    out = {}
    for k in (20, 60):
        out[f"RRF k={k}, passages"] = to_docs([f.key for f in rrf([bm, de], k)], docs_of)
        fused = rrf([to_docs(bm, docs_of), to_docs(de, docs_of)], k)
        out[f"RRF k={k}, files"] = [f.key for f in fused]
    out["RRF k=20, dense weight 0.5, passages"] = to_docs(
        [f.key for f in rrf([bm, de], 20, [1.0, 0.5])], docs_of
    )
    out["min-max score sum, passages (a comparison)"] = to_docs(
        score_fusion(bm_rows, de_rows), docs_of
    )
    out[HYBRID] = to_docs(kbx_hybrid(bm_rows, de_rows), docs_of)
    return out


HYBRID = f"kbx search --mode hybrid (convex, top {FUSION_DEPTH})"


def kbx_hybrid(bm_rows: list[tuple], de_rows: list[tuple[int, float]]) -> Rows:
    """The fusion ``kbx search --mode hybrid`` ranks by, over the lists' top it fuses."""
    n = FUSION_DEPTH
    return [r[0] for r in fuse(bm_rows[:n], de_rows[:n], (len(bm_rows) > n, len(de_rows) > n))]


def scifact(
    eval_dir: Path, cache: Path, enc: Encoder, reverse: bool = False, seed: str | None = None
) -> str:
    data = load_scifact(eval_dir / "beir_scifact")
    root, db = cache / "scifact", cache / "scifact.duckdb"
    if not root.exists():
        root.mkdir(parents=True)
        for did, (title, text) in data.corpus.items():
            (root / f"{did}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    log(f"scifact: kbx index {build_kbx(root, db, 'snowball'):.1f} s")  # none if unchanged
    idx = Index.for_root(root, db)
    vecs = UnitVectors(idx, enc, cache, "scifact", reverse, seed)
    qvecs = QueryVectors(enc, cache, "scifact")
    runs: dict[str, dict[str, list[str]]] = {}
    t_dense = 0.0
    with idx.reader() as con:
        an = analyzer_of(con)
        docs_of = units_to_docs(con)
        for qid, text in data.queries.items():
            bm = rank(con, an.query(text), limit=DEPTH)[0]
            t = time.perf_counter()
            de = vecs.scored(qvecs(text))
            t_dense += time.perf_counter() - t
            de0 = vecs.scored(qvecs(text), first_only=True)
            runs.setdefault("kbx BM25", {})[qid] = to_docs([r[0] for r in bm], docs_of)
            runs.setdefault(f"dense {enc.name}, first window (before)", {})[qid] = to_docs(
                [u for u, _ in de0], docs_of
            )
            runs.setdefault(f"dense {enc.name}, best window", {})[qid] = to_docs(
                [u for u, _ in de], docs_of
            )
            before = rrf([[r[0] for r in bm], [u for u, _ in de0]], 20)
            runs.setdefault("RRF k=20, passages, first window (before)", {})[qid] = to_docs(
                [f.key for f in before], docs_of
            )
            for name, ranked in fusions(bm, de, docs_of).items():
                runs.setdefault(name, {})[qid] = ranked
    qvecs.save()
    rows = [(name, *scores(run, data.qrels)[:2]) for name, run in runs.items()]
    rate = (
        f"{vecs.rate[0]:.1f} units/s, {vecs.rate[1]:.1f} windows/s"
        if vecs.rate
        else "vectors from the cache"
    )
    head = (
        f"### SciFact train ({len(data.qrels)} queries, {len(data.corpus):,} documents, "
        f"{len(set(vecs.ids.tolist())):,} units, {len(vecs.ids):,} windows; embedding {rate}; "
        "query embedding and exact cosine "
        f"{t_dense / len(data.queries) * 1000:.0f} ms per query"
        f"{', query vectors from the cache' if not qvecs.added else ''})\n\n"
    )
    return head + table(["system", "nDCG@10", "Recall@100"], rows)


def nodejs(
    eval_dir: Path,
    cache: Path,
    enc: Encoder,
    reverse: bool = False,
    seed: str | None = None,
    pool: int | None = None,
) -> str:
    questions = load_questions(eval_dir)
    db = cache / "nodejs.duckdb"
    log(f"nodejs: kbx index {build_kbx(eval_dir / NODEJS, db, 'snowball'):.1f} s")
    idx = Index.for_root(eval_dir / NODEJS, db)

    def candidates(firsts: dict[str, np.ndarray]) -> set[str]:
        """The units in the top ``pool`` of BM25 or of the first-window list for a question."""
        with idx.reader() as con:
            an = analyzer_of(con)
            rows = [r for r in con.execute("SELECT unit_id, unit_hash FROM units").fetchall()]
            hash_of = dict(rows)
            have = [(u, h) for u, h in rows if h in firsts]
            m = np.stack([firsts[h] for _, h in have])
            out: set[str] = set()
            for q in questions:
                out.update(hash_of[r[0]] for r in rank(con, an.query(q.text), limit=pool)[0])
                s = m @ enc.query(q.text)
                out.update(have[i][1] for i in np.argsort(-s)[:pool])
        log(f"nodejs: a pool of {len(out)} units (top {pool} of each list, each question)")
        return out

    vecs = UnitVectors(idx, enc, cache, "nodejs", reverse, seed, candidates if pool else None)
    ranks: dict[str, list[int | None]] = {}
    with idx.reader() as con:
        an = analyzer_of(con)

        def cite(units: Rows, groups: list[list[str]]) -> list[tuple[str, int, int]]:
            hits = hits_for(con, [(u, 0.0, 0) for u in units[:5]], groups, an)
            return [(h.path, h.start_line, h.end_line) for h in hits]

        for q in questions:
            groups = an.query(q.text)
            bm_rows = rank(con, groups, limit=DEPTH)[0]
            qv = enc.query(q.text)
            de_rows = vecs.scored(qv)
            bm, de = [r[0] for r in bm_rows], [u for u, _ in de_rows]
            de0 = [u for u, _ in vecs.scored(qv, first_only=True)]
            lists: dict[str, Rows] = {
                "kbx BM25": bm,
                f"dense {enc.name}, first window (before)": de0,
                f"dense {enc.name}, best window": de,
                "RRF k=20, passages, first window (before)": [f.key for f in rrf([bm, de0], 20)],
            }
            for k in (20, 60):
                lists[f"RRF k={k}, passages"] = [f.key for f in rrf([bm, de], k)]
            lists["RRF k=20, dense weight 0.5"] = [f.key for f in rrf([bm, de], 20, [1.0, 0.5])]
            lists["min-max score sum (a comparison)"] = score_fusion(bm_rows, de_rows)
            lists[HYBRID] = kbx_hybrid(bm_rows, de_rows)
            for name, units in lists.items():
                ranks.setdefault(name, []).append(first_hit(q, cite(units, groups)))
    table_ = nodejs_table(questions, ranks, len(set(vecs.ids.tolist())), len(vecs.ids))
    if vecs.partial:
        table_ += (
            f"\n\n{vecs.partial:,} units outside the pool (top {pool} of BM25 and of the "
            "first-window list, for each question) rank by their first window alone."
        )
    return table_


KIND_HEADS = [f"{k} {m}" for k in ("lex", "para", "all") for m in ("hit@1", "hit@5", "MRR")]


def kind_rows(questions: list[Question], ranks: dict[str, list[int | None]]) -> list[list]:
    """A row a system: hit@1, hit@5 and MRR of its first-hit ranks, by kind and over all."""
    rows = []
    for name, rs in ranks.items():
        row: list = [name]
        for kind in ("lexical", "paraphrase", None):
            sel = [r for q, r in zip(questions, rs, strict=True) if kind in (None, q.kind)]
            row.extend(f"{m:.2f}" for m in hit_metrics(sel))
        rows.append(row)
    return rows


def nodejs_table(
    questions: list[Question], ranks: dict[str, list[int | None]], n: int, windows: int
) -> str:
    heads, rows = ["system", *KIND_HEADS], kind_rows(questions, ranks)
    head = (
        f"### Node.js dev questions ({len(questions)}, {n:,} units, {windows:,} windows), top 5\n\n"
    )
    return head + table(heads, rows)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=Path("/tmp/kbx-dense"))
    p.add_argument("--skip-nodejs", action="store_true")
    p.add_argument("--skip-scifact", action="store_true")
    p.add_argument("--reverse", action="store_true", help="embed units from the end")
    p.add_argument("--seed", metavar="VERSION", help="first windows from this version's cache")
    p.add_argument(
        "--pool",
        type=int,
        help="Node.js: every window only for the top N units of BM25 and of the seed's list",
    )
    a = p.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    enc: Encoder = packaged()
    log(f"model {enc.name} version {enc.version}, stride {enc.stride}")
    parts: list[Callable[[Path, Path, Encoder], str]] = []
    if not a.skip_scifact:
        parts.append(lambda e, c, m: scifact(e, c, m, a.reverse, a.seed))
    if not a.skip_nodejs:
        parts.append(lambda e, c, m: nodejs(e, c, m, a.reverse, a.seed, a.pool))
    for part in parts:
        print(part(a.eval, a.cache, enc), flush=True)
        print(flush=True)


if __name__ == "__main__":
    main()
