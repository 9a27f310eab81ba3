"""The fuzz tier's fast subset (issue 12): a dozen of the most hostile inputs, each small, in
one folder beside good files. The run completes, every bad file is recorded with its reason,
and the good files stay searchable. ``benchmarks/fuzz.py`` runs the full matrix."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from fpdf import FPDF

from kbx.indexing.ingest import index
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.search import search
from kbx.search.status import status
from kbx.store.db import Index

CAP = 2_000_000  # bytes: the size cap of these runs
GOOD = {
    "good.md": b"# Good\n\nzebrafinch nests on 2021-03-04.\n",
    "deeper/good.txt": b"A plain note about the quokkaword.\n",
}


def _pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "A small valid PDF about the pangolinword. " * 20)
    return bytes(pdf.output())


def _laughs(levels: int) -> bytes:
    out = '---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(levels - 1):
        out += f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n"
    return (out + "---\n# Laughs\n\nnarwhalword after the bomb.\n").encode()


# Recorded as failed or skipped, each with a reason containing these words.
BAD = {
    "random.pdf": (random.Random(12).randbytes(2048), "corrupt"),
    "truncated.pdf": (_pdf()[:700], "PDF"),
    "empty.md": (b"", "empty"),
    "nul.txt": (b"text\0with\0NULs\n" * 10, "binary"),
    "random.tex": (b"\\section{x}" + random.Random(5).randbytes(512) + b"\0", "binary"),
}
# Kept: indexed, and searchable by a word they hold.
KEPT = {
    "deep.html": (b"<div>" * 100_000 + b"axolotlword" + b"</div>" * 100_000, "axolotlword"),
    "bomb.md": (_laughs(9), "narwhalword"),
    "a.tex": (b"\\input{b}\nA tapirword loop.\n", "tapirword"),
    "b.tex": (b"\\input{a.tex}\nB loop.\n", None),
    "utf16.md": ("# Título\n\nokapiword in UTF-16.\n".encode("utf-16"), "okapiword"),
    "forms.md": ("# ﷺ ͺ\n\nﷺ ﹰ ﻻ ᾳ ΐ ligature ﬃ dugongword\n".encode(), "dugongword"),
    "long.txt": (b"wombatword " + b"node release v18.2.0 " * 50_000, "wombatword"),
}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "fuzz"
    for rel, data in GOOD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    for rel, (data, _) in {**BAD, **KEPT}.items():
        (root / rel).write_bytes(data)
    os.mkfifo(root / "pipe.md")
    os.symlink("/etc/passwd", root / "passwd.md")
    os.symlink("loop.md", root / "loop.md")
    with open(os.fsencode(root) + b"/bad\xff.md", "wb") as f:
        f.write(b"# Bad name\n")
    with open(root / "huge.txt", "wb") as f:  # over the cap given below, sparse
        f.truncate(CAP + 1)
    return root


def test_hostile_inputs_are_recorded_and_good_files_stay_searchable(hostile):
    registry = Registry([IdentifierRecognizer(), DateRecognizer()])
    report = index(hostile, workers=2, registry=registry, max_size=CAP)
    idx = Index.for_root(hostile)
    failures = {f["path"]: f["error"] for f in status(idx).failures}
    expected = {rel: why for rel, (_, why) in BAD.items()} | {
        "pipe.md": "named pipe",
        "passwd.md": "outside the indexed root",
        "loop.md": "symbolic link loop",
        "bad\\xff.md": "not valid UTF-8",
        "huge.txt": "size cap",
    }
    assert set(failures) == set(expected), failures
    for rel, why in expected.items():
        assert why in failures[rel], (rel, failures[rel])
    assert report.new == len(GOOD) + len(KEPT)
    for word in ["zebrafinch", "quokkaword", *[w for _, w in KEPT.values() if w]]:
        assert search(idx, word).hits, word
    again = index(hostile, workers=2, registry=registry, max_size=CAP)  # nothing is stuck
    assert (again.new, again.unchanged) == (0, len(GOOD) + len(KEPT))
