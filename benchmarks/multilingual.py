"""Known-item search in five languages: kbx beside SQLite FTS5 (unicode61 and trigram).

The data (``EVAL/multilingual``, see its SOURCE.md): Debian's translated manual pages
(ja, zh, ru, de, fr) as plain text, and per language known-item probes: a span of one
page's body (4-8 Han/Kana characters for ja and zh, three words for the others) that no
other page of that language holds. One index per language, each system on the same files:

* **kbx**: ``kbx index`` of the language's folder (rule-based recognizers, as the other
  benchmarks), then ``search(query, k=50, exact=0)``; a page ranks where its first passage
  does.
* **FTS5 unicode61**: one row per page, the OR of the probe's words, ``bm25()``.
* **FTS5 trigram**: one row per page, the probe as one quoted string (a substring match:
  trigram's own way to find a span), ``bm25()``.

Scored: hit@5 (the answer page among the first five pages) and MRR over the first 50. The
probes are split in two halves by a hash of the answer page, ``tune`` (the half looked at
while changing the analysis) and ``check`` (not looked at); both are reported. Index size
is the database file(s) after a checkpoint; times are wall seconds on this machine.
``--write``: the tables into docs/BENCHMARKS.md, section "Every script searchable, as
multilingual.py last wrote it" (or ``--title``), with the commit and the machine's load.

    .venv/bin/python benchmarks/multilingual.py ../shared/eval/multilingual [--langs ja,zh]
        [--write [--title TITLE]]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from common import REPO, build_kbx, fts5_or_query, table, write_section

from kbx.search.search import search
from kbx.store.db import Index

LANGS = ("ja", "zh", "ru", "de", "fr")
TITLE = "## Every script searchable, as multilingual.py last wrote it"
DEPTH = 50


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def half(probe: dict) -> str:
    """``tune`` or ``check``, fixed by the answer page's name."""
    return "tune" if hashlib.sha1(probe["answer_path"].encode()).digest()[0] % 2 else "check"


def load(root: Path, lang: str) -> tuple[dict[str, str], list[dict]]:
    pages = {
        p.relative_to(root / "corpus").as_posix(): p.read_text(encoding="utf-8")
        for p in sorted((root / "corpus" / lang).iterdir())
        if p.is_file()
    }
    lines = (root / f"probes_{lang}.jsonl").read_text(encoding="utf-8").splitlines()
    return pages, [json.loads(x) for x in lines if x.strip()]


def size_of(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def run_kbx(root: Path, lang: str, probes: list[dict], tmp: Path) -> dict:
    folder = root / "corpus" / lang
    db = tmp / f"kbx_{lang}.duckdb"
    secs = build_kbx(folder, db, "snowball")
    idx = Index.for_root(folder, db)
    ranks, t = [], time.perf_counter()
    for p in probes:
        hits = _kbx_search(idx, p["query"])
        pages = list(dict.fromkeys(f"{lang}/{h}" for h in hits))
        ranks.append(pages.index(p["answer_path"]) + 1 if p["answer_path"] in pages else None)
    q = time.perf_counter() - t
    files = [db, *db.parent.glob(f"{db.name}.*")]
    return {"ranks": ranks, "index_s": secs, "query_s": q, "bytes": size_of(files)}


def _kbx_search(idx: Index, query: str) -> list[str]:
    return [h.path for h in search(idx, query, k=DEPTH, exact=0).hits]


def run_fts5(pages: dict[str, str], probes: list[dict], tokenizer: str, tmp: Path) -> dict:
    path = tmp / f"fts5_{tokenizer}_{next(iter(pages)).split('/')[0]}.sqlite"
    con = sqlite3.connect(path)
    t = time.perf_counter()
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, body, tokenize='{tokenizer}')")
    with con:
        con.executemany("INSERT INTO t VALUES (?, ?)", list(pages.items()))
    secs = time.perf_counter() - t
    ranks, t = [], time.perf_counter()
    sql = f"SELECT path FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT {DEPTH}"
    for p in probes:
        if tokenizer == "trigram":
            q = '"' + p["query"].replace('"', '""') + '"'
        else:
            q = fts5_or_query(p["query"])
        try:
            found = [r[0] for r in con.execute(sql, [q]).fetchall()] if q else []
        except sqlite3.OperationalError:
            found = []
        ranks.append(found.index(p["answer_path"]) + 1 if p["answer_path"] in found else None)
    q = time.perf_counter() - t
    con.close()
    return {"ranks": ranks, "index_s": secs, "query_s": q, "bytes": size_of([path])}


def scores(ranks: list[int | None]) -> tuple[float, float]:
    n = len(ranks) or 1
    hit5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in ranks if r is not None) / n
    return hit5, mrr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("eval", type=Path, help="the multilingual eval folder")
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--write", action="store_true", help="write to docs/BENCHMARKS.md")
    ap.add_argument("--title", default=TITLE, help="the section --write replaces")
    args = ap.parse_args()
    started = time.perf_counter()
    langs = [x for x in args.langs.split(",") if x]
    results: dict[str, dict[str, dict]] = {}
    probes_of: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for lang in langs:
            pages, probes = load(args.eval, lang)
            probes_of[lang] = probes
            results[lang] = {
                "kbx": run_kbx(args.eval, lang, probes, tmp),
                "FTS5 unicode61": run_fts5(pages, probes, "unicode61", tmp),
                "FTS5 trigram": run_fts5(pages, probes, "trigram", tmp),
            }
            log(
                f"{lang}: "
                + ", ".join(f"{s} {scores(r['ranks'])[0]:.2f}" for s, r in results[lang].items())
            )
    systems = list(next(iter(results.values())))
    out = []
    for part in ("tune", "check", "all"):
        rows = []
        for s in systems:
            row = [s]
            for lang in langs:
                keep = [part in ("all", half(p)) for p in probes_of[lang]]
                ranks = [r for r, k in zip(results[lang][s]["ranks"], keep, strict=True) if k]
                h, m = scores(ranks)
                row.append(f"{h:.2f} / {m:.2f}")
            rows.append(row)
        counts = ", ".join(
            f"{lang} {sum(part in ('all', half(p)) for p in probes_of[lang])}" for lang in langs
        )
        out.append(f"hit@5 / MRR, {part} probes ({counts}):\n\n" + table(["system", *langs], rows))
    cost = []
    for s in systems:
        cells = []
        for lang in langs:
            r = results[lang][s]
            ms = 1000 * r["query_s"] / max(1, len(probes_of[lang]))
            cells.append(f"{r['bytes'] / 1e6:.1f} MB, {r['index_s']:.1f} s, {ms:.1f} ms")
        cost.append([s, *cells])
    out.append(
        "Index size, index time, mean time a probe (one process, this machine):\n\n"
        + table(["system", *langs], cost)
    )
    loadavg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print("\n\n".join(out))
    print(f"\n(load average at the end: {loadavg})")
    if args.write:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        title = args.title if args.title.startswith("## ") else f"## {args.title}"
        head = (
            f"{title}\n\n`.venv/bin/python benchmarks/multilingual.py {args.eval} --langs "
            f"{','.join(langs)} --write` at {commit}, {when}, "
            f"{time.perf_counter() - started:.0f} s; load average at the end {loadavg} on "
            f"{os.cpu_count()} cores (hit rates are counts; sizes and times are this "
            "machine's). kbx is `search(query, k=50, exact=0)`.\n\n"
        )
        write_section(REPO / "docs" / "BENCHMARKS.md", title, head + "\n\n".join(out) + "\n", "")


if __name__ == "__main__":
    main()
