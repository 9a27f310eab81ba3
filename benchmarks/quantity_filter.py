"""Quantity filters (issue 18) on the Node.js index: latency beside the date filter, and
exactness against a brute-force scan of the mentions.

The index is a rules-only build of ``corpora/nodejs`` (default ``/tmp/kbx-prof/nodejs``);
its file is copied to a temporary folder and migrated there (schema 6 adds
``passage_quantities``, filled by the entity layer's rebuild), so the original is never
touched. Three things are measured in one run:

* **Exactness**: for each filter in ``SPECS`` (every operator, ranges, unit conversions,
  each dimension the corpus holds), the passages the compiled filter allows against those
  a scan finds: every QUANTITY and MONEY mention of a filtering recognizer, its value
  re-read here by its own parser, kept when its interval overlaps the asked one. Each
  asked value is also checked against pint's own conversion of the same quantity.
  Then every hit of a filtered search over the probe questions must hold a kept quantity.
* **Latency**: each probe question searched (``exact=0``: the ranking and the filter, not
  the phrase pass) unfiltered, with each quantity filter and with date filters, the
  configurations interleaved question by question; median of ``--repeat`` runs per
  question, p50 and p90 over questions in milliseconds, and the ratio to the date filter.
* **Rebuild and facets**: the entity layer's rebuild and its quantities step alone, and
  ``search --facets`` with and without the quantities facet's table filled (a second copy
  with the table emptied, measured side by side).

    .venv/bin/python benchmarks/quantity_filter.py [--eval ../shared/eval] [--repeat 3]

A script, not a test: it asserts nothing about speed; it exits 1 if a filter is inexact.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from common import REPO, eval_arg, load_questions, percentile, table, write_section

from kbx.entities import build
from kbx.recognizers.quantity_filter import parse
from kbx.recognizers.units import registry
from kbx.search.filters import Filters, compile_filters
from kbx.search.search import search
from kbx.store.db import Index
from kbx.store.schema import ensure_schema

TITLE = "## Quantity filters (issue 18)"
# (filter, the same asked value as pint reads it, or None for money)
SPECS = [
    ("time>1 min", "1 minute"),
    ("time>=1 min", "1 minute"),
    ("time<1 s", "1 second"),
    ("time<=100 ms", "100 millisecond"),
    ("time=1 h", "1 hour"),
    ("duration=1 day..1 week", "1 day"),
    (">=30 s", "30 second"),
    ("size>=1MB", "1 megabyte"),
    ("size<=4GB", "4 gigabyte"),
    ("size>4 GiB", "4 gibibyte"),
    ("data=16KB..64KB", "16 kilobyte"),
    ("size>1e6 B", "1e6 byte"),
    ("percent>50", "50 percent"),
    ("percent<=1", "1 percent"),
    ("<1%", "1 percent"),
    ("percent=5..10", "5 percent"),
    ("frequency>=1 Hz", "1 hertz"),
    ("mass>1 g", "1 gram"),
    ("usd>=400", None),
    ("money<USD 300", None),
]
LATENCY = ["time>=1 min", "size>=1MB", "percent>50", "size<=4GB"]
DATES = [("after 2023", {"after": "2023"}), ("after 2018 before 2018",
                                              {"after": "2018", "before": "2018"})]  # fmt: skip
_VALUE = re.compile(r"^(\S+?)(?:\.\.(\S+))? (.+)$")


def _si(pint_text: str) -> float:
    """What pint makes of a quantity in the unit kbx stores for its dimension."""
    q = registry().Quantity(pint_text)
    if "byte" in pint_text:
        return q.to("byte").magnitude
    if "percent" in pint_text:
        return q.to("percent").magnitude
    return q.to_base_units().magnitude


def _scan(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int, str, float, float]]:
    """Every placed quantity of a filtering recognizer: (doc, unit, SI unit, lo, hi), its
    value read here, not by kbx's reader."""
    out = []
    for doc, unit, type_, value in con.execute(
        """SELECT pl.doc_id, pl.unit_id, m.type, m.value FROM mentions m
           JOIN recognizer_info r ON r.name = m.recognizer AND r.filter
           JOIN units u USING (unit_hash) JOIN placements pl USING (unit_id)
           WHERE m.type IN ('QUANTITY', 'MONEY') AND m.value IS NOT NULL"""
    ).fetchall():
        if type_ == "MONEY":
            code, amount = value.split(" ")
            out.append((doc, unit, code, float(amount), float(amount)))
        elif m := _VALUE.match(value):
            lo = float(m[1])
            hi = float(m[2]) if m[2] else lo
            out.append((doc, unit, m[3], min(lo, hi), max(lo, hi)))
    return out


def _keeps(op: str, a: float, b: float, lo: float, hi: float) -> bool:
    """Overlap of a stored [lo, hi] with what ``op`` asks of [a, b] (a == b but for =)."""
    return {
        ">": hi > a,
        ">=": hi >= a,
        "<": lo < a,
        "<=": lo <= a,
        "=": lo <= b and hi >= a,
    }[op]


def exactness(con: duckdb.DuckDBPyConnection) -> tuple[list[list], bool]:
    scanned = _scan(con)
    rows, exact = [], True
    for spec, pint_text in SPECS:
        asked = parse(spec)
        converted = "—"
        if pint_text:
            want = _si(pint_text)
            converted = "yes" if abs(asked.lo - want) <= 1e-5 * abs(want) else f"no ({want})"
            exact &= converted == "yes"
        brute = {
            (d, u)
            for d, u, unit, lo, hi in scanned
            if unit == asked.unit and _keeps(asked.op, asked.lo, asked.hi, lo, hi)
        }
        f = compile_filters(con, Filters(quantities=[spec]))
        allowed = set(
            con.execute(f"SELECT doc_id, unit_id FROM ({f.places[0]})", f.params).fetchall()
        )
        missed, extra = len(brute - allowed), len(allowed - brute)
        exact &= not missed and not extra
        rows.append([f"`{spec}`", asked.unit, len(allowed), len(brute), missed, extra, converted])
    return rows, exact


def hits_hold_quantities(idx: Index, questions) -> tuple[int, int]:
    """Every hit of each filtered question's search, and those without a kept quantity."""
    con = duckdb.connect(str(idx.db), read_only=True)
    scanned = _scan(con)
    paths = dict(con.execute("SELECT path, doc_id FROM documents").fetchall())
    units = dict(con.execute("SELECT unit_hash, unit_id FROM units").fetchall())
    con.close()
    total = bad = 0
    for spec in LATENCY:
        asked = parse(spec)
        kept = {(d, u) for d, u, unit, lo, hi in scanned
                if unit == asked.unit and _keeps(asked.op, asked.lo, asked.hi, lo, hi)}  # fmt: skip
        for q in questions:
            r = search(idx, q.text, k=20, exact=0, filters=Filters(quantities=[spec]))
            for h in r.hits:
                total += 1
                bad += (paths[h.path], units[h.unit]) not in kept
    return total, bad


def latency(idx: Index, questions, repeat: int) -> list[list]:
    configs = [("unfiltered", Filters())]
    configs += [(f"--quantity {s}", Filters(quantities=[s])) for s in LATENCY]
    configs += [(f"--{d.replace(' before', ' --before')}", Filters(**kw)) for d, kw in DATES]
    times: dict[str, list[float]] = {name: [] for name, _ in configs}
    with idx.reader() as con:
        allowed = {}
        for name, f in configs:
            units = compile_filters(con, f)
            sql = units.units()
            allowed[name] = (
                con.execute(f"SELECT count(*) FROM ({sql})", units.params).fetchone()[0]
                if sql
                else con.execute("SELECT count(DISTINCT unit_id) FROM placements").fetchone()[0]
            )
    for q in questions:
        runs: dict[str, list[float]] = {name: [] for name, _ in configs}
        for _ in range(repeat):
            for name, f in configs:  # interleaved: each configuration sees the same load
                t = time.perf_counter()
                search(idx, q.text, k=8, exact=0, filters=f)
                runs[name].append(time.perf_counter() - t)
        for name in runs:
            times[name].append(statistics.median(runs[name]) * 1000)
    date_p50 = statistics.median(times[configs[-1][0]])
    return [
        [
            f"`{name}`",
            allowed[name],
            f"{percentile(times[name], 0.5):.1f}",
            f"{percentile(times[name], 0.9):.1f}",
            f"{percentile(times[name], 0.5) / date_p50:.2f}",
        ]
        for name, _ in configs
    ]


def facets(idx: Index, bare: Index, questions, repeat: int) -> list[list]:
    times = {"with quantities": [], "quantities table empty": []}
    for q in questions:
        runs = {k: [] for k in times}
        for _ in range(repeat):
            for name, i in (("with quantities", idx), ("quantities table empty", bare)):
                t = time.perf_counter()
                search(i, q.text, k=8, exact=0, facets=True)
                runs[name].append(time.perf_counter() - t)
        for name in runs:
            times[name].append(statistics.median(runs[name]) * 1000)
    return [[n, f"{percentile(v, 0.5):.1f}", f"{percentile(v, 0.9):.1f}"] for n, v in times.items()]


def rebuild(con: duckdb.DuckDBPyConnection, rounds: int = 3) -> tuple[float, float]:
    whole, step = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        build.refresh(con)
        whole.append(time.perf_counter() - t)
        con.execute("BEGIN")
        con.execute("DELETE FROM passage_quantities")
        t = time.perf_counter()
        build._quantities(con)
        step.append(time.perf_counter() - t)
        con.execute("COMMIT")
    return statistics.median(whole) * 1000, statistics.median(step) * 1000


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--index", type=Path, default=Path("/tmp/kbx-prof/nodejs/.kbx/index.duckdb"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md")
    args = p.parse_args()
    questions = load_questions(args.eval)
    work = Path(tempfile.mkdtemp(prefix="kbx-qfilter-"))
    copies = []
    for name in ("nodejs.duckdb", "bare.duckdb"):
        shutil.copy(args.index, work / name)
        con = duckdb.connect(str(work / name))
        root = con.execute("SELECT value FROM kbx_meta WHERE key = 'root'").fetchone()[0]
        ensure_schema(con, root)  # the migration a writer runs, then its rebuild
        build.settle(con)
        con.close()
        copies.append(Index(work / name, Path(root)))
    idx, bare = copies
    con = duckdb.connect(str(bare.db))
    con.execute("DELETE FROM passage_quantities")
    con.close()
    load = Path("/proc/loadavg").read_text().split()[:3]
    con = duckdb.connect(str(idx.db))
    whole_ms, step_ms = rebuild(con)
    counts = con.execute(
        "SELECT dimension, unit, count(*), count(DISTINCT unit_id) FROM passage_quantities "
        "GROUP BY ALL ORDER BY 3 DESC"
    ).fetchall()
    exact_rows, exact = exactness(con)
    con.close()
    total, bad = hits_hold_quantities(idx, questions)
    speed = latency(idx, questions, args.repeat)
    facet_rows = facets(idx, bare, questions, args.repeat)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()  # fmt: skip
    verdict = "Every filter is exact." if exact else "NOT EXACT: see the rows."
    section = f"""{TITLE}

`.venv/bin/python benchmarks/quantity_filter.py --repeat {args.repeat}` on
{datetime.now(UTC):%Y-%m-%d} (commit {commit}), the rules-only Node.js index
(`corpora/nodejs`, built at schema 5, copied and migrated: schema 6 adds the table),
{len(questions)} probe questions; load average {" ".join(load)} at the start,
{" ".join(load_after)} at the end (2 cores shared).

The derived table: {sum(c[2] for c in counts)} quantities in {len(counts)} dimensions
({", ".join(f"{d} {n}" for d, _, n, _ in counts)});
the entity layer's rebuild takes {whole_ms:.0f} ms, of which the quantities step
{step_ms:.1f} ms (medians of 3).

**Exactness**: the passages each compiled filter allows beside a brute-force scan of the
mentions (values re-read by the benchmark's own parser, overlap computed in Python), and
whether the asked value equals pint's own conversion. {verdict}
Every hit of the filtered searches ({total} hits over {len(questions)} questions and
{len(LATENCY)} filters) holds a kept quantity: {total - bad} of {total}.

{table(["filter", "SI unit", "allowed", "scan", "missed", "extra", "value as pint"], exact_rows)}

**Latency** (`search`, `exact=0`, k 8, median of {args.repeat} runs per question; ms over
questions; the last column is p50 over the `--after 2018 --before 2018` date filter's p50):

{table(["filter", "passages allowed", "p50 ms", "p90 ms", "p50 / date"], speed)}

**Facets** (`search --facets`, the same questions, side by side on two copies of the index,
one with `passage_quantities` emptied: the quantities facet's own cost):

{table(["facets", "p50 ms", "p90 ms"], facet_rows)}
"""
    print(section)
    write_section(args.out, TITLE, section, "# Benchmarks\n")
    shutil.rmtree(work)
    sys.exit(0 if exact and not bad else 1)


if __name__ == "__main__":
    main()
