"""Dates in Debian changelogs: identifier numbers read as years, and the date filters.

Indexes a copy of ``changelogs/corpus`` with ``kbx index`` and the rule recognizers only
(spaCy and GLiNER disabled in the copy's ``kbx.toml``), then counts, over the ``dates``
recognizer's DATE mentions:

- those whose year lies outside 1990-2026 (Debian's changelogs begin in the 1990s; the
  corpus was taken in 2026), and those that sit inside an identifier token: ``CVE-…``,
  ``RFC``/``ISO``/``BCP``/``STD``/``ISBN`` and a number, ``#`` and a bug number, a version
  string (digits and dots glued to the year);
- the trailer dates found: each entry's closing line (`trailers.jsonl`, the truth) holds
  one date, which a DATE mention on that line should carry as its value;

and asks the date filters, through ``search.filters.compile_filters`` (the one place CLI,
MCP, HTTP and ``kbx.api`` share), "passages dated in year Y" for a few years with
``--date-from mentioned``: a passage kept is right when one of its lines belongs to an
entry whose trailer date lies in Y (an entry runs from the line after the previous trailer
to its own). Older code read ``--before`` as exclusive, so there "in Y" is asked as
``--after Y --before Y+1``; from dates v9 on as ``--after Y --before Y``.

    .venv/bin/python benchmarks/changelog_dates.py ../shared/eval/changelogs [--no-write]

Appends its section, one per version of the dates recognizer (a later run of the same
version replaces it), at the end of ``docs/BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from email.utils import parsedate_to_datetime
from pathlib import Path

import duckdb
from common import REPO, write_section

from kbx.errors import BadArgument
from kbx.extract.textmap import locate, unpack
from kbx.recognizers.dates import DateRecognizer
from kbx.search.filters import Filters, compile_filters

TITLE = "## Dates in Debian changelogs: identifier numbers and the date filters (dates v{})"
HEADER = "# Benchmarks\n"
YEARS = (2005, 2010, 2013, 2015, 2020, 2022, 2023, 2024)
# the token around a year (no spaces), and the word before it
_TOKEN = re.compile(r"\S+$")
_LABEL = re.compile(r"(?:\b(?:RFC|ISO|BCP|STD|ISBN)|#)\s*$", re.I)


def index_copy(corpus: Path, work: Path) -> Path:
    """``kbx index`` over a copy of ``corpus`` with the rule recognizers only."""
    root = work / "changelogs"
    shutil.copytree(corpus, root)
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner"]\n', "utf-8")
    kbx = REPO / ".venv" / "bin" / "kbx"
    subprocess.run(
        [str(kbx), "index", str(root), "--json"], check=True, capture_output=True, text=True
    )
    return root / ".kbx" / "index.duckdb"


def kind_of(text: str, start: int, end: int) -> str | None:
    """Which identifier a DATE mention at ``text[start:end]`` sits in, if any."""
    word = _TOKEN.search(text[:start])
    token = (word.group() if word else "") + text[start:end]
    token += re.match(r"\S*", text[end:]).group()
    if re.search(r"CVE-", token, re.I):
        return "CVE"
    if _LABEL.search(text[max(0, start - 8) : start]):
        return "label (RFC, ISO, #, …)"
    if re.search(r"\d[.:+~]\d*$", text[max(0, start - 8) : start]) or re.match(
        r"[.:+~]\d", text[end:]
    ):
        return "version"
    return None


def trailers(eval_dir: Path) -> dict[str, list[tuple[int, dt.date]]]:
    """Per path, each entry's trailer line and date, in line order."""
    out: dict[str, list[tuple[int, dt.date]]] = defaultdict(list)
    with open(eval_dir / "trailers.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out[row["path"]].append((row["line"], parsedate_to_datetime(row["date"]).date()))
    return {p: sorted(v) for p, v in out.items()}


def entry_dates(entries: list[tuple[int, dt.date]], first: int, last: int) -> set[dt.date]:
    """The dates of the entries that lines ``first``..``last`` belong to."""
    found, previous = set(), 0
    for line, day in entries:
        if first <= line and last > previous:  # the entry runs previous+1 .. line
            found.add(day)
        previous = line
    return found


def measure(db: Path, eval_dir: Path) -> dict:
    truth = trailers(eval_dir)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        """SELECT d.path, pl.start_line, u.text, m.start_char, m.end_char, m.value
           FROM mentions m JOIN units u USING (unit_hash)
           JOIN placements pl USING (unit_id) JOIN documents d USING (doc_id)
           WHERE m.recognizer = 'dates' AND m.type = 'DATE'"""
    ).fetchall()
    version = con.execute("SELECT DISTINCT version FROM runs WHERE recognizer = 'dates'").fetchall()
    out: dict = {"dates_version": ",".join(v for (v,) in version), "mentions": len(rows)}
    outside, kinds, years = 0, Counter(), Counter()
    for _path, _line, text, start, end, value in rows:
        year = re.match(r"\d{4}", value or "")
        if year and not 1990 <= int(year.group()) <= 2026:
            outside += 1
            years[int(year.group())] += 1
        if kind := kind_of(text, start, end):
            kinds[kind] += 1
    out["outside"] = outside
    out["outside_years"] = (min(years), max(years)) if years else None
    out["kinds"] = dict(kinds)
    out["passage_dates_outside"] = con.execute(
        "SELECT count(*) FROM passage_dates WHERE unit_id IS NOT NULL "
        "AND NOT year(lo) BETWEEN 1990 AND 2026"
    ).fetchone()[0]
    # trailer dates found: a DATE mention whose value is that day, on the trailer's line
    by_line = con.execute(
        """SELECT d.path, u.text, pl.offsets, m.start_char, m.value
           FROM mentions m JOIN units u USING (unit_hash)
           JOIN placements pl USING (unit_id) JOIN documents d USING (doc_id)
           WHERE m.recognizer = 'dates' AND m.type = 'DATE'"""
    ).fetchall()
    found = set()
    for path, text, offsets, start, value in by_line:
        found.add((path, locate(unpack(offsets), text, start).line, value))
    n_trailers = sum(len(v) for v in truth.values())
    hit = sum((p, line, day.isoformat()) in found for p, v in truth.items() for line, day in v)
    out["trailers"], out["trailers_found"] = n_trailers, hit
    # the filters: "in year Y", passages whose own mentions say so
    try:
        compile_filters(con, Filters(after="2000", before="2000"))
        inclusive = True
    except BadArgument:
        inclusive = False
    out["before_inclusive"] = inclusive
    placements = con.execute(
        "SELECT pl.unit_id, d.path, pl.start_line, pl.end_line "
        "FROM placements pl JOIN documents d USING (doc_id)"
    ).fetchall()
    dated = [
        (unit_id, entry_dates(truth.get(path, []), first, last))
        for unit_id, path, first, last in placements
    ]

    def ask(
        after: str | None, before: str | None, right, date_from: str = "mentioned"
    ) -> tuple[int, int, int, int]:
        """Kept, right among them, passages that are right, and those of them kept."""
        f = compile_filters(con, Filters(after=after, before=before, date_from=date_from))
        kept = {u for (u,) in con.execute(f.units(), f.params).fetchall()}
        truly = {u for u, days in dated if right(days)}
        return len(kept), len(kept & truly), len(truly), len(kept & truly)

    per_year = {}
    for y in range(1990, 2027):
        per_year[y] = ask(
            str(y), str(y if inclusive else y + 1), lambda days, y=y: any(d.year == y for d in days)
        )
    out["all_years"] = tuple(sum(c) for c in zip(*per_year.values(), strict=True))
    default = (
        [  # the default, --date-from any: its document's date counts too
            ask(str(y), str(y), lambda days, y=y: any(d.year == y for d in days), "any")
            for y in range(1990, 2027)
        ]
        if inclusive
        else []
    )
    out["all_years_any"] = tuple(sum(c) for c in zip(*default, strict=True)) if default else None
    per_year = {y: c for y, c in per_year.items() if y in YEARS}
    out["before_2005"] = ask(
        None, "2004" if inclusive else "2005", lambda days: any(d.year <= 2004 for d in days)
    )
    out["years"] = per_year
    con.close()
    return out


def section(r: dict, eval_dir: Path, seconds: float) -> str:
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        [
            "git",
            "-C",
            str(REPO),
            "status",
            "--porcelain",
            "recognizers/dates.py",
            "timex.py",
            "search/filters.py",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(r["kinds"].items())) or "none"
    span = r["outside_years"]
    lines = [
        TITLE.format(r["dates_version"]),
        "",
        f"Command: `.venv/bin/python benchmarks/changelog_dates.py {eval_dir}`, "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, commit {commit}"
        f"{' (with uncommitted changes)' if dirty else ''}; dates recognizer version "
        f"{r['dates_version']}; `kbx index` with the rule recognizers ({seconds:.0f} s).",
        "",
        "| DATE mentions | year outside 1990-2026 | their years | passage dates outside "
        "| in an identifier | trailer dates found |",
        "| ---: | ---: | --- | ---: | --- | ---: |",
        f"| {r['mentions']} | {r['outside']} | {f'{span[0]}-{span[1]}' if span else '–'} "
        f"| {r['passage_dates_outside']} | {kinds} "
        f"| {r['trailers_found']} of {r['trailers']} |",
        "",
        "Passages dated in year Y by their own mentions (`--date-from mentioned`, asked as "
        + (
            "`--after Y --before Y`"
            if r["before_inclusive"]
            else "`--after Y --before Y+1`, `--before` being exclusive then"
        )
        + "); right: one of its lines belongs to an entry whose trailer is dated in Y.",
        "",
        "| Y | kept | right | precision | passages of Y | recall |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    rows = [*r["years"].items(), ("each of 1990-2026, summed", r["all_years"])]
    rows.append(
        ("on or before 2004 (`--before 2004`; exclusive: `--before 2005`)", r["before_2005"])
    )
    if r.get("all_years_any"):
        rows.append(
            ("each of 1990-2026, summed, `--date-from any` (the default)", r["all_years_any"])
        )
    for y, (kept, right, relevant, recalled) in rows:
        p = f"{right / kept:.3f}" if kept else "–"
        rc = f"{recalled / relevant:.3f}" if relevant else "–"
        lines.append(f"| {y} | {kept} | {right} | {p} | {relevant} | {rc} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("eval", type=Path, help="the changelogs folder (corpus/, trailers.jsonl)")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md")
    p.add_argument("--no-write", action="store_true", help="print the section only")
    a = p.parse_args()
    eval_dir = a.eval.resolve()
    with tempfile.TemporaryDirectory(prefix="kbx-changelogs-") as work:
        started = time.monotonic()
        db = index_copy(eval_dir / "corpus", Path(work))
        seconds = time.monotonic() - started
        r = measure(db, eval_dir)
    assert r["dates_version"] == DateRecognizer.info.version, r["dates_version"]
    text = section(r, a.eval, seconds)
    print(text)
    if not a.no_write:
        write_section(a.out, TITLE.format(r["dates_version"]), text, HEADER)


if __name__ == "__main__":
    main()
