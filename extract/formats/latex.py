"""LaTeX: pylatexenc's node tree, whose every node knows its source position.

Each ``.tex`` file is its own document, so cited lines always point into the file
that holds them; ``\\input``/``\\include`` targets are recorded (those that would
leave the indexed root are refused with a warning, never read).
"""

from __future__ import annotations

import posixpath
import re

from kbx.extract.model import CODE, PROSE, TABLE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder
from pylatexenc.latexwalker import (
    LatexCharsNode,
    LatexCommentNode,
    LatexEnvironmentNode,
    LatexGroupNode,
    LatexMacroNode,
    LatexMathNode,
    LatexSpecialsNode,
    LatexWalker,
)

_HEADINGS = {
    "part": 0,
    "chapter": 1,
    "section": 2,
    "subsection": 3,
    "subsubsection": 4,
    "paragraph": 5,
}
_DROP = {
    "label",
    "ref",
    "eqref",
    "pageref",
    "autoref",
    "cref",
    "Cref",
    "cite",
    "citep",
    "citet",
    "citealp",
    "nocite",
    "usepackage",
    "documentclass",
    "bibliographystyle",
    "bibliography",
    "newcommand",
    "renewcommand",
    "providecommand",
    "def",
    "includegraphics",
    "vspace",
    "hspace",
    "maketitle",
    "tableofcontents",
    "setlength",
    "addtolength",
    "thanks",
    "newenvironment",
    "graphicspath",
    "hypersetup",
    "pagestyle",
    "thispagestyle",
    "title",
    "author",
    "date",
    "input",
    "include",
    "affiliation",
    "email",
    "keywords",
}
_CODE_ENVS = {"verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "alltt"}
_SKIP_ENVS = {
    "equation",
    "equation*",
    "align",
    "align*",
    "displaymath",
    "eqnarray",
    "eqnarray*",
    "gather",
    "gather*",
    "multline",
    "multline*",
    "tikzpicture",
    "comment",
    "filecontents",
    "filecontents*",
}
_FLOATS = {"figure", "figure*", "table", "table*"}
_TABULAR = {"tabular", "tabular*", "tabularx", "longtable", "array"}
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def _args(node: LatexMacroNode) -> list:
    argd = getattr(node, "nodeargd", None)
    return [a for a in (argd.argnlist if argd else []) or [] if a is not None]


def node_text(nodes) -> str:
    """Plain text of a node list, for metadata and headings."""
    out = []
    for n in nodes or []:
        if isinstance(n, LatexCharsNode):
            out.append(n.chars)
        elif isinstance(n, LatexGroupNode):
            out.append(node_text(n.nodelist))
        elif isinstance(n, LatexMacroNode):
            if n.macroname == "and":
                out.append(", ")
            elif n.macroname not in _DROP and n.macroname != "today":
                out.append(node_text([a for a in _args(n) if isinstance(a, LatexGroupNode)]))
        elif isinstance(n, LatexSpecialsNode):
            out.append(" " if n.specials_chars in ("~", "&") else n.specials_chars)
    return " ".join("".join(out).split())


class _Walker:
    def __init__(self, table: LineTable, path: str):
        self.table = table
        self.path = path
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        self.b = TextBuilder(table)
        self.kind = PROSE
        self.meta: dict[str, str] = {}
        self.includes: list[str] = []
        self.warnings: list[str] = []

    def flush(self, kind: str | None = None) -> None:
        text = self.b.text()
        if text.strip():
            path = tuple(h for _, h in self.headings)
            self.blocks.append(Block(text, self.b.segments, kind or self.kind, path))
        self.b = TextBuilder(self.table)

    def walk(self, nodes) -> None:
        for n in nodes or []:
            if isinstance(n, LatexCharsNode):
                self.chars(n)
            elif isinstance(n, LatexGroupNode):
                self.walk(n.nodelist)
            elif isinstance(n, LatexMacroNode):
                self.macro(n)
            elif isinstance(n, LatexEnvironmentNode):
                self.environment(n)
            elif isinstance(n, LatexMathNode):
                if n.displaytype == "inline":
                    self.b.verbatim(self.table.text[n.pos : n.pos + n.len], n.pos)
            elif isinstance(n, LatexSpecialsNode):
                self.special(n)
            elif isinstance(n, LatexCommentNode):
                continue

    def chars(self, n: LatexCharsNode) -> None:
        pieces = _PARAGRAPH.split(n.chars)
        pos = 0
        for i, piece in enumerate(pieces):
            if i:
                self.flush()
            start = n.chars.find(piece, pos)
            pos = start + len(piece)
            self.b.flowing(piece, n.pos + start)

    def special(self, n: LatexSpecialsNode) -> None:
        ch = n.specials_chars
        if ch == "&" and self.kind == TABLE:
            self.b.synthetic(" | ", n.pos)
        elif ch in ("~", "&"):
            self.b.space()
        else:
            self.b.verbatim(ch, n.pos)

    def macro(self, n: LatexMacroNode) -> None:
        name = n.macroname
        groups = [a for a in _args(n) if isinstance(a, LatexGroupNode)]
        if name in ("title", "author", "date"):
            self.meta[name] = node_text(groups[-1:]) if groups else ""
        elif name in ("input", "include"):
            self.include(node_text(groups[-1:]))
        elif name in _HEADINGS and groups:
            self.flush()
            level = _HEADINGS[name]
            self.headings = [h for h in self.headings if h[0] < level]
            self.headings.append((level, node_text(groups[-1:])))
            self.walk(groups[-1:])
            self.flush(PROSE)
        elif name in ("item", "bibitem"):
            self.flush()
        elif name == "\\":
            self.flush() if self.kind == TABLE else self.b.space()
        elif name not in _DROP:
            self.walk(groups)

    def environment(self, n: LatexEnvironmentNode) -> None:
        name = n.environmentname
        if name in _CODE_ENVS:
            self.code(n)
        elif name in _SKIP_ENVS:
            return
        elif name in _FLOATS:
            for c in n.nodelist or []:
                if isinstance(c, LatexMacroNode) and c.macroname == "caption":
                    self.flush()
                    self.macro(c)
                elif isinstance(c, LatexEnvironmentNode) and c.environmentname in _TABULAR:
                    self.environment(c)
            self.flush()
        elif name in _TABULAR:
            self.flush()
            outer, self.kind = self.kind, TABLE
            self.walk(n.nodelist)
            self.flush()
            self.kind = outer
        elif name in ("abstract", "thebibliography"):
            self.flush()
            saved = self.headings
            self.headings = saved + [(9, "Abstract" if name == "abstract" else "References")]
            self.walk(n.nodelist)
            self.flush()
            self.headings = saved
        else:
            self.walk(n.nodelist)
            if name in ("itemize", "enumerate", "description"):
                self.flush()

    def code(self, n: LatexEnvironmentNode) -> None:
        src = self.table.text[n.pos : n.pos + n.len]
        first = src.find("\n")
        last = src.rfind("\\end")
        if first < 0 or last <= first:
            return
        self.flush()
        self.b.verbatim(src[first + 1 : last].rstrip("\n"), n.pos + first + 1)
        self.flush(CODE)

    def include(self, target: str) -> None:
        if not target:
            return
        if not target.endswith(".tex"):
            target += ".tex"
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(self.path), target))
        if joined.startswith("../") or joined == ".." or posixpath.isabs(target):
            self.warnings.append(f"\\input{{{target}}} leaves the indexed root; not followed")
        else:
            self.includes.append(joined)


def parse(
    text: str, original: str, encoding: str, path: str = ""
) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks and metadata of one LaTeX source."""
    table = LineTable(text, encoding, original)
    nodes, _, _ = LatexWalker(text, tolerant_parsing=True).get_latex_nodes()
    w = _Walker(table, path)
    document = next(
        (
            n
            for n in nodes
            if isinstance(n, LatexEnvironmentNode) and n.environmentname == "document"
        ),
        None,
    )
    if document is not None:  # the preamble holds only metadata and definitions
        for n in nodes:
            if isinstance(n, LatexMacroNode) and n.macroname in ("title", "author", "date"):
                w.macro(n)
        w.walk([document])
    else:
        w.walk(nodes)
    w.flush()
    authors = [a.strip() for a in w.meta.get("author", "").split(",") if a.strip()]
    fields: dict = {k: v for k, v in w.meta.items() if v}
    if w.includes:
        fields["includes"] = w.includes
    meta = Metadata(w.meta.get("title") or None, w.meta.get("date") or None, authors, fields)
    return w.blocks, meta, w.warnings
