"""brat standoff: per document a ``.txt`` (its chosen units' clean texts in order) and a
``.ann`` of ``T`` lines and ``#`` notes; ``annotation.conf`` lists the types, and
``kbx-units.tsv`` says where each unit starts in its ``.txt`` and which original lines it
came from.

Units are joined by a blank line, except that a window continuing the one before (a long
block cut with overlap) adds only what it does not repeat, so the ``.txt`` reads as the
document does and a mention in the overlap is written once. A span that crosses a line
break is written as brat's fragments (``start end;start end``), its text the fragments
joined by a space, as brat itself writes them. brat's type names are letters, digits, ``-``
and ``_``: any other character becomes ``_`` (``programming language`` is
``programming_language``), the report lists what was renamed, and the note keeps the type.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from kbx.export.read import Doc, Found, documents, relative

if TYPE_CHECKING:
    from kbx.export.run import Job

SEPARATOR = "\n\n"
UNITS_FILE = "kbx-units.tsv"
_NOT_BRAT = re.compile(r"[^A-Za-z0-9_-]")
_BLANK = re.compile(r"[\t\r\n]+")


def brat_type(t: str) -> str:
    """A mention type as brat can name it."""
    return _NOT_BRAT.sub("_", t) or "_"


def fragments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``[start, end)`` of ``text`` cut at line breaks, blank pieces left out."""
    out, at = [], start
    for piece in text[start:end].split("\n"):
        if piece.strip():
            out.append((at, at + len(piece)))
        at += len(piece) + 1
    return out


def _note(m: Found, renamed: bool) -> str:
    parts = [f"value={m.value}"] if m.value is not None else []
    parts += [f"entity={m.entity}"] if m.entity else []
    parts += [f"type={m.type}"] if renamed else []
    parts.append(f"recognizer={m.recognizer}@{m.version}")
    parts.append(f"confidence={m.confidence:g}")
    return _BLANK.sub(" ", "; ".join(parts))


def render(doc: Doc, types: dict[str, str]) -> tuple[str, list[str], list[tuple[int, int]]]:
    """The ``.txt`` of ``doc``, its ``.ann`` lines, and each placement's ``[start, end)`` in
    the ``.txt``; ``types`` gathers the brat name of each type written."""
    parts: list[str] = []
    length = 0
    chain_at: dict[int, int] = {}  # chain -> where its position 0 lies in the .txt
    covered = 0  # the .txt's end, in the coordinates of the current chain
    spans, ann, n = [], [], 0
    for p in doc.placements:
        if p.chain in chain_at and p.base > 0:  # continues the window before
            new = p.text[covered - p.base :]
        else:
            if parts:
                parts.append(SEPARATOR)
                length += len(SEPARATOR)
            chain_at[p.chain] = length - p.base
            new = p.text
        parts.append(new)
        length += len(new)
        at = chain_at[p.chain] + p.base
        covered = p.base + len(p.text)
        spans.append((at, at + len(p.text)))
        for m in p.mentions:
            pieces = fragments(p.text, m.start, m.end)
            if not pieces:
                continue
            name = types.setdefault(m.type, brat_type(m.type))
            n += 1
            where = ";".join(f"{at + a} {at + b}" for a, b in pieces)
            surface = " ".join(p.text[a:b] for a, b in pieces)
            ann.append(f"T{n}\t{name} {where}\t{surface}")
            ann.append(f"#{n}\tAnnotatorNotes T{n}\t{_note(m, name != m.type)}")
    return "".join(parts), ann, spans


CONF = """# the mention types of this kbx export (kbx export brat); kbx keeps overlapping mentions
[entities]
{types}

[relations]
<OVERLAP>\tArg1:<ENTITY>, Arg2:<ENTITY>, <OVL-TYPE>:<ANY>

[events]

[attributes]
"""


def write(job: Job, folder: Path) -> None:
    """``PATH.txt`` and ``PATH.ann`` for each chosen document (its path, folders kept)."""
    r, done = job.report, 0
    types: dict[str, str] = {}
    with (folder / UNITS_FILE).open("w", encoding="utf-8", newline="") as units:
        units.write("txt\tstart\tend\tpath\tordinal\tunit\tstart_line\tend_line\n")
        for doc in documents(job.con, job.sel):
            done += 1
            job.progress(done, job.sel.documents)
            if not relative(doc.path):
                r.notes.append(f"left out {doc.path!r}: its path would leave --out")
                continue
            text, ann, spans = render(doc, types)
            base = folder / doc.path
            base.parent.mkdir(parents=True, exist_ok=True)
            txt = base.with_name(base.name + ".txt")
            txt.write_text(text, encoding="utf-8", newline="")
            lines = "".join(f"{line}\n" for line in ann)
            base.with_name(base.name + ".ann").write_text(lines, encoding="utf-8", newline="")
            rel = f"{doc.path}.txt"
            units.writelines(
                f"{rel}\t{a}\t{b}\t{doc.path}\t{p.ordinal}\t{p.unit}\t{p.start_line}\t{p.end_line}\n"
                for p, (a, b) in zip(doc.placements, spans, strict=True)
            )
            r.mentions += len(ann) // 2
            r.files += 2
    names = sorted(set(types.values()))
    (folder / "annotation.conf").write_text(CONF.format(types="\n".join(names)), encoding="utf-8")
    r.files += 2
    r.renamed = {t: b for t, b in sorted(types.items()) if t != b}
