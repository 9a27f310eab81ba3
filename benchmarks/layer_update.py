"""The entity layer after one edited file (issue 43): the incremental update (the file's
rows recomputed, the corpus-wide rows rebuilt and compared) beside a whole rebuild, on
the Node.js corpus.

A copy of ``corpora/nodejs`` is indexed with the rule recognizers; then, ``--rounds``
times, one file is edited (a line with a date, a quantity and an address appended, a
different one each round) and indexed (``kbx index``: save to settled, timed whole), and
on that store the layer is brought level both ways, in alternating order: the file marked
stale and ``incremental.update`` run, and ``build.refresh`` run. Each update is checked
equal to the rebuild, table by table. ``--names`` adds a store whose units a cheap
stand-in for a model names (``tests/large_files.Names``): there the update refuses (a
model's names are corpus-wide decisions) and the layer is rebuilt whole. Medians, with
the load average.

    .venv/bin/python benchmarks/layer_update.py [--rounds 7] [--names] [--write]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from common import DEFAULT_EVAL, table, write_section

from kbx.annotate.setup import registry_for
from kbx.config import Config
from kbx.entities import build, incremental
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.consistency import contents
from kbx.store.db import Index, mark_stale
from kbx.store.transaction import transaction

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "## Entity layer after one edit (issue 43)"
HEADER = "# Benchmarks\n"
RULES_ONLY = frozenset({"spacy", "gliner", "acronyms"})
EDITED = "blog/release/v18.0.0.md"  # a long release note: dates, versions, people


def registry(idx: Index, names: bool) -> Registry:
    """The rule recognizers (and with ``names`` the stand-in model), and the gazetteer."""
    base = Registry.load(Config(RULES_ONLY))
    if names:
        sys.path.insert(0, str(REPO / "tests"))  # the stand-in lives with the tests
        from large_files import Names

        base.register(Names())
    return registry_for(idx, base)


def timed(fn, *args) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - started, result


def rounds(root: Path, n: int, names: bool) -> dict[str, list]:
    """Edit, index, and bring the layer level both ways, ``n`` times."""
    idx = Index.for_root(root)
    index(root, registry=registry(idx, names), workers=1)
    out: dict[str, list] = {"index": [], "update": [], "refresh": [], "paths": [], "equal": []}
    edited = root / EDITED
    text = edited.read_text("utf-8")
    for i in range(n):
        edited.write_text(
            text + f"\n\nEdited on 2026-0{1 + i % 9}-1{i % 10}: {i + 2} MB, by Ed {i} "
            f"<ed{i}@example.org>.\n",
            "utf-8",
        )
        seconds, _ = timed(partial(index, root, registry=registry(idx, names), workers=1))
        out["index"].append(seconds)
        with idx.writer() as con:
            (doc,) = con.execute("SELECT doc_id FROM documents WHERE path = ?", [EDITED]).fetchone()
            for step in ("update", "refresh") if i % 2 == 0 else ("refresh", "update"):
                if step == "update":
                    with transaction(con):
                        mark_stale(con, [doc])
                    seconds, done = timed(incremental.update, con)
                    out["paths"].append("incremental" if done else "whole (refused)")
                    if done is None:
                        seconds += timed(build.refresh, con)[0]
                    after = contents(con)
                else:
                    seconds, _ = timed(build.refresh, con)
                    rebuilt = contents(con)
                out[step].append(seconds)
            out["equal"].append(all(after[t] == rebuilt[t] for t in build.LAYER))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--names", action="store_true", help="also a store with a model's names")
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    loads = [os.getloadavg()[0]]
    results = {}
    with tempfile.TemporaryDirectory(prefix="kbx-layer-") as tmp:
        for names in (False, True) if args.names else (False,):
            root = Path(tmp) / ("names" if names else "rules")
            shutil.copytree(args.eval / "corpora" / "nodejs", root)
            off = ", ".join(f'"{r}"' for r in sorted(RULES_ONLY))
            (root / "kbx.toml").write_text(f"[recognizers]\ndisable = [{off}]\n")
            results[names] = rounds(root, args.rounds, names)
            with Index.for_root(root).reader() as con:
                results[names]["size"] = con.execute(
                    "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM links), "
                    "(SELECT count(*) FROM entities)"
                ).fetchone()
            loads.append(os.getloadavg()[0])
    rows = []
    for names, r in results.items():
        update, refresh = statistics.median(r["update"]), statistics.median(r["refresh"])
        docs, links, entities = r["size"]
        rows.append(
            [
                "rules and a stand-in model's names" if names else "rule recognizers",
                f"{docs:,} / {entities:,} / {links:,}",
                ", ".join(sorted(set(r["paths"]))),
                f"{update * 1000:.0f}",
                f"{refresh * 1000:.0f}",
                f"{refresh / update:.1f}x",
                f"{statistics.median(r['index']):.2f}",
                "yes" if all(r["equal"]) else "NO",
            ]
        )
    command = shlex.join(["python", "benchmarks/layer_update.py", *(argv or sys.argv[1:])])
    section = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d %H:%M')}. The Node.js "
            f"corpus, `{EDITED}` edited {args.rounds} times; medians; 1-minute load average "
            f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores (shared).",
            "",
            table(
                [
                    "store",
                    "documents / entities / links",
                    "update took",
                    "incremental ms",
                    "whole rebuild ms",
                    "gain",
                    "kbx index after the edit, s",
                    "equal to the rebuild",
                ],
                rows,
            ),
            "",
            "The incremental update rebuilds the corpus-wide rows (entities, aliases, the "
            "basis) whole and recomputes the edited file's links, authorship, dates and "
            "quantities; the rebuild does everything. A model's names are decided across "
            "the corpus (votes, code words, evidence), so there the update refuses and the "
            "layer is rebuilt whole (`entities/incremental.py`).",
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)


if __name__ == "__main__":
    main()
