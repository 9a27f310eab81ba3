"""Hybrid at or above words alone: the fusion's BM25 weight chosen on tune halves.

``search/hybrid.py`` fuses BM25 and the dense list with BM25 weighing ``ALPHA`` for a query
its best passage by words holds none of, rising to 1 as it holds all of it
(``COVERAGE_POWER``). For each setting of the two, every question is searched as the CLI
does (``search(k, exact=0)``, by words and hybrid) on three sets, each cut in two:

* the RFC dev questions (``corpora/rfcs_dev``, k 8): tune = odd question numbers;
* the Node.js questions (``corpora/nodejs``, k 5): tune = even positions in the file (their
  ids are all odd);
* BEIR SciFact train (k 10, nDCG@10 of the files hit): tune = odd query ids.

A setting qualifies when, on every tune half, hybrid's hit@1 and hit@5 are at or above
words alone for literal and paraphrased questions alike; of those, the best SciFact tune
nDCG@10 is chosen. The other halves are then what the choice is reported on. The vectors
are the packaged model's, cached as ``search_quality.py --hybrid`` caches them.

    python -m benchmarks hybrid_floor [--eval DIR] [--settings 0.4:2,0.6:2] [--write]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from common import (
    NODEJS,
    QUESTIONS,
    Question,
    build_kbx,
    eval_arg,
    first_hit,
    hit_metrics,
    load_questions,
    table,
)
from search_quality import (
    RFC_QUESTIONS,
    RFCS_DEV,
    VECTORS,
    Dense,
    load_scifact,
    scores,
    with_vectors,
)

from kbx.search import hybrid
from kbx.search.search import search
from kbx.store.db import Index

Setting = tuple[float, float]  # (ALPHA, COVERAGE_POWER)


def corpora(ev: Path, work: Path) -> tuple[dict, tuple]:
    """The question sets (name: index, label, questions, k, tune rule) and SciFact's index
    with its data."""
    sets = {}
    for name, label, root, qfile, k in (
        ("RFC dev", "rfcs", ev / RFCS_DEV, RFC_QUESTIONS, 8),
        ("Node.js", "nodejs", ev / NODEJS, QUESTIONS, 5),
    ):
        db = work / f"{label}.duckdb"
        build_kbx(root, db, "snowball")
        qs = load_questions(ev, qfile)
        if name == "RFC dev":
            tunes = {q.id for q in qs if int(q.id[2:]) % 2 == 1}
        else:
            tunes = {q.id for i, q in enumerate(qs) if i % 2 == 0}
        sets[name] = (
            Index.for_root(root, db),
            label,
            qs,
            k,
            lambda q, t=frozenset(tunes): q.id in t,
        )
    data = load_scifact(ev / "beir_scifact")
    sroot = work / "scifact"
    sroot.mkdir()
    for did, (title, text) in data.corpus.items():
        (sroot / f"{did}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    build_kbx(sroot, work / "scifact.duckdb", "snowball")
    return sets, (Index.for_root(sroot, work / "scifact.duckdb"), data)


def scifact_halves(idx: Index, data, mode: str) -> dict[str, float]:
    """SciFact nDCG@10 of the files ``search(k=10)`` hits in ``mode``, per half (tune =
    odd query ids)."""
    run = {}
    for qid, text in data.queries.items():
        hits = search(idx, text, k=10, exact=0, mode=mode).hits
        run[qid] = list(dict.fromkeys(h.path.rsplit(".", 1)[0] for h in hits))
    out = {}
    for part, odd in (("tune", 1), ("held", 0)):
        qr = {q: v for q, v in data.qrels.items() if int(q) % 2 == odd}
        out[part] = scores({q: v for q, v in run.items() if q in qr}, qr)[0]
    return out


def _set(setting: Setting | None) -> None:
    """Search with ``setting`` (None: the shipped one) from now on."""
    hybrid.ALPHA, hybrid.COVERAGE_POWER = setting or SHIPPED


SHIPPED: Setting = (hybrid.ALPHA, hybrid.COVERAGE_POWER)


def question_ranks(idx: Index, qs: list[Question], k: int, mode: str) -> list[int | None]:
    out = []
    for q in qs:
        hits = search(idx, q.text, k=k, exact=0, mode=mode).hits
        out.append(first_hit(q, [(h.path, h.start_line, h.end_line) for h in hits]))
    return out


def by_half(qs: list[Question], ranks: list, tune) -> dict[tuple[str, str], tuple]:
    """hit@1, hit@5, MRR per (kind, half)."""
    out = {}
    for kind in ("lexical", "paraphrase"):
        for part in ("tune", "held"):
            sel = [
                r
                for q, r in zip(qs, ranks, strict=True)
                if q.kind == kind and tune(q) == (part == "tune")
            ]
            out[kind, part] = hit_metrics(sel)
    return out


def main() -> None:
    p = eval_arg((__doc__ or "").split("\n\n")[0])
    p.add_argument("--settings", default="0.4:1,0.4:2,0.5:1,0.5:2,0.6:1,0.6:2,0.7:2")
    p.add_argument("--write", action="store_true", help="(python -m benchmarks records it)")
    args = p.parse_args()
    ev = args.eval
    settings = [tuple(float(x) for x in s.split(":")) for s in args.settings.split(",")]
    dense = Dense(VECTORS, None, [])  # the windows the packaged model keeps
    work = Path(tempfile.mkdtemp(prefix="kbx-hybrid-floor-"))
    sets, (sidx, data) = corpora(ev, work)
    for idx, label, *_ in sets.values():
        with_vectors(idx, label, dense)  # the cache search_quality.py --hybrid keeps
    with_vectors(sidx, "scifact", dense)
    sets = {n: (idx, qs, k, t) for n, (idx, _, qs, k, t) in sets.items()}

    base = {
        n: by_half(qs, question_ranks(idx, qs, k, "bm25"), t) for n, (idx, qs, k, t) in sets.items()
    }
    base_sf = scifact_halves(sidx, data, "bm25")
    rows, chosen = [], None
    for s in [None, *settings]:
        _set(s)
        got = {
            n: by_half(qs, question_ranks(idx, qs, k, "hybrid"), t)
            for n, (idx, qs, k, t) in sets.items()
        }
        sf = scifact_halves(sidx, data, "hybrid")
        ok = all(
            got[n][kind, "tune"][i] >= base[n][kind, "tune"][i]
            for n in sets
            for kind in ("lexical", "paraphrase")
            for i in (0, 1)
        )
        label = f"hybrid {s[0]:g}, power {s[1]:g}" if s else "hybrid as shipped"
        rows.append((label, got, sf, ok))
        if s and ok and (chosen is None or sf["tune"] > chosen[1]):
            chosen = (s, sf["tune"])
        print(
            f"{label}: qualifies {ok}, SciFact tune {sf['tune']:.3f}", file=sys.stderr, flush=True
        )
    _set(None)

    def cells(r: dict, part: str) -> list[str]:
        return [
            f"{r[n][kind, part][0]:.2f} / {r[n][kind, part][1]:.2f}"
            for n in sets
            for kind in ("lexical", "paraphrase")
        ]

    heads = ["system"] + [
        f"{n} {kind[:4]}. hit@1 / hit@5" for n in sets for kind in ("lexical", "paraphrase")
    ]
    out = []
    for part in ("tune", "held"):
        lines = [["words alone (BM25)", *cells(base, part), f"{base_sf[part]:.3f}", "–"]]
        lines += [
            [label, *cells(got, part), f"{sf[part]:.3f}", "yes" if ok else "no"]
            for label, got, sf, ok in rows
        ]
        out += [
            f"{part.capitalize()} halves:\n",
            table([*heads, "SciFact nDCG@10", "at or above BM25 on tune"], lines),
            "",
        ]
    pick = f"{chosen[0][0]:g}, power {chosen[0][1]:g}" if chosen else "none"
    out.append(f"Chosen by the rule: {pick}; shipped: {SHIPPED[0]:g}, power {SHIPPED[1]:g}.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
