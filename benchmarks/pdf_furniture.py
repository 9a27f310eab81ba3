"""PDF page furniture: running heads, footers and page numbers, and the passages they made.

For each PDF, ``extract`` as ``kbx index`` runs it, counting the units, the units of five
tokens or fewer (a page's furniture alone makes one: "gnuplot 5.4 21"), and the words of
pdfium's text that the clean text lacks ("words dropped", by occurrence: what a search can
no longer find in its place). With ``--baseline PKG`` (a folder holding an older checkout
as ``kbx``) that revision is measured beside the working tree on the same files, and the
dropped words that differ are listed by kind, so a body word cut by mistake shows.

    .venv/bin/python benchmarks/pdf_furniture.py DIR_OR_PDF... --baseline /tmp/basepkg [--write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from common import REPO, write_section

TITLE = "## PDF page furniture (issue 41)"
HEADER = "# Benchmarks\n"
_WORD = re.compile(r"\w{2,}")


def measure(files: list[Path]) -> dict:
    """Units, short units and dropped words, summed, and the dropped words themselves."""
    from kbx.errors import ExtractError
    from kbx.extract.document import extract
    from kbx.extract.formats.pdf import PAGE_BREAK, SOFT_HYPHEN, page_texts

    out = {"files": 0, "pages": 0, "units": 0, "short": 0, "words": 0, "dropped": Counter()}
    out["texts"] = {}
    for f in files:
        data = f.read_bytes()
        try:
            doc = extract(f.name, data)
            pages, _ = page_texts(data)
        except ExtractError:
            continue
        out["files"] += 1
        out["pages"] += len(pages)
        out["units"] += len(doc.units)
        out["short"] += sum(len(u.text.split()) <= 5 for u in doc.units)
        out["texts"][str(f)] = [u.text for u in doc.units]
        source = Counter(_WORD.findall(PAGE_BREAK.join(pages).replace(SOFT_HYPHEN, "")))
        clean = Counter(w for u in doc.units for w in _WORD.findall(u.text))
        out["words"] += sum(source.values())
        out["dropped"].update(source - clean)
    return out


def furniture_lines(files: list[Path]) -> dict[str, set[str]]:
    """Per PDF, the lines the working tree calls furniture, whitespace collapsed."""
    from kbx.errors import ExtractError
    from kbx.extract.formats.pdf import furniture, page_texts

    out = {}
    for f in files:
        try:
            pages, _ = page_texts(f.read_bytes())
        except ExtractError:
            continue
        cuts = furniture(pages)
        cut = zip(pages, cuts, strict=True)
        found = {" ".join(p[a:b].split()) for p, c in cut for a, b in c}
        out[str(f)] = {line for line in found if _WORD.search(line.strip("0123456789"))}
    return out


def furnished(texts: dict[str, list[str]], lines: dict[str, set[str]]) -> tuple[int, int]:
    """Units that hold a furniture line, and units made of furniture lines alone."""
    holding = alone = 0
    for path, units in texts.items():
        found = sorted(lines.get(path, ()), key=len, reverse=True)
        for text in units:
            flat = " ".join(text.split())
            rest = flat
            for line in found:
                rest = rest.replace(line, " ")
            holding += rest != flat
            alone += rest != flat and not _WORD.search(rest)
    return holding, alone


def run(files: list[Path], pythonpath: str | None) -> dict:
    env = dict(os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {}))
    args = [sys.executable, __file__, "--measure", *map(str, files)]
    r = json.loads(subprocess.run(args, check=True, capture_output=True, env=env).stdout)
    r["dropped"] = Counter(r["dropped"])
    return r


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sources", type=Path, nargs="+")
    p.add_argument("--baseline", help="a folder holding an older checkout as kbx")
    p.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--write", action="store_true")
    a = p.parse_args()
    files = sorted(f for s in a.sources for f in ([s] if s.is_file() else s.rglob("*.pdf")))
    if a.measure:
        r = measure(files)
        print(json.dumps(r))
        return
    results = {"working tree": run(files, None)}
    if a.baseline:
        results = {"baseline": run(files, a.baseline), **results}
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    any_r = next(iter(results.values()))
    lines_of = furniture_lines(files)
    lines = [
        TITLE,
        "",
        f"Command: `python benchmarks/pdf_furniture.py {' '.join(sys.argv[1:])}`, "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, commit {commit}; "
        f"{any_r['files']} PDFs, {any_r['pages']} pages, {any_r['words']:,} words.",
        "",
        "A furniture line is one the working tree cuts (a page's top or bottom two lines, "
        "recurring there on a quarter of the pages, page numbers aside).",
        "",
        "| code | units | of 5 tokens or fewer | holding a furniture line | furniture alone "
        "| words dropped |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        dropped = sum(r["dropped"].values())
        holding, alone = furnished(r["texts"], lines_of)
        lines.append(
            f"| {name} | {r['units']:,} | {r['short']:,} | {holding:,} | {alone:,} "
            f"| {dropped:,} |"
        )
    if a.baseline:
        more = results["working tree"]["dropped"] - results["baseline"]["dropped"]
        digits = sum(n for w, n in more.items() if w.isdigit())
        words = Counter({w: n for w, n in more.items() if not w.isdigit()})
        lines += [
            "",
            f"Newly dropped: {digits:,} numbers (page numbers and the numbers of running "
            f"heads) and {sum(words.values()):,} words, the most frequent: "
            + ", ".join(f"{w} {n}" for w, n in words.most_common(30)),
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        write_section(REPO / "docs" / "BENCHMARKS.md", TITLE, text, HEADER)


if __name__ == "__main__":
    main()
