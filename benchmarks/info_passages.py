"""Passage ranking on long plain-text manuals no setting was chosen on: GNU Info manuals.

Every ranking setting of kbx was chosen on RFCs, Node.js pages and SciFact. This measures
it on a kind of long plain text none of them is: the GNU Info manuals Debian installs
(``/usr/share/info``: coreutils, grep, sed, gzip, diffutils, find and the rest, each read
whole as the corpus), with 40 questions written for this benchmark
(``benchmarks/data/info_questions.tsv``: 18 lexical, 22 paraphrased, each with the lines
that answer it, written before any ranking was run on them and not changed after).

The manuals are decompressed into a scratch folder, so kbx and the peer read the same
bytes: FTS5 (porter, ``bm25``) over windows of at most 1,500 characters, the everyday
baseline, and FTS5 over kbx's own units (which tells segmentation from ranking). A hit is
a passage of the answer's file overlapping its lines; ``search(k=8, exact=0)`` as for the
RFC questions. ``--hybrid`` adds kbx's hybrid ranking (vectors of the packaged model,
cached in ``--vectors``).

    apt-get install coreutils grep sed gzip diffutils findutils   # the manuals, if absent
    .venv/bin/python -m benchmarks info_passages [--info /usr/share/info] [--hybrid] [--write]
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from pathlib import Path

from common import (
    REPO,
    PassageFTS5,
    Question,
    build_kbx,
    first_hit,
    hit_metrics,
    load_questions,
    table,
    write_section,
)
from search_quality import VECTORS, Dense, UnitFTS5, hybrid_ranks, with_vectors

from kbx.search.search import search
from kbx.store.db import Index

QUESTIONS = Path("data") / "info_questions.tsv"
K = 8
TITLE = "## Passages in GNU Info manuals (unseen long plain text)"


def manuals(info: Path, out: Path) -> list[str]:
    """Decompress every Info manual of ``info`` (split ones part by part) into ``out``."""
    names = []
    for f in sorted(info.glob("*.info*")):
        name = f.name.removesuffix(".gz")
        data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        (out / name).write_bytes(data)
        names.append(name)
    return names


def ranks_of(questions: list[Question], searcher) -> list[int | None]:
    return [first_hit(q, searcher(q.text)) for q in questions]


def kbx_hits(idx: Index, text: str) -> list[tuple[str, int, int]]:
    return [(h.path, h.start_line, h.end_line) for h in search(idx, text, k=K, exact=0).hits]


def row(name: str, questions: list[Question], ranks: list[int | None]) -> list:
    out: list = [name]
    for kind in ("lexical", "paraphrase", None):
        sel = [r for q, r in zip(questions, ranks, strict=True) if kind in (None, q.kind)]
        out.append(" / ".join(f"{m:.2f}" for m in hit_metrics(sel)))
    return out


def misses(questions: list[Question], ranks: dict[str, list[int | None]]) -> str:
    """The questions any system missed in its top 5, with each system's rank."""
    names = list(ranks)
    rows = [
        [q.id, q.kind, q.text[:70]] + [ranks[n][i] or "-" for n in names]
        for i, q in enumerate(questions)
        if any((ranks[n][i] or 99) > 5 for n in names)
    ]
    return table(["id", "kind", "question", *names], rows, right=3)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--info", type=Path, default=Path("/usr/share/info"))
    p.add_argument("--hybrid", action="store_true", help="hybrid beside words, with vectors")
    p.add_argument("--vectors", type=Path, default=VECTORS, help="the vectors' cache")
    p.add_argument("--write", action="store_true", help="write to docs/BENCHMARKS.md")
    args = p.parse_args()
    questions = load_questions(REPO / "benchmarks", QUESTIONS)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kbx-info-") as tmp:
        root = Path(tmp) / "info"
        root.mkdir()
        names = manuals(args.info, root)
        missing = {q.answer_path for q in questions} - set(names)
        if missing:
            raise SystemExit(f"manuals missing from {args.info}: {sorted(missing)}")
        db = Path(tmp) / "info.duckdb"
        took = build_kbx(root, db, "snowball")
        idx = Index.for_root(root, db)
        with idx.reader() as con:
            (units,) = con.execute("SELECT count(*) FROM units").fetchone()
        fts, unit_fts = PassageFTS5(root, files=names), UnitFTS5(idx)
        ranks = {
            "kbx BM25": ranks_of(questions, lambda t: kbx_hits(idx, t)),
            "FTS5 windows": ranks_of(questions, lambda t: fts.search(t, K)),
            "FTS5 over kbx's units": ranks_of(questions, lambda t: unit_fts.search(t, K)),
        }
        if args.hybrid:
            with_vectors(idx, "info", Dense(args.vectors, None, []))
            ranks["kbx hybrid"] = hybrid_ranks(idx, questions, K)["hybrid"]
    n = {k: sum(q.kind == k for q in questions) for k in ("lexical", "paraphrase")}
    body = "\n".join(
        [
            f"{len(names)} manuals, {units:,} kbx units (indexed in {took:.1f} s); "
            f"{len(questions)} questions ({n['lexical']} lexical, {n['paraphrase']} "
            f"paraphrased), top {K}; each cell hit@1 / hit@5 / MRR.",
            "",
            table(
                ["system", "lexical", "paraphrased", "all"],
                [row(name, questions, r) for name, r in ranks.items()],
            ),
            "",
            "Questions some system missed in its top 5 (its rank, - past 8):",
            "",
            misses(questions, ranks),
        ]
    )
    print(body)
    print(f"\nTotal run time: {time.perf_counter() - started:.0f} s")
    if args.write:
        write_section(REPO / "docs" / "BENCHMARKS.md", TITLE, f"{TITLE}\n\n{body}\n", "")


if __name__ == "__main__":
    main()
