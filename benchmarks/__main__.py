"""``python -m benchmarks [NAME [ARGS...]]``: list the living benchmarks, or run one.

``python -m benchmarks`` lists them by what they measure, a line each. ``python -m
benchmarks NAME ARGS`` runs ``benchmarks/NAME.py`` in this process, as ``python
benchmarks/NAME.py ARGS`` would (``NAME --help`` gives its options), and adds one line,
``Run: DATE, commit C, load L, command `...```, at the top of what it prints and under
the title of every section it writes into docs/ (each writing script goes through
``common.write_section``, which is wrapped here for the run).

Where a section goes: a script that writes its own (``writes`` below: its ``--write``, or
always, as its docstring says) replaces its ``## `` section of docs/BENCHMARKS.md (crash
and fuzz: docs/RELIABILITY.md). A script that only prints gets ``--write`` from here:
what it printed becomes the section the registry names. Either way a later run replaces
the section whole; docs/benchmarks-history.md keeps what earlier runs found.

A script in this folder that is not in the registry still runs by its name, and the list
shows it apart; ``PARTS`` are modules the scripts import, not benchmarks.
"""

from __future__ import annotations

import datetime as dt
import difflib
import io
import os
import runpy
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DOC = REPO / "docs" / "BENCHMARKS.md"
DOC_HEADER = "# Benchmarks\n"
PARTS = frozenset({"common", "scale_build", "scale_corpus", "scale_systems"})


@dataclass(frozen=True)
class Bench:
    """A living benchmark: ``benchmarks/{name}.py``."""

    name: str
    area: str
    about: str  # one line
    writes: bool = False  # it writes its own section (its --write, or always)
    section: str = ""  # else: the section of docs/BENCHMARKS.md `--write` records it in


SEARCH = "search quality"
DATES = "dates"
QUANTITIES = "quantities"
NAMES = "names and people"
RECOGNIZERS = "other recognizers"
LANGUAGES = "multilingual"
EXTRACTION = "text loss and citations"
INGEST = "ingest speed"
LATENCY = "latency"
RELIABILITY = "reliability"
TOOLS = "tools: this checkout beside another (no section of their own)"

REGISTRY: tuple[Bench, ...] = (
    Bench(
        "search_quality",
        SEARCH,
        "kbx's BM25 beside bm25s and FTS5: SciFact, Node.js and RFC questions",
        section="## Search quality",
    ),
    Bench(
        "info_passages",
        SEARCH,
        "passages in GNU Info manuals, unseen long plain text: kbx beside FTS5",
        section="## Passages in GNU Info manuals (unseen long plain text)",
    ),
    Bench(
        "dense_quality",
        SEARCH,
        "BM25, the dense model and their fusion: SciFact and Node.js questions",
        section="## Dense retrieval: quality and cost (issue 17)",
    ),
    Bench(
        "fusion",
        SEARCH,
        "the BM25/dense fusion chosen on SciFact's odd half (rerun for a new model)",
        section="## Dense retrieval: the fusion (issue 17)",
    ),
    Bench(
        "hybrid_floor",
        SEARCH,
        "hybrid's BM25 weight, chosen to stay at or above words alone on tune halves",
        section="## Hybrid at or above words alone (issue 41)",
    ),
    Bench(
        "time_to_hybrid",
        SEARCH,
        "hybrid quality by the windows a unit is embedded by, and their time",
        section="## Time to hybrid (issue 43)",
    ),
    Bench(
        "agent_cost",
        SEARCH,
        "bytes an agent reads to answer the Node.js questions, kbx beside ripgrep",
        section="## Agent cost",
    ),
    Bench(
        "filters",
        SEARCH,
        "faceted search on the Node.js filter questions: file sets, latency",
        section="## Facets and the gazetteer",
    ),
    Bench(
        "dates",
        DATES,
        "TempEval-3: kbx's date recognizer beside dateparser",
        section="## Dates",
    ),
    Bench(
        "changelog_dates",
        DATES,
        "Debian changelogs: numbers read as years, and the date filters",
        writes=True,
    ),
    Bench(
        "section_dates",
        DATES,
        "release notes: does a month's filter keep the sections dated in it",
        writes=True,
    ),
    Bench(
        "quantities",
        QUANTITIES,
        "MeasEval: kbx's quantities beside quantulum3, CQE and Recognizers-Text",
        writes=True,
    ),
    Bench(
        "quantity_filter",
        QUANTITIES,
        "quantity filters on Node.js: exact against a scan, latency",
        writes=True,
    ),
    Bench(
        "ner",
        NAMES,
        "WNUT-17: the spaCy recognizer beside raw spaCy; NER throughput",
        section="## Named entities",
    ),
    Bench(
        "ner_news",
        NAMES,
        "CoNLL-2003 news: names with the document's context",
        section="## Names with document context (issue 18)",
    ),
    Bench(
        "ner_filter",
        NAMES,
        "precision of the spaCy names that filter, on labelled technical text",
        section="## NER filtering evidence",
    ),
    Bench(
        "changelogs",
        NAMES,
        "people where they sign: Debian changelogs' closing lines",
        writes=True,
    ),
    Bench(
        "identifiers",
        RECOGNIZERS,
        "identifiers beside a regex-and-checksum scan of real files",
        section="## Identifiers",
    ),
    Bench(
        "references",
        RECOGNIZERS,
        "written-out references resolved to DOIs through a Crossref stand-in",
        section="## Reference matching",
    ),
    Bench(
        "recognizers",
        RECOGNIZERS,
        "each built-in recognizer's throughput on Node.js units",
        section="## Recognizer throughput",
    ),
    Bench(
        "multilingual",
        LANGUAGES,
        "known-item search in ja, zh, ru, de, fr: kbx beside FTS5",
        section="## Every script searchable: Chinese, Japanese, marks, languages (issue 44)",
    ),
    Bench(
        "multilingual_unseen",
        LANGUAGES,
        "probes from manual pages multilingual was not tuned on (writes data)",
    ),
    Bench(
        "text_loss",
        EXTRACTION,
        "words LaTeX, PDF and text files lose or turn to source; mojibake",
        section="## Text that vanishes or turns to source (issue 42)",
    ),
    Bench(
        "pdf_furniture",
        EXTRACTION,
        "PDF running heads, footers and page numbers: the passages they made",
        writes=True,
    ),
    Bench(
        "citations",
        EXTRACTION,
        "every unit's first and last words lie in the lines it cites",
        section="## Citations",
    ),
    Bench(
        "ingest",
        INGEST,
        "kbx index beside an FTS5 build: first index, no-change re-run, memory",
        writes=True,
    ),
    Bench(
        "ner_pass",
        INGEST,
        "the NER pass after a rules-only index, on one process and two",
        writes=True,
    ),
    Bench(
        "large_file",
        INGEST,
        "one large file of names: the names pass, the entity layer, peak memory",
        section="## One large file of names (issue 43)",
    ),
    Bench(
        "layer_update",
        INGEST,
        "the entity layer after one edited file: incremental beside a whole rebuild",
        writes=True,
    ),
    Bench(
        "save_searchable",
        INGEST,
        "the watcher: one saved file to a search that finds it, 2k to 200k units",
        writes=True,
    ),
    Bench(
        "ner_limit",
        INGEST,
        "spaCy inside kbx beside the bare nlp.pipe: words per second",
        writes=True,
    ),
    Bench(
        "until_current",
        INGEST,
        "a first index with spaCy on: searchable, then every recognizer current",
        writes=True,
    ),
    Bench(
        "reprocess",
        INGEST,
        "reprocess after a recognizer bump, beside a full re-index",
        section="## Reprocess",
    ),
    Bench(
        "engine",
        INGEST,
        "the spaCy pass on the local engine beside a Dask cluster",
        writes=True,
    ),
    Bench(
        "wikidata_import",
        INGEST,
        "kbx gazetteer import of a Wikidata dump: throughput, memory",
        section="## Wikidata import (issue 19)",
    ),
    Bench(
        "export",
        INGEST,
        "kbx export in each format: mentions/s and peak memory",
        writes=True,
    ),
    Bench(
        "search_speed",
        LATENCY,
        "Node.js: build and query latency, kbx beside FTS5 and bm25s",
        section="## Search speed",
    ),
    Bench(
        "cold_start",
        LATENCY,
        "a one-word kbx search as a fresh process, beside bare Python",
        writes=True,
    ),
    Bench(
        "serve",
        LATENCY,
        "kbx serve: warm latency over HTTP and MCP, throughput, memory",
        writes=True,
    ),
    Bench(
        "serve_parts",
        LATENCY,
        "a warm search's time, part by part (serve prints it too)",
    ),
    Bench(
        "scale",
        LATENCY,
        "search at 20k to 200k units beside FTS5, bm25s and Tantivy",
        writes=True,
    ),
    Bench(
        "hybrid_scale",
        LATENCY,
        "each ranking mode (bm25, dense, hybrid) at 200k units",
        section="## Each ranking mode at 200k units (issue 17)",
    ),
    Bench(
        "dense_cost",
        LATENCY,
        "dense retrieval's cost: the cosine scan, index size, the model's start",
        section="## Dense retrieval: cost (issue 17)",
    ),
    Bench(
        "crash",
        RELIABILITY,
        "kill -9 real kbx commands, compare with fresh builds (RELIABILITY.md)",
        writes=True,
    ),
    Bench(
        "fuzz",
        RELIABILITY,
        "hostile files indexed alone, then together (RELIABILITY.md)",
        writes=True,
    ),
    Bench(
        "recognizer_sweep",
        RELIABILITY,
        "every rule recognizer over every eval text: exceptions, bad spans",
    ),
    Bench(
        "extract_compare",
        TOOLS,
        "is extraction unchanged? every file's Document beside another's",
    ),
    Bench(
        "small_index",
        TOOLS,
        "a small index's fixed cost: statements, CPU, wall, beside another",
    ),
    Bench(
        "ingest_profile",
        TOOLS,
        "where a first index spends its time, by stage (py-spy); --write",
        writes=True,
    ),
    Bench(
        "scale_before",
        TOOLS,
        "the query path of a revision beside this one, in one process",
    ),
)
BY_NAME = {b.name: b for b in REGISTRY}


def scripts() -> list[str]:
    """The runnable scripts in this folder, by name."""
    return sorted(
        p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_") and p.stem not in PARTS
    )


def first_line(name: str) -> str:
    """The first line of a script's docstring (for one not in the registry)."""
    import ast

    try:
        doc = ast.get_docstring(ast.parse((HERE / f"{name}.py").read_text("utf-8")))
    except (OSError, SyntaxError, ValueError):
        doc = None
    return (doc or "(no docstring)").strip().splitlines()[0]


def listing() -> str:
    """Every living benchmark, a line each, under what it measures."""
    width = max(len(b.name) for b in REGISTRY) + 2
    out = [
        "python -m benchmarks NAME [ARGS]   run benchmarks/NAME.py (NAME --help: its options)",
        "",
        "`--write` records the result in docs/BENCHMARKS.md, under a line with the date,",
        "commit, load and command; * marks scripts that write their own section.",
    ]
    for area in dict.fromkeys(b.area for b in REGISTRY):
        out += ["", area]
        out += [
            f"  {b.name:<{width}}{'*' if b.writes else ' '} {b.about}"
            for b in REGISTRY
            if b.area == area
        ]
    there = scripts()
    other = [n for n in there if n not in BY_NAME]
    if other:
        out += ["", "not in the registry yet (benchmarks/__main__.py)"]
        out += [f"  {n:<{width}}  {first_line(n)[: 96 - width]}" for n in other]
    gone = [b.name for b in REGISTRY if b.name not in there]
    if gone:
        out += ["", "in the registry but not in this folder: " + ", ".join(gone)]
    return "\n".join(out)


# --- the run line ----------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        r = subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


def commit_note() -> str:
    """``commit abc1234``, and which tracked files differ from it (docs aside)."""
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    changed = [
        path
        for path in _git("diff", "--name-only", "HEAD").splitlines()
        if not path.startswith("docs/")
    ]
    if not changed:
        return f"commit {head}"
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return f"commit {head} with uncommitted changes to {shown}"


def load() -> float:
    """The 1-minute load average (0 where the system has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


@dataclass
class RunLine:
    """What a reader needs to repeat or to trust a run: when, which code, how busy the
    machine was, and the command."""

    started: dt.datetime
    commit: str
    load_start: float
    command: str

    @classmethod
    def now(cls, argv: list[str]) -> RunLine:
        return cls(
            dt.datetime.now(dt.UTC),
            commit_note(),
            load(),
            shlex.join(["python", "-m", "benchmarks", *argv]),
        )

    def text(self, ended: bool = True) -> str:
        """The line; ``ended`` adds the load at the time of writing."""
        cores = os.cpu_count() or 1
        end = f", {load():.1f} at the end" if ended else ""
        return (
            f"Run: {self.started:%Y-%m-%d %H:%M} UTC, {self.commit}; load {self.load_start:.1f} "
            f"at the start{end} (1-minute average, {cores} cores); command `{self.command}`."
        )


def stamped(section: str, line: str) -> str:
    """``section`` (its title on the first line) with ``line`` under the title; a ``Run:``
    line already there (a script's own output run again) is replaced."""
    title, _, body = section.partition("\n")
    body = body.lstrip("\n")
    if body.startswith("Run: "):
        body = body.partition("\n")[2].lstrip("\n")
    return f"{title}\n\n{line}\n\n{body}" if body else f"{title}\n\n{line}\n"


@contextmanager
def stamping(run: RunLine) -> Iterator[None]:
    """Every section a script writes through ``common.write_section`` gets the run line."""
    import common  # the module object the script imports next (benchmarks/ is on the path)

    original: Callable[..., None] = common.write_section

    def write_section(path: Path, title: str, section: str, header: str) -> None:
        original(path, title, stamped(section, run.text()), header)
        print(f"python -m benchmarks: wrote {title!r} in {path}", file=sys.stderr)

    common.write_section = write_section
    try:
        yield
    finally:
        common.write_section = original


class Tee:
    """Standard output, kept as well."""

    def __init__(self, out) -> None:
        self.out = out
        self.kept = io.StringIO()

    def write(self, s: str) -> int:
        self.kept.write(s)
        return self.out.write(s)

    def __getattr__(self, name: str):  # flush, fileno, encoding, isatty ...
        return getattr(self.out, name)


def run(name: str, args: list[str], path: Path | None = None) -> int:
    """Run ``benchmarks/{name}.py`` (or the script at ``path``) with ``args``; its exit
    status."""
    bench = BY_NAME.get(name)
    record = False
    if "--write" in args and bench is not None and not bench.writes:
        if not bench.section:
            print(f"{name} only prints: it has no section to write", file=sys.stderr)
            return 2
        record = True
        args = [a for a in args if a != "--write"]
    line = RunLine.now([name, *args, *(["--write"] if record else [])])
    path = path or HERE / f"{name}.py"
    sys.path.insert(0, str(HERE))  # the scripts import their neighbours by name
    saved_argv, saved_stdout = sys.argv, sys.stdout
    sys.argv = [str(path), *args]
    print(line.text(ended=False), flush=True)
    print(flush=True)
    tee = Tee(sys.stdout) if record else None
    status = 0
    try:
        with stamping(line):
            if tee is not None:
                sys.stdout = tee
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as e:  # argparse's --help and errors, the scripts' own exits
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.argv, sys.stdout = saved_argv, saved_stdout
    if tee is not None and bench is not None and status == 0:
        import common

        printed = tee.kept.getvalue().strip("\n")
        section = stamped(f"{bench.section}\n\n{printed}\n", line.text())
        common.write_section(DOC, bench.section, section, DOC_HEADER)
        print(f"python -m benchmarks: wrote {bench.section!r} in {DOC}", file=sys.stderr)
    return status


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(listing())
        return 0
    name, args = argv[0].removesuffix(".py").replace("-", "_"), argv[1:]
    if name not in scripts():
        print(f"no benchmark {argv[0]!r}", file=sys.stderr)
        near = difflib.get_close_matches(name, scripts(), n=3)
        if near:
            print("did you mean: " + ", ".join(near), file=sys.stderr)
        print("python -m benchmarks lists them", file=sys.stderr)
        return 2
    return run(name, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
