"""Faceted search on the Node.js filter questions: the returned file sets against the complete
expected sets, the cost of growing the gazetteer, and filtered query latency beside FTS5.

Each question in ``probes/nodejs_filters.tsv`` states the rule that produced its expected
set (front-matter date, category and author, and a regular expression over the body). The
benchmark plays the agent: it reads the rule and turns it into kbx filters, adding to the
gazetteer what the body expression names (``OpenSSL``, ``[Pp]ermission [Mm]odel`` as its
four spellings, ``(?i)Node\\.?js Interactive`` in any case) and what an author expression
allows (``Isaac (Z\\. )?Schlueter`` as one person with two aliases); a CVE is already an
identifier entity. Three routes return a file set per question:

* **search**: ``kbx search QUERY_TERMS`` with ``--entity`` (the body name), ``--author``,
  ``--meta category=…`` (or ``!=``) and ``--after/--before`` on the document date;
* **grep**: ``kbx grep BODY_REGEX`` with the same metadata, author and date filters (the
  exact tool for "the body matches this expression");
* **FTS5**: an FTS5 table of the files' bodies (``porter unicode61``) with the metadata in a
  joined table: the body name as a phrase query ANDed with the query terms, the metadata as
  SQL conditions (author by ``LIKE``).

Latency: each question's search with and without its filters, kbx ``search`` end to end
on an open index beside the FTS5 query, ``--repeat`` runs each, median per question, p50
and p90 over questions in milliseconds.

    .venv/bin/python benchmarks/filters.py [--eval ../shared/eval] [--repeat 5]
"""

from __future__ import annotations

import csv
import re
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path

import duckdb
from common import eval_arg, percentile, table

from kbx.annotate.setup import registry_for
from kbx.entities import gazetteer as gz
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.recognizers.bylines import BylineRecognizer
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.quantities import QuantityRecognizer
from kbx.recognizers.registry import Registry
from kbx.recognizers.spacy_ner import SpacyRecognizer
from kbx.search.bm25 import rank
from kbx.search.filters import Filters, compile_filters
from kbx.search.grep import grep
from kbx.search.search import search
from kbx.store.db import Index
from kbx.store.postings import analyzer_of

PROBES = Path("probes") / "nodejs_filters.tsv"
ALL = 100_000


def expand(regex: str) -> tuple[list[str], bool]:
    """The literal strings a simple expression matches, and whether it ignores case:
    ``[Pp]`` gives both letters, ``X?`` and ``(…)?`` with and without, ``\\.`` a dot;
    ``\\b``, ``^`` and ``$`` are dropped (the gazetteer matches whole words anyway)."""
    ignore_case = regex.startswith("(?i)")
    pattern = regex.removeprefix("(?i)")

    def alternatives(s: str) -> list[str]:
        out = [""]
        i = 0
        while i < len(s):
            c = s[i]
            if c == "\\":
                nxt = s[i + 1]
                piece, i = ([""] if nxt == "b" else [nxt]), i + 2
            elif c in "^$":
                piece, i = [""], i + 1
            elif c == "[":
                j = s.index("]", i)
                piece, i = list(s[i + 1 : j]), j + 1
            elif c == "(":
                depth, j = 0, i
                while True:
                    depth += {"(": 1, ")": -1}.get(s[j], 0)
                    if depth == 0:
                        break
                    j += 1
                piece, i = alternatives(s[i + 1 : j]), j + 1
            else:
                piece, i = [c], i + 1
            if i < len(s) and s[i] == "?":
                piece, i = [*piece, ""], i + 1
            out = [a + b for a in out for b in piece]
        return out

    return sorted(set(alternatives(pattern))), ignore_case


@dataclass
class Probe:
    id: str
    question: str
    query: str
    after: str | None
    before: str | None
    expected: set[str]
    body: str | None = None
    author: str | None = None
    meta: list[str] = field(default_factory=list)


def load_probes(eval_dir: Path) -> list[Probe]:
    out = []
    with open(eval_dir / PROBES, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            how = row["how"]
            p = Probe(
                row["id"],
                row["question"],
                row["query_terms"],
                row["after"] or None,
                row["before"] or None,
                set(row["expected_paths"].split(";")),
            )
            if m := re.search(r"body after front matter matches regex /(.*)/ \(", how):
                p.body = m[1]
            if m := re.search(r"author matches /(.*?)/;", how + ";"):
                p.author = m[1]
            if m := re.search(r"category matches /\^\(\?!(\w+)\$\)\.\*/", how):
                p.meta.append(f"category!={m[1]}")
            elif m := re.search(r"category matches /\^(\w+)\$/", how):
                p.meta.append(f"category={m[1]}")
            out.append(p)
    return out


def entity_for(idx: Index, expression: str, type_: str, edits: list) -> str:
    """The entity a body or author expression names, adding it to the gazetteer first when
    it is not one already (a CVE is an identifier; an author with one spelling exists)."""
    names, ignore_case = expand(expression)
    if len(names) == 1 and re.fullmatch(r"CVE-\d{4}-\d+", names[0]):
        return f"cve:{names[0]}"
    if type_ == "PERSON" and len(names) == 1:
        return names[0]
    try:
        r = gz.add(idx, names[0], type_, names[1:], actor="agent:bench", ignore_case=ignore_case)
        edits.append((names[0], r))
        return r.entry_ids[0]
    except BadArgument as e:  # added for an earlier question: reuse it
        owner = re.search(r"alias of (\S+)", str(e))
        if not owner:
            raise
        return owner[1]


def kbx_before(before: str | None) -> str | None:
    """A probe's bound "date < D" as kbx's inclusive ``--before``: the day before D."""
    return (date.fromisoformat(before) - timedelta(days=1)).isoformat() if before else None


def kbx_filters(p: Probe, body_entity: str | None, author_entity: str | None) -> Filters:
    return Filters(
        entities=[body_entity] if body_entity else [],
        authors=[author_entity] if author_entity else [],  # "written by", not "naming"
        after=p.after,
        before=kbx_before(p.before),
        date_from="document",
        meta=p.meta,
    )


def fts5(idx: Index) -> sqlite3.Connection:
    """FTS5 over each file's clean text (read back from the kbx index, as the other search
    benchmarks give their peers), with its metadata in a plain table."""
    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE VIRTUAL TABLE body USING fts5(path UNINDEXED, text, tokenize='porter unicode61')"
    )
    con.execute("CREATE TABLE docs (path TEXT PRIMARY KEY, date TEXT, category TEXT, author TEXT)")
    with idx.reader() as duck:
        rows = duck.execute(
            """SELECT d.path, string_agg(u.text, '\n' ORDER BY pl.ordinal)
               FROM documents d JOIN placements pl USING (doc_id) JOIN units u USING (unit_id)
               GROUP BY d.path"""
        ).fetchall()
        meta = duck.execute(
            """SELECT path, doc_date, json_extract_string(meta, '$.category'),
                      array_to_string(authors, '; ') FROM documents"""
        ).fetchall()
    with con:
        con.executemany("INSERT INTO body VALUES (?, ?)", rows)
        con.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", meta)
    return con


def fts5_query(con: sqlite3.Connection, p: Probe, k: int | None = None) -> set[str]:
    words = " OR ".join(f'"{w}"' for w in re.findall(r"[^\W_]+", p.query))
    q = f"({words})"
    if p.body:
        names, _ = expand(p.body)
        q += " AND (" + " OR ".join('"' + n.replace('"', "") + '"' for n in names) + ")"
    where, params = ["body MATCH ?"], [q]
    if p.after:
        where.append("d.date >= ?")
        params.append(p.after)
    if p.before:
        where.append("d.date < ?")
        params.append(p.before)
    for spec in p.meta:
        key, op, value = re.match(r"(\w+)(!?=)(.*)", spec).groups()
        where.append(f"coalesce(d.{key}, '') {'=' if op == '=' else '<>'} ?")
        params.append(value)
    if p.author:
        names, _ = expand(p.author)
        where.append("(" + " OR ".join("d.author LIKE ?" for _ in names) + ")")
        params += [f"%{n}%" for n in names]
    sql = (
        "SELECT DISTINCT body.path FROM body JOIN docs d USING (path) WHERE "
        + " AND ".join(where)
        + " ORDER BY rank"
        + (f" LIMIT {k}" if k else "")
    )
    return {r[0] for r in con.execute(sql, params).fetchall()}


def pr(found: set[str], expected: set[str]) -> tuple[float, float]:
    hit = len(found & expected)
    return (hit / len(found) if found else 1.0), hit / len(expected)


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument(
        "--ner", action="store_true", help="spaCy on too: names in release notes' credits"
    )
    args = p.parse_args()
    eval_dir = args.eval.resolve()
    corpus = eval_dir / "corpora" / "nodejs"
    probes = load_probes(eval_dir)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "nodejs.duckdb"
        idx = Index.for_root(corpus, db)
        rules = [IdentifierRecognizer(), DateRecognizer(), QuantityRecognizer(), BylineRecognizer()]
        base = Registry(rules + ([SpacyRecognizer()] if args.ner else []))
        index(corpus, db=db, workers=2, registry=registry_for(idx, base))
        with idx.reader() as con:
            n_units = con.execute("SELECT count(*) FROM units").fetchone()[0]
        edits: list = []
        plans = []
        for q in probes:
            body = entity_for(idx, q.body, "TOPIC", edits) if q.body else None
            author = entity_for(idx, q.author, "PERSON", edits) if q.author else None
            plans.append((q, kbx_filters(q, body, author), author))
        lite = fts5(idx)
        quality, speed = [], {}
        open_con = duckdb.connect(str(db), read_only=True)
        sums = {k: [0.0, 0.0] for k in ("search", "search, author as --entity", "grep", "FTS5")}
        for q, f, author in plans:
            routes = {
                "search": {h.path for h in search(idx, q.query, k=ALL, exact=0, filters=f).hits},
                "search, author as --entity": {  # "names X" where the question says "by X"
                    h.path
                    for h in search(
                        idx, q.query, k=ALL, exact=0,
                        filters=replace(f, entities=f.entities + f.authors, authors=[]),
                    ).hits
                },  # fmt: skip
                "grep": {
                    p
                    for m in grep(
                        idx,
                        q.body or ".",
                        max_matches=ALL,
                        filters=Filters(
                            authors=[author] if author else [],
                            after=q.after,
                            before=kbx_before(q.before),
                            date_from="document",
                            meta=q.meta,
                        ),
                    ).matches
                    for p in m.paths
                },
                "FTS5": fts5_query(lite, q),
            }
            row = [q.id, len(q.expected)]
            for name, found in routes.items():
                precision, recall = pr(found, q.expected)
                sums[name][0] += precision
                sums[name][1] += recall
                row += [len(found), f"{precision:.2f}", f"{recall:.2f}"]
            quality.append(row)
            an = analyzer_of(open_con)
            bare = Probe("", "", q.query, None, None, set())
            for label, fn in (
                ("kbx search, end to end", lambda q=q: search(idx, q.query, k=8, exact=0)),
                (
                    "kbx search, end to end, filtered",
                    lambda q=q, f=f: search(idx, q.query, k=8, exact=0, filters=f),
                ),
                (
                    "kbx rank, open index",
                    lambda q=q, an=an: rank(open_con, an.query(q.query), limit=8),
                ),
                (
                    "kbx rank, open index, filtered (filters checked and compiled)",
                    lambda q=q, f=f, an=an: rank(
                        open_con, an.query(q.query), compile_filters(open_con, f), limit=8
                    ),
                ),
                ("FTS5", lambda bare=bare: fts5_query(lite, bare, 8)),
                ("FTS5, filtered", lambda q=q: fts5_query(lite, q, 8)),
            ):
                fn()
                runs = []
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    fn()
                    runs.append((time.perf_counter() - t) * 1000)
                speed.setdefault(label, []).append(statistics.median(runs))
        open_con.close()
    n = len(probes)
    print(f"### Filter questions, Node.js ({n} questions; file sets against the expected sets)\n")
    heads = ["id", "expected"] + [f"{r} {x}" for r in sums for x in ("files", "P", "R")]
    quality.append(
        ["**mean**", ""]
        + [v for s in sums.values() for v in ("", f"{s[0] / n:.2f}", f"{s[1] / n:.2f}")]
    )
    print(table(heads, quality))
    print(f"\n### Gazetteer edits on the indexed corpus ({n_units:,} units)\n")
    rows = [
        [name, r.units_rerun, r.units_carried, r.mentions, f"{r.seconds:.2f}"] for name, r in edits
    ]
    print(table(["entry added", "units re-run", "units carried", "mentions", "seconds"], rows))
    secs = [r.seconds for _, r in edits]
    print(f"\nMedian edit: {statistics.median(secs):.2f} s.\n")
    print(f"### Filtered query latency, Node.js ({n} questions, top 8; ms)\n")
    lat = [
        [label, f"{percentile(v, 0.5):.1f}", f"{percentile(v, 0.9):.1f}"]
        for label, v in speed.items()
    ]
    print(table(["system", "p50", "p90"], lat))


if __name__ == "__main__":
    main()
