"""LaTeX: pylatexenc's node tree, whose every node knows its source position.

Each ``.tex`` file is its own document, so cited lines always point into the file
that holds them; ``\\input``/``\\include`` targets are recorded (those that would
leave the indexed root are refused with a warning, never read). Accent, letter and
escape macros become the characters they typeset (pylatexenc's latex2text tables, NFC),
each mapped to its macro; metadata and headings are read by the same walker as the body.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata

from pylatexenc import latex2text, latexwalker
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec
from pylatexenc.latex2text._defaultspecs import unicode_accents_list
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
from pylatexenc.macrospec import MacroSpec

from kbx.extract.model import CODE, PROSE, TABLE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

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
    "today",  # latex2text would put the day kbx indexed the file
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


def _tie(node: LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    """``\\t{oo}``: the tie accent joins two letters, which pylatexenc has no spec for.
    (pylatexenc passes the converter by the name ``l2tobj``.)"""
    inner = l2tobj.nodelist_to_text(_args(node)).strip()
    return inner[:1] + "\u0361" + inner[1:]


# Arguments pylatexenc's walker does not know: the tie, and dropped macros whose
# argument would otherwise be read as text (an author's \thanks or \email).
_MORE_ARGS = {
    "t": "{",
    "thanks": "{",
    "email": "{",
    "affiliation": "[{",
    "nocite": "{",
    "pageref": "{",
    "bibliographystyle": "{",
    "pagestyle": "{",
    "thispagestyle": "{",
    "graphicspath": "{",
    "addtolength": "{{",
}
# Otherwise pylatexenc's own tables: the walker's argument specs and latex2text's
# replacements (accents combine and NFC-compose there); kbx adds \t and \SS, which it lacks.
_WALK_DB = latexwalker.get_default_latex_context_db()
_WALK_DB.add_context_category(
    "kbx", macros=[MacroSpec(n, a) for n, a in _MORE_ARGS.items()], prepend=True
)
_TEXT_DB = latex2text.get_default_latex_context_db()
_TEXT_DB.add_context_category(
    "kbx", macros=[MacroTextSpec("t", _tie), MacroTextSpec("SS", "SS")], prepend=True
)
_L2T = LatexNodes2Text(latex_context=_TEXT_DB)
_ACCENTS = {name for name, _ in unicode_accents_list} | {"t"}


def _clean(text: str) -> str:
    """NFC, so ``\\"o`` is the one code point ö that a search finds; soft hyphens go."""
    text = unicodedata.normalize("NFC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def resolve(node: LatexMacroNode) -> str | None:
    """The characters an accent, letter or escape macro stands for; None for other macros.

    Argument-less macros with a plain replacement (\\ss, \\$, \\dots) qualify, and
    \\% (latex2text's only callable one); a replacement that formats arguments does not.
    """
    name = node.macroname
    if name not in _ACCENTS:
        repl = getattr(_TEXT_DB.get_macro_spec(name), "simplify_repl", None)
        plain = isinstance(repl, str) and "%" not in repl
        if _args(node) or not (plain or name == "%"):
            return None
    return _clean(_L2T.macro_node_to_text(node))


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
        self.literal = False  # inside \\texttt, where -- and `` are typed as is

    def plain(self, nodes) -> str:
        """Text of ``nodes`` exactly as the body would read it, on one line (metadata,
        headings): one walker for both, so an author matches their name in the text."""
        sub = _Walker(self.table, self.path)
        sub.literal = self.literal
        sub.walk(nodes)
        sub.flush()
        return " ".join(" ".join(b.text for b in sub.blocks).split())

    def flush(self, kind: str | None = None) -> None:
        if self.b.text().strip():
            path = tuple(h for _, h in self.headings)
            self.blocks.append(Block.built(self.b, kind or self.kind, path))
        self.b = TextBuilder(self.table)
        if self.literal:  # a paragraph break inside \texttt: its code goes on
            self.b.open_code()

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
            self.b.cell(n.pos)
        elif ch in ("~", "&"):
            self.b.space()
        else:
            repl = getattr(_TEXT_DB.get_specials_spec(ch), "simplify_repl", None)
            if self.literal or not isinstance(repl, str):
                self.b.verbatim(ch, n.pos)
            else:  # -- ``  '' as the characters they typeset
                self.b.synthetic(_clean(repl), n.pos)

    def macro(self, n: LatexMacroNode) -> None:
        name = n.macroname
        groups = [a for a in _args(n) if isinstance(a, LatexGroupNode)]
        if name in ("title", "author", "date"):
            self.meta[name] = self.metadata(name, groups[-1]) if groups else ""
        elif name in ("input", "include"):
            self.include(self.inside(groups[-1]) if groups else "")
        elif name in _HEADINGS and groups:
            self.flush()
            level = _HEADINGS[name]
            self.headings = [h for h in self.headings if h[0] < level]
            self.headings.append((level, self.plain(groups[-1:])))
            self.walk(groups[-1:])
            self.flush(PROSE)
        elif name in ("item", "bibitem"):
            self.flush()
        elif name == "\\":
            self.flush() if self.kind == TABLE else self.b.space()
        elif name in _DROP:
            return
        elif (text := resolve(n)) is not None:
            if text.strip():
                self.b.synthetic(text, n.pos)  # every character maps to the macro
            elif text:
                self.b.space()
        elif name == "texttt":
            outer, self.literal = self.literal, True
            self.b.open_code()
            self.walk(groups)
            if not outer:
                self.b.close_code()
            self.literal = outer
        elif name == "verb":
            self.verb(n)
        else:
            self.walk(groups)

    def verb(self, n: LatexMacroNode) -> None:
        """``\\verb|x|``: the characters between the delimiters, as inline code."""
        argd = n.nodeargd
        text = getattr(argd, "verbatim_text", None)
        if text:
            close = argd.verbatim_delimiters[1]
            self.b.code(text, n.pos + n.len - len(close) - len(text))

    def inside(self, group: LatexGroupNode) -> str:
        """The source between a group's braces: a file name is not text to clean."""
        return self.table.text[group.pos + 1 : group.pos + group.len - 1].strip()

    def metadata(self, name: str, group: LatexGroupNode) -> str:
        """A \\title, \\author or \\date as the body would read it; authors split at \\and."""
        parts: list[list] = [[]]
        for c in group.nodelist or []:
            if name == "author" and isinstance(c, LatexMacroNode) and c.macroname == "and":
                parts.append([])
            else:
                parts[-1].append(c)
        return ", ".join(t for t in (self.plain(p) for p in parts) if t)

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
    nodes, _, _ = LatexWalker(text, latex_context=_WALK_DB, tolerant_parsing=True).get_latex_nodes()
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
