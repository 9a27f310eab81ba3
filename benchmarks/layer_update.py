"""The entity layer after one edited file (issue 43): the incremental update (the file's
rows recomputed; the corpus-wide rows too where their inputs changed) beside a whole
rebuild, on the Node.js corpus.

A copy of ``corpora/nodejs`` is indexed with the rule recognizers; then, ``--rounds``
times per kind of edit, one file is edited (a line appended: one with a date and a
quantity, or one that signs with a new name and address; new values each round) and
indexed (``kbx index``, timed whole), its settle's layer update timed (with the whole
rebuild it falls back to, if it does); then the layer is rebuilt whole on that store
(timed) and checked equal to what the update left, table by table. ``--names`` adds a
store whose units a cheap stand-in for a model names (``tests/large_files.Names``): there
the update refuses (a model's names are corpus-wide decisions) and the layer is rebuilt
whole. Medians, with the load average.

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
from pathlib import Path

from common import DEFAULT_EVAL, table, write_section

from kbx.annotate.setup import registry_for
from kbx.config import Config
from kbx.entities import build, incremental
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.store.consistency import CONTENT
from kbx.store.db import Index

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


EDITS = {  # what a round appends to the file: a new line each time
    "a sentence with a date and a quantity": "Edited on 2026-0{m}-1{d}: {n} MB of notes.",
    "a new signer (a person and an address)": "Signed-off-by: Ed Round{n} <ed{n}@example.org>",
}


class Spy:
    """Times the layer's update (and the whole rebuild it may fall back to) inside
    ``kbx index``'s settle, and says which way it went."""

    def __init__(self) -> None:
        self.seconds, self.path = 0.0, ""
        self._update, self._refresh = incremental.update, build.refresh
        incremental.update, build.refresh = self.update, self.refresh

    def update(self, con):
        started = time.perf_counter()
        done = self._update(con)
        self.seconds += time.perf_counter() - started
        self.path = "refused: whole" if done is None else "corpus rows and the file's"
        self.path = self.path if done is None or done.corpus else "the file's rows"
        return done

    def refresh(self, con) -> None:
        started = time.perf_counter()
        self._refresh(con)
        self.seconds += time.perf_counter() - started
        self.path = self.path or "whole"

    def close(self) -> None:
        incremental.update, build.refresh = self._update, self._refresh


def layer(con) -> dict[str, list[str]]:
    """The layer's tables as ``contents`` compares them (free of ids, sorted)."""
    return {t: sorted(map(repr, con.execute(CONTENT[t]).fetchall())) for t in build.LAYER}


def rounds(root: Path, n: int, names: bool) -> dict[str, dict[str, list]]:
    """Per kind of edit, ``n`` times: edit, index (the layer updated in its settle, timed),
    then rebuild the layer whole on the same store (timed) and compare."""
    idx = Index.for_root(root)
    index(root, registry=registry(idx, names), workers=1)
    edited = root / EDITED
    text = edited.read_text("utf-8")
    kinds = list(EDITS)[:1] if names else list(EDITS)
    out = {k: {"index": [], "update": [], "refresh": [], "paths": [], "equal": []} for k in kinds}
    for kind in kinds:  # one kind after the other: each edit replaces the one before
        for i in range(n):
            line = EDITS[kind].format(m=1 + i % 9, d=i % 10, n=i + 2)
            edited.write_text(f"{text}\n\n{line}\n", "utf-8")
            spy = Spy()
            started = time.perf_counter()
            try:
                index(root, registry=registry(idx, names), workers=1)
            finally:
                spy.close()
            out[kind]["index"].append(time.perf_counter() - started)
            out[kind]["update"].append(spy.seconds)
            out[kind]["paths"].append(spy.path)
            with idx.writer() as con:
                after = layer(con)
                started = time.perf_counter()
                build.refresh(con)
                out[kind]["refresh"].append(time.perf_counter() - started)
                out[kind]["equal"].append(after == layer(con))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--names", action="store_true", help="also a store with a model's names")
    ap.add_argument("--write", action="store_true", help=f"write '{SECTION}' to the docs")
    args = ap.parse_args(argv)
    loads = [os.getloadavg()[0]]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kbx-layer-") as tmp:
        for names in (False, True) if args.names else (False,):
            root = Path(tmp) / ("names" if names else "rules")
            shutil.copytree(args.eval / "corpora" / "nodejs", root)
            off = ", ".join(f'"{r}"' for r in sorted(RULES_ONLY))
            (root / "kbx.toml").write_text(f"[recognizers]\ndisable = [{off}]\n")
            found = rounds(root, args.rounds, names)
            with Index.for_root(root).reader() as con:
                docs, entities, links = con.execute(
                    "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM entities), "
                    "(SELECT count(*) FROM links)"
                ).fetchone()
            for kind, r in found.items():
                update, refresh = statistics.median(r["update"]), statistics.median(r["refresh"])
                rows.append(
                    [
                        "rules and a stand-in model's names" if names else "rule recognizers",
                        f"{docs:,} / {entities:,} / {links:,}",
                        kind,
                        ", ".join(sorted(set(r["paths"]))),
                        f"{update * 1000:.0f}",
                        f"{refresh * 1000:.0f}",
                        f"{refresh / update:.1f}x",
                        f"{statistics.median(r['index']):.2f}",
                        "yes" if all(r["equal"]) else "NO",
                    ]
                )
            loads.append(os.getloadavg()[0])
    command = shlex.join(["python", "benchmarks/layer_update.py", *(argv or sys.argv[1:])])
    headers = [
        "store",
        "documents / entities / links",
        "edit",
        "the update did",
        "update ms",
        "whole rebuild ms",
        "gain",
        "kbx index after the edit, s",
        "equal to the rebuild",
    ]
    section = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Date: {time.strftime('%Y-%m-%d %H:%M')}. The Node.js "
            f"corpus, `{EDITED}` edited {args.rounds} times per kind of edit; medians; the "
            f"update as `kbx index` ran it after the edit, the whole rebuild then on the same "
            f"store; 1-minute load average {min(loads):.1f}-{max(loads):.1f} on "
            f"{os.cpu_count()} cores (shared).",
            "",
            table(headers, rows, right=4),
            "",
            "An edit that leaves the corpus-wide inputs as they were (the keyed mentions, the "
            "signers, the authors: `entities/inputs.py`) recomputes the file's links, "
            "authorship, dates and quantities alone; one that adds a person rebuilds the "
            "entities, aliases and basis too and compares the decisions other files read. A "
            "model's names are decided across the corpus (votes, code words, evidence), so "
            "there the update refuses and the layer is rebuilt whole "
            "(`entities/incremental.py`).",
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(DOC, SECTION, section, HEADER)


if __name__ == "__main__":
    main()
