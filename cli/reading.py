"""``kbx search``, ``kbx grep``, ``kbx read`` and ``kbx mentions``: the commands that read
passages, each generated from its definition (``kbx.options``) and printed by one text
presenter and one JSON presenter."""

from __future__ import annotations

import sys

from kbx import api
from kbx.cli.common import emit_json, err, escape, out
from kbx.cli.define import command


def _write(lines: list[str]) -> None:
    sys.stdout.write("".join(f"{line}\n" for line in lines))


@command(api.COMMANDS["search"])
def search(o: api.SearchOptions, *, db=None, as_json: bool = False) -> None:
    """Find the passages that best match QUERY, each cited by file and lines.

    Lean text, for an agent's context: passages grouped by file, best file first, under
    the file's path and hash (to pass to `kbx read --hash`); each passage shows its line
    range, the part of its heading path not shown just above, and a snippet with matches
    marked **like this**. Below, exact matches of the whole query as a phrase (see `kbx
    grep`). --json adds each passage's score, terms covered and whole text, and the facets.

    Examples:

      kbx search "supplier approval"

      kbx read notes/cedar.md:40-58 --hash 3f9a1c0b2d4e   (then read what it cites)

      kbx search "tls handshake" -k 3 --path "security/*" --json

      kbx search "supplier approval" --entity Q312 --after 2021 --facets

      kbx search openssl --meta category=vulnerability --after 2023 --date-from document

      kbx search "memory limit" --quantity "size<=4GB" --quantity "time>30s" --facets

      kbx search "Einstellungen" --lang de
    """
    if not as_json:  # the text's own defaults: fewer passages, one exact match
        o.k = api.present.K_TEXT if o.k is None else o.k
        o.exact = api.present.EXACT_TEXT if o.exact is None else o.exact
    o.facets = bool(o.facets) or as_json
    r = api.perform(api.Index.find(db), o)
    if as_json:
        emit_json(api.to_json("search", r))
        return
    shown = api.to_json("search", r)
    _write(api.present.search(shown, o.snippet, o.exact or 0, o.full))
    for note in api.present.notes(shown):
        err.print(note, markup=False)


@command(api.COMMANDS["grep"])
def grep(o: api.GrepOptions, *, db=None, as_json: bool = False) -> None:
    r"""Match a regular expression against the clean text, cited at original lines.

    Markup is gone from the clean text, so a phrase split by **bold**, a link or a
    line break still matches. Files are visited in order of relevance (BM25 of
    --rank, default the pattern's words), so the best matches come first; a closing
    line says how many matches in how many files were left out. A passage that several
    files share is shown once, with the other files after it (as `kbx search` does).
    A pattern that runs past --timeout (one that backtracks without end, such as
    "(a|aa)+$") stops with an error rather than running on.

    Examples:

      kbx grep "ERR_\d{4}"

      kbx grep "seL4" --rank "verified microkernel" -C 2

      kbx grep -i "supplier approval" --json

      kbx grep "CVE-2026-\d+" --meta category=release --after 2026

      kbx grep "heap" --quantity "size>=1GB"

      kbx grep '<\S+@\S+>' --author "Jordi Mallach" --after 2022 --before 2022
    """
    g = api.perform(api.Index.find(db), o)
    if as_json:
        emit_json(api.to_json("grep", g))
        return
    _write(api.present.grep(api.to_json("grep", g)))


@command(api.COMMANDS["read"])
def read(o: api.ReadOptions, *, db=None, as_json: bool = False) -> None:
    """Print original lines of an indexed file, as a search result cites them.

    With --hash, warn when the file has changed since it was indexed (its lines may
    have moved); a hash that is no file's hash the index holds is refused. For a PDF,
    lines are those of its extracted text, pages separated by a form-feed line. Paths
    outside the indexed root are refused.

    Examples:

      kbx read notes/cedar.md:40-58 --hash 3f9a1c0b2d4e

      kbx read papers/report.pdf:1-20 -n
    """
    x = api.to_json("read", api.perform(api.Index.find(db), o))
    if x["changed"]:
        err.print(f"[yellow]warning:[/] {escape(api.present.changed(x))}")
    if as_json:
        emit_json(x)
        return
    _write(api.present.read(x, numbered=o.line_numbers, cited=False))


@command(api.COMMANDS["mentions"])
def mentions(o: api.MentionsOptions, *, db=None, as_json: bool = False) -> None:
    """List what the recognizers found in a document, at its original lines.

    Each mention shows its line, exact text, type, normalized value, confidence, and
    the recognizer and version that made it.

    Examples:

      kbx mentions notes/reading-list.md

      kbx mentions papers/sel4-evaluation.tex:1-40 --type DOI --json
    """
    rows = api.perform(api.Index.find(db), o)
    if as_json:
        emit_json({"spec": o.spec} | api.to_json("mentions", rows))
        return
    for m in rows:
        out.print(
            f"{m.path}:{m.line}  {m.type:<7} {m.text}  → {m.value}  "
            f"({m.confidence:.2f}, {m.recognizer} {m.version})",
            markup=False,
        )
    if not rows:
        out.print("no mentions", markup=False)
