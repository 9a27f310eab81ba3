"""Save to searchable (issue 43): with the watcher of ``kbx serve``, the time from saving one
edited file to a search that finds its new word, on the Node.js corpus and on the scale
benchmark's 20k and 200k-unit corpora, with each step of the re-index timed.

Per corpus: a copy (the Node.js corpus indexed here; a scale corpus with its index from the
scale benchmark's cache, ``scale_corpus.py`` and ``scale_build.py``, copied beside it and
told its new root) with a ``kbx.toml`` that leaves the rule recognizers the scale index was
built with (identifiers, dates, quantities); then, in this process as ``kbx serve`` runs
them, a ``LiveIndex`` and its ``Watcher`` (defaults: 50 ms of quiet, 1.6 s at most). Each
of ``--edits`` rounds appends a sentence with a word no file has to one file (the file of
median size; a new word each round, replacing the last) and, from the moment the file is
closed, a client thread searches for the word every ``--poll`` seconds as the HTTP API does
(``search``: k=8, exact phrases, facets) until a hit in that file comes back: that moment is
the round's figure. The re-index goes on to its end (the mapped files exported), timed too.

The steps are timed by wrapping the functions the watcher's run calls (in this process
only, nothing changed on disk): the debounce (save to the watcher's run), the watcher's own
walk, the switch of the live index to the write's connection, and within ``kbx index``:
the repair check, the walk, the extraction (the readers' work as the writer waits for it),
the write of the batch (documents, units, postings, mentions), the postings' resort, each
mapped file's export (postings and passages, a delta right after the write; the facet
arrays, after the entity layer), the recognizers' check, the names context and the entity
layer. Medians over the rounds, seconds; the 1-minute load
average before and after each corpus.

    .venv/bin/python benchmarks/save_searchable.py [--sizes nodejs,20000,200000]
        [--edits 7] [--cache /tmp/kbx-scale] [--write] [--kbx DIR]

``--kbx DIR`` runs another checkout (``DIR/kbx``, e.g. from ``git archive``) for a before.

A scale corpus and its index are built into ``--cache`` (outside the repository) when
missing, as ``scale.py`` builds them (200k units: several minutes). A script: it asserts
only that each edit is found.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shlex
import shutil
import statistics
import string
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

if "--kbx" in sys.argv:  # another checkout's package, before anything imports kbx
    sys.path.insert(0, sys.argv[sys.argv.index("--kbx") + 1])

import duckdb  # noqa: E402
from common import DEFAULT_EVAL, NODEJS, table, write_section  # noqa: E402

from kbx import api  # noqa: E402
from kbx.serve import commands  # noqa: E402
from kbx.serve.live import LiveIndex, _Warm  # noqa: E402
from kbx.serve.watch import Watcher  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "## Save to searchable (issue 43)"
HEADER = "# Benchmarks\n"
UNITS_PER_DOC = 4.71  # the scale corpus's documents (scale.py)
RULES = ("identifiers", "dates", "quantities")  # what scale_build's index ran
OFF = ("references", "bylines", "spacy", "gliner", "gazetteer")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- the steps -----------------------------------------------------------------------------


class Steps:
    """Wraps the functions a watcher's run calls and sums each one's seconds per round."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.marks: dict[str, float] = {}
        self._undo: list[tuple[object, str, object]] = []
        self._inner = threading.local()  # the seconds of steps inside the one running

    def add(self, step: str, seconds: float) -> None:
        self.spent[step] = self.spent.get(step, 0.0) + seconds

    def timed(self, step: str, fn: Callable[[], object]) -> object:
        """``fn()``, its seconds added to ``step`` less those of the steps inside it (the
        facet arrays exported inside the entity layer's settle count once, as an export)."""
        outer = getattr(self._inner, "seconds", 0.0)
        self._inner.seconds = 0.0
        started = time.perf_counter()
        try:
            return fn()
        finally:
            spent = time.perf_counter() - started
            self.add(step, spent - self._inner.seconds)
            self._inner.seconds = outer + spent

    def reset(self) -> None:
        self.spent, self.marks = {}, {}

    def wrap(self, owner: object, name: str, step: str, *, listed: bool = False) -> None:
        fn = getattr(owner, name)

        def timed(*args, **kwargs):
            def call():
                out = fn(*args, **kwargs)
                return list(out) if listed else out  # a generator walked here, timed

            return self.timed(step, call)

        self._undo.append((owner, name, fn))
        setattr(owner, name, timed)

    def wrap_generator(self, owner: object, name: str, step: str) -> None:
        """A generator the caller iterates: the time spent in its ``next``."""
        fn = getattr(owner, name)

        def timed(*args, **kwargs) -> Iterator:
            it = iter(fn(*args, **kwargs))
            done = object()
            while (item := self.timed(step, lambda: next(it, done))) is not done:
                yield item

        self._undo.append((owner, name, fn))
        setattr(owner, name, timed)

    def mark(self, owner: object, name: str, key: str, first: bool = False) -> None:
        """Note when ``name`` is first entered (``key``) and when it returns (``key`` end:
        the last return, or with ``first`` the first)."""
        fn = getattr(owner, name)

        def marked(*args, **kwargs):
            self.marks.setdefault(key, time.perf_counter())
            try:
                return fn(*args, **kwargs)
            finally:
                if not (first and f"{key} end" in self.marks):
                    self.marks[f"{key} end"] = time.perf_counter()

        self._undo.append((owner, name, fn))
        setattr(owner, name, marked)

    def close(self) -> None:
        for owner, name, fn in reversed(self._undo):
            setattr(owner, name, fn)


STEPS = (  # (column, module path, function), in the order a run meets them
    ("watcher's walk", "kbx.serve.watch:Watcher", "_walk"),
    ("watcher's walk", "kbx.serve.watch:Watcher", "_restat"),  # its stat of the saved file
    ("repair check", "kbx.indexing.ingest", "repair"),
    ("walk", "kbx.indexing.ingest", "walk"),
    ("extraction", "kbx.indexing.ingest", "read_all"),
    ("write", "kbx.indexing.ingest", "_flush"),
    ("postings resort", "kbx.indexing.ingest", "resort_postings"),
    ("recognizers", "kbx.indexing.ingest", "_complete"),
    ("recognizers", "kbx.indexing.ingest", "recognize"),
    ("names context", "kbx.indexing.ingest", "refresh_context"),
    ("entity layer", "kbx.indexing.ingest", "settle"),
    ("export: facet arrays", "kbx.entities.facet_arrays", "refresh"),
    ("export: postings", "kbx.store.postings_file", "refresh"),
    ("export: passages", "kbx.store.passages_file", "refresh"),
)


def _owner(spec: str) -> object:
    module, _, attr = spec.partition(":")
    __import__(module)
    owner = sys.modules[module]
    return getattr(owner, attr) if attr else owner


def instrument() -> Steps:
    steps = Steps()
    for step, spec, name in STEPS:
        if not hasattr(_owner(spec), name):  # another checkout (--kbx) may lack it
            continue
        if name == "read_all":
            steps.wrap_generator(_owner(spec), name, step)
        else:
            steps.wrap(_owner(spec), name, step, listed=name == "walk")
    steps.mark(sys.modules["kbx.indexing.ingest"], "_flush", "flush")
    steps.mark(Watcher, "_sync", "run")
    steps.mark(_Warm, "write", "write")
    steps.mark(api, "index", "index")  # as the watcher calls it
    if hasattr(_owner("kbx.store.passages_file"), "compact"):  # a checkout with the deltas
        steps.mark(_owner("kbx.store.passages_file"), "refresh", "mapped", first=True)
    return steps


# --- the corpora -----------------------------------------------------------------------------


def setup_toml(root: Path) -> None:
    off = ", ".join(f'"{n}"' for n in OFF)
    (root / "kbx.toml").write_text(f"[recognizers]\ndisable = [{off}]\n", "utf-8")


def nodejs(eval_dir: Path, work: Path) -> Path:
    root = work / "nodejs"
    shutil.copytree(eval_dir / NODEJS, root)
    setup_toml(root)
    started = time.perf_counter()
    api.index(root, workers=2)
    log(f"nodejs: indexed in {time.perf_counter() - started:.0f} s")
    return root


def scale(size: int, eval_dir: Path, cache: Path, work: Path) -> Path:
    """The scale corpus of about ``size`` units and its cached index, copied to ``work``."""
    from scale_build import kbx_index
    from scale_corpus import load_pool, write_corpus

    n_docs = math.ceil(size / UNITS_PER_DOC / 50) * 50
    corpus, db = cache / f"corpus-{n_docs}", cache / f"kbx-{n_docs}.duckdb"
    if not (corpus / ".complete").exists() or not db.with_suffix(".json").exists():
        log(f"{size}: building the corpus and its index in {cache} ...")
        write_corpus(corpus, n_docs, load_pool(eval_dir, cache))
        kbx_index(corpus, db, False)
    root = work / f"scale-{n_docs}"
    started = time.perf_counter()
    shutil.copytree(corpus, root)
    (root / ".kbx").mkdir()
    for f in cache.glob(f"kbx-{n_docs}.duckdb*"):  # the file and its mapped arrays
        if not f.name.endswith((".lock", ".wal")):
            shutil.copy2(f, root / ".kbx" / f.name.replace(db.name, "index.duckdb"))
    con = duckdb.connect(str(root / ".kbx" / "index.duckdb"))
    con.execute("UPDATE kbx_meta SET value = ? WHERE key = 'root'", [str(root.resolve())])
    con.close()
    setup_toml(root)
    log(f"{size}: copied in {time.perf_counter() - started:.0f} s")
    return root


def median_file(root: Path) -> Path:
    """The indexed file of median size (ties by path)."""
    files = sorted((p.stat().st_size, p) for p in root.rglob("*.md*") if ".kbx" not in p.parts)
    return files[len(files) // 2][1]


# --- the rounds ----------------------------------------------------------------------------


def found(live: LiveIndex, word: str, rel: str) -> bool:
    out = commands.run(live, "search", {"q": [word]}, api.HTTP, "search", repeated=True)
    return any(h.get("path") == rel for h in out.get("hits", []))


def rounds(root: Path, edits: int, poll: float, steps: Steps) -> tuple[list[dict], dict]:
    """``edits`` saves of one file, each timed to searchable and to the run's end."""
    live = LiveIndex.of(api.Index.for_root(root))
    with live.reader() as con:
        units, docs = con.execute(
            "SELECT (SELECT count(*) FROM units), (SELECT count(*) FROM documents)"
        ).fetchone()
    edited = median_file(root)
    rel = edited.relative_to(root).as_posix()
    text = edited.read_text("utf-8")
    rng = random.Random(43)
    out = []
    watcher = Watcher(live, log=log)
    with watcher:
        if not watcher.ready.wait(1800):
            raise RuntimeError("the watcher's first run did not end")
        log(f"{root.name}: {units:,} units; watching; editing {rel}")
        for i in range(edits):
            time.sleep(1.5)  # quiet: the last run's end well behind
            word = "".join(rng.choice(string.ascii_lowercase) for _ in range(12))
            runs = watcher.runs
            steps.reset()
            edited.write_text(f"{text}\n\nA new word, {word}, was saved here.\n", "utf-8")
            saved = time.perf_counter()
            hit = None
            polls = 0
            while hit is None and time.perf_counter() - saved < 600:
                polls += 1
                if found(live, word, rel):
                    hit = time.perf_counter() - saved
                else:
                    time.sleep(poll)
            if hit is None:
                raise RuntimeError(f"{word} not found in {rel} within 600 s")
            # the run's end (the mapped files exported): counted, then returned
            while watcher.runs == runs or "run end" not in steps.marks:
                time.sleep(0.01)
            m = dict(steps.marks)
            row = {
                "searchable": hit,
                "debounce": m["run"] - saved,
                "run": m["run end"] - m["run"],
                "switch": m["index"] - m["write"] if "write" in m else 0.0,
                "index": m["index end"] - m["index"],
                "done": m["run end"] - saved,
                "committed": m["flush end"] - saved,
                "mapped": m["mapped end"] - saved if "mapped end" in m else math.nan,
                "polls": polls,
                **steps.spent,
            }
            out.append(row)
            log(
                f"  {i + 1}: searchable {hit:.2f} s, run ends {row['done']:.2f} s "
                f"({', '.join(f'{k} {v:.2f}' for k, v in steps.spent.items())})"
            )
    live.close()
    return out, {"units": units, "docs": docs, "file": rel, "bytes": len(text.encode())}


# --- the report ----------------------------------------------------------------------------

COLUMNS = [  # (heading, key): the figures of a round, medians in the table
    ("save to searchable", "searchable"),
    ("save to the write's commit", "committed"),
    ("save to the mapped files current (postings and passages)", "mapped"),
    ("save to the run's end", "done"),
    ("debounce", "debounce"),
    ("watcher's walk", "watcher's walk"),
    ("switch to the write", "switch"),
    ("kbx index, whole", "index"),
    *((s, s) for s in dict.fromkeys(s for s, _, _ in STEPS) if s != "watcher's walk"),
]


def report(results: list[tuple[str, dict, list[dict], tuple[float, float]]], args) -> str:
    heads = ["step (median s)"] + [
        f"{label} ({meta['units']:,} units)" for label, meta, _, _ in results
    ]
    rows = []
    for heading, key in COLUMNS:
        row = [heading]
        for _, _, rs, _ in results:
            values = [r.get(key, 0.0) for r in rs]
            known = not any(math.isnan(v) for v in values)  # an older checkout lacks a step
            row.append(f"{statistics.median(values):.3f}" if known else "–")
        rows.append(row)
    rest = ["the rest of kbx index (lease, known files, meta, ...)"]
    for _, _, rs, _ in results:
        named = [s for s in dict.fromkeys(s for s, _, _ in STEPS) if s != "watcher's walk"]
        rest.append(
            f"{statistics.median(r['index'] - sum(r.get(s, 0.0) for s in named) for r in rs):.3f}"
        )
    rows.insert(len(rows), rest)
    curve = []
    base = None
    for label, meta, rs, load in results:
        med = statistics.median(r["searchable"] for r in rs)
        if label.startswith("20k"):
            base = med
        curve.append((label, meta, rs, load, med))
    lines = []
    for label, meta, rs, load, med in curve:
        ratio = (
            f"; {med / base:.2f}x the 20k figure" if base and not label.startswith("20k") else ""
        )
        lines.append(
            f"| {label} | {meta['docs']:,} | {meta['units']:,} | `{meta['file']}` "
            f"({meta['bytes']:,} bytes) | {med:.2f}{ratio} | "
            f"{min(r['searchable'] for r in rs):.2f}-{max(r['searchable'] for r in rs):.2f} | "
            f"{statistics.median(r['done'] for r in rs):.2f} | {load[0]:.1f}-{load[1]:.1f} |"
        )
    command = shlex.join(["python", "benchmarks/save_searchable.py", *args.argv])
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d %H:%M')}. {args.edits} "
            f"edits per corpus, each a sentence with a new word appended to the file of median "
            f"size; a client searches for the word every {args.poll * 1000:.0f} ms from the "
            "save (`search` as the HTTP API runs it, in the watcher's process); "
            f"{os.cpu_count()} cores, shared. Rule recognizers (identifiers, dates, "
            "quantities), no vectors.",
            "",
            "| corpus | documents | units | the edited file | save to searchable, median s "
            "| min-max | save to the run's end, median s | load (1 min) |",
            "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
            *lines,
            "",
            "Each step of the watcher's run, medians over the edits (a step's median is over "
            "its own rounds, so the column need not add up):",
            "",
            table(heads, rows),
            "",
            "How to read it: a search finds the word once the run's batch commits (the "
            "document, its units and postings), in SQL until the mapped files are of the new "
            "generation. Right after the commit, the run writes what changed to the mapped "
            "postings and passages (a delta over the base file: the units added and deleted, "
            "the documents written; `export: postings`, `export: passages`), so searches rank "
            'and read mapped again a few tenths of a second after the commit ("save to the '
            "mapped files current\"), where they waited for the run's end before; a delta past "
            "5% of its base writes a new base. The run goes on with the recognizers' pass "
            "over the new units (with its check of every unit's runs), the names context, the "
            "entity layer and its facet arrays (still rewritten whole); a save made meanwhile "
            "waits for the run's end. "
            "`walk` is 0 where the run takes the watcher's walk instead of walking again "
            "(0b155db); the watcher's walk is a stat of the saved file where a file is "
            "modified in place (e0816be).",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "kbx-scale")
    ap.add_argument("--sizes", default="nodejs,20000,200000", help="nodejs and unit counts")
    ap.add_argument("--edits", type=int, default=7)
    ap.add_argument("--poll", type=float, default=0.02, help="seconds between searches")
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    ap.add_argument("--kbx", type=Path, help="a folder holding another checkout's kbx package")
    args = ap.parse_args(argv)
    args.argv = argv if argv is not None else sys.argv[1:]
    steps = instrument()
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="kbx-save-") as tmp:
            for size in args.sizes.split(","):
                work = Path(tmp) / size
                work.mkdir()
                if size == "nodejs":
                    root, label = nodejs(args.eval.resolve(), work), "Node.js"
                else:
                    n = int(size)
                    root = scale(n, args.eval.resolve(), args.cache, work)
                    label = f"{n // 1000}k scale"
                before = os.getloadavg()[0]
                rs, meta = rounds(root, args.edits, args.poll, steps)
                results.append((label, meta, rs, (before, os.getloadavg()[0])))
                shutil.rmtree(work)
    finally:
        steps.close()
    section = report(results, args)
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)


if __name__ == "__main__":
    main()
