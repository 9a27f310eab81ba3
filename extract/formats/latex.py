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
from pylatexenc.macrospec import (
    EnvironmentSpec,
    MacroSpec,
    MacroStandardArgsParser,
    ParsedVerbatimArgs,
    VerbatimArgsParser,
)

from kbx.extract.model import CODE, PARTLY_AS_TEXT, PROSE, TABLE, Block, Metadata
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


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Logos: the word they typeset (their definitions are kerning, which is not text).
_LOGOS = {
    "TeX": "TeX",
    "LaTeX": "LaTeX",
    "LaTeXe": "LaTeX2e",
    "BibTeX": "BibTeX",
    "BibLaTeX": "BibLaTeX",
    "TL": "TeX Live",
    "TeXLive": "TeX Live",
    "XeTeX": "XeTeX",
    "XeLaTeX": "XeLaTeX",
    "LuaTeX": "LuaTeX",
    "LuaLaTeX": "LuaLaTeX",
    "pdfTeX": "pdfTeX",
    "pdfLaTeX": "pdfLaTeX",
    "ConTeXt": "ConTeXt",
    "MF": "Metafont",
    "MP": "MetaPost",
    "METAFONT": "METAFONT",
    "METAPOST": "MetaPost",
    "AmS": "AMS",
    "AMS": "AMS",
    "AmSTeX": "AMS-TeX",
    "AMSTeX": "AMS-TeX",
    "AmSLaTeX": "AMS-LaTeX",
    "eTeX": "e-TeX",
    "SliTeX": "SliTeX",
    "teTeX": "teTeX",
    "MiKTeX": "MiKTeX",
    "LyX": "LyX",
    "AllTeX": "(La)TeX",
    "Dash": "—",
    "slash": "/",
    "TeXXeT": "TeX--XeT",
    "OMEGA": "Omega",
    "ALEPH": "Aleph",
}
# Macros followed by a dimension or number (``\kern-.05em``, ``\parindent=0pt``): it is dropped.
_DIMEN_AFTER = _names(
    "kern mkern hskip vskip mskip lower raise moveleft moveright penalty hspace vspace "
    "parindent parskip baselineskip lineskip hsize vsize textwidth textheight linewidth "
    "columnwidth columnsep tabcolsep arraycolsep arrayrulewidth tolerance pretolerance "
    "hbadness vbadness hfuzz vfuzz emergencystretch leftskip rightskip parfillskip topsep "
    "itemsep parsep partopsep labelwidth labelsep leftmargin rightmargin unitlength jot "
    "fboxsep fboxrule baselinestretch abovedisplayskip belowdisplayskip looseness "
    "clubpenalty widowpenalty exhyphenpenalty hyphenpenalty interlinepenalty "
    "oddsidemargin evensidemargin topmargin headheight headsep footskip marginparwidth "
    "marginparsep marginparpush skip dimen count fontdimen"
)
_DIMEN = re.compile(
    r"\s*=?\s*[-+]?\s*(?:\d+(?:[.,]\d*)?|[.,]\d+)?\s*"
    r"(?:(?:true\s*)?(?:em|ex|pt|pc|in|cm|mm|bp|dd|cc|sp|mu|px|fil{1,3})\b)?"
    r"(?:\s*(?:plus|minus)\s*[-+]?\s*(?:\d+(?:[.,]\d*)?|[.,]\d+)?\s*"
    r"(?:em|ex|pt|pc|in|cm|mm|bp|dd|cc|sp|mu|px|fil{1,3})\b)*"
)
# Macros that typeset no text (switches, spacing, primitives): never read as their name.
_NO_TEXT = _names(
    "bf it sl sc tt rm sf em up md bfseries itshape slshape scshape ttfamily rmfamily "
    "sffamily mdseries upshape normalfont normalsize tiny scriptsize footnotesize small "
    "large Large LARGE huge Huge selectfont fontsize font usefont fontfamily fontseries "
    "fontshape fontencoding boldmath unboldmath mathversion "
    "par noindent indent leavevmode strut mathstrut null relax hfill hfil hss vfill vfil "
    "vss hrulefill dotfill newline linebreak nolinebreak pagebreak nopagebreak newpage "
    "clearpage cleardoublepage smallskip medskip bigskip smallbreak medbreak bigbreak "
    "centering raggedright raggedleft flushbottom raggedbottom onecolumn twocolumn "
    "nobreak allowbreak break unskip unpenalty protect fi else or let global long outer "
    "expandafter noexpand csname endcsname string number romannumeral the showthe "
    "advance multiply divide catcode lccode uccode sfcode mathcode delcode char chardef "
    "mathchardef countdef dimendef skipdef toksdef toks box setbox copy wd ht dp "
    "vbox vtop vcenter hrule vrule noalign omit span cr crcr halign valign hline cline "
    "toprule midrule bottomrule cmidrule addlinespace tabularnewline "
    "immediate write message typeout errmessage jobname endinput special mark "
    "aftergroup afterassignment begingroup endgroup bgroup egroup ignorespaces "
    "makeatletter makeatother nocorr sloppy fussy frenchspacing nonfrenchspacing "
    "displaystyle textstyle scriptstyle scriptscriptstyle left right middle big Big "
    "bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr limits nolimits "
    "appendix frontmatter mainmatter backmatter printbibliography printindex makeindex "
    "listoffigures listoftables footnotemark marginpar index glossary "
    "baselinestretch linespread arraystretch nointerlineskip offinterlineskip "
    "everypar everymath everydisplay everyhbox everyvbox everycr errorcontextlines "
    "tracingmacros tracingonline showbox showlists batchmode nonstopmode scrollmode "
    "dump end bye openin openout closein closeout read input inputlineno "
    "edef xdef gdef protected next getbuffer typebuffer NC NR NN HL VL FR MR LR SR AR"
)
_NO_TEXT_PREFIX = re.compile(
    r"(?:if|start|stop|setup|define|new|renew|provide|Declare|Provide|Require|Needs|"
    r"AtBegin|AtEnd|pdf|use|set|reset|add|make|end|begin|no|un|text|math)[A-Za-z@]*"
)


def _balanced(src: str) -> bool:
    """Braces balance in ``src`` (escaped ones and comments aside): TeX's own rule."""
    depth = 0
    for c in re.sub(r"\\\\|\\[{}%]|(?<!\\)%[^\n]*", "", src):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


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
    "caption": "[{",
}
# Otherwise pylatexenc's own tables: the walker's argument specs and latex2text's
# replacements (accents combine and NFC-compose there); kbx adds \t and \SS, which it lacks.


class _PathArgs(VerbatimArgsParser):
    """``\\path|x|`` and ``\\path{x}`` (the url package): their argument as typed, like
    ``\\verb``'s, between any delimiter or braces."""

    def __init__(self):
        super().__init__(verbatim_arg_type="verb-macro")

    def parse_args(self, w, pos, parsing_state=None):
        start = pos
        while start < len(w.s) and w.s[start].isspace():
            start += 1
        end = w.s.find("}", start) if w.s.startswith("{", start) else -1
        if end < 0:
            return super().parse_args(w, pos, parsing_state)
        node = w.make_node(
            LatexCharsNode,
            parsing_state=parsing_state,
            chars=w.s[start + 1 : end],
            pos=start + 1,
            len=end - start - 1,
        )
        argd = ParsedVerbatimArgs(verbatim_chars_node=node, verbatim_delimiters=("{", "}"))
        return argd, start, end + 1 - start


class _HrefArgs(_PathArgs):
    """``\\href{url}{text}``: the URL as typed (``%`` and ``#`` are literal there, as in
    ``\\url``), the text an ordinary argument; the URL's node is ``argd.url``."""

    def parse_args(self, w, pos, parsing_state=None):
        text = MacroStandardArgsParser("{")
        start = pos
        while start < len(w.s) and w.s[start].isspace():
            start += 1
        if not w.s.startswith("{", start) or w.s.find("}", start) < 0:
            return MacroStandardArgsParser("{{").parse_args(w, pos, parsing_state)
        url, upos, ulen = super().parse_args(w, pos, parsing_state)
        argd, tpos, tlen = text.parse_args(w, upos + ulen, parsing_state)
        argd.url = url.argnlist[0]
        return argd, upos, tpos + tlen - upos


class _VerbatimEnv(VerbatimArgsParser):
    """The body of a code environment (``alltt``, ``lstlisting``) as typed, to its
    ``\\end``, as pylatexenc reads ``verbatim``'s: a ``$`` in a listing opens no math."""

    def __init__(self, name: str):
        super().__init__(verbatim_arg_type="verbatim-environment")
        self.name = name

    def parse_args(self, w, pos, parsing_state=None):
        end = w.s.find(f"\\end{{{self.name}}}", pos)
        end = len(w.s) if end < 0 else end
        node = w.make_node(
            LatexCharsNode, parsing_state=parsing_state, chars=w.s[pos:end], pos=pos, len=end - pos
        )
        return ParsedVerbatimArgs(verbatim_chars_node=node), pos, end - pos


_WALK_DB = latexwalker.get_default_latex_context_db()
_WALK_DB.add_context_category(
    "kbx",
    macros=[MacroSpec(n, a) for n, a in _MORE_ARGS.items()]
    + [MacroSpec(n, args_parser=_PathArgs()) for n in ("path", "url")]
    + [MacroSpec("href", args_parser=_HrefArgs())],
    environments=[
        EnvironmentSpec(name, args_parser=_VerbatimEnv(name))
        for name in sorted(_CODE_ENVS | {"comment"})
    ],
    prepend=True,
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
    def __init__(self, table: LineTable, path: str, source: str | None = None):
        self.table = table
        self.source = table.text if source is None else source  # what pylatexenc parses
        self.path = path
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        self.b = TextBuilder(table)
        self.kind = PROSE
        self.meta: dict[str, str] = {}
        self.includes: list[str] = []
        self.warnings: list[str] = []
        self.literal = False  # inside \\texttt, where -- and `` are typed as is
        self.dimen = False  # the next characters may be a dimension (after \\kern)
        self.quoting = False  # in the argument of a macro kbx does not know (\\Cmd{\\setfoo})
        self.lost: list[tuple[int, str]] = []  # line and what, where the parser failed
        self.reparsed = 0  # characters parsed again after failures

    def plain(self, nodes) -> str:
        """Text of ``nodes`` exactly as the body would read it, on one line (metadata,
        headings): one walker for both, so an author matches their name in the text."""
        sub = _Walker(self.table, self.path, self.source)
        sub.literal = self.literal
        sub.walk(nodes)
        sub.flush()
        self.lost += sub.lost
        return " ".join(" ".join(b.text for b in sub.blocks).split())

    def flush(self, kind: str | None = None) -> None:
        if self.b.text().strip():
            path = tuple(h for _, h in self.headings)
            self.blocks.append(Block.built(self.b, kind or self.kind, path))
        self.b = TextBuilder(self.table)
        if self.literal:  # a paragraph break inside \texttt: its code goes on
            self.b.open_code()

    def walk(self, nodes) -> None:
        nodes = nodes or []
        quoted = False  # the node before is a macro kbx does not know, with no argument
        for i, n in enumerate(nodes):
            dimen, self.dimen = self.dimen, False
            if isinstance(n, LatexCharsNode):
                self.chars(n, dimen)
            elif isinstance(n, LatexGroupNode):
                outer, self.quoting = self.quoting, self.quoting or quoted
                self.walk(n.nodelist)
                self.quoting = outer
            elif isinstance(n, LatexMacroNode):
                if dimen and not _args(n) and n.macroname.isalpha():
                    continue  # a register as the dimension: \\hskip\\parindent
                if (quoted or self.quoting) and self.named(n):
                    continue
                after = nodes[i + 1] if i + 1 < len(nodes) else None
                self.macro(n, isinstance(after, LatexGroupNode) and bool(after.nodelist))
            elif isinstance(n, LatexEnvironmentNode):
                self.environment(n)
            elif isinstance(n, LatexMathNode):
                if self.broken_math(n):
                    continue
                if n.displaytype == "inline":
                    self.b.verbatim(self.table.text[n.pos : n.pos + n.len], n.pos)
            elif isinstance(n, LatexSpecialsNode):
                self.special(n)
            elif isinstance(n, LatexCommentNode):
                continue
            quoted = isinstance(n, LatexMacroNode) and not _args(n) and self.unknown(n.macroname)

    def named(self, n: LatexMacroNode) -> bool:
        """A setup macro's name where a documentation macro kbx does not know quotes it
        (``\\Cmd\\setmainlanguage``, ``\\cmd{\\newfoo}``): the manual's subject, printed as
        its name; the same macro alone is setup and typesets nothing. Whether it did."""
        name = n.macroname
        if _args(n) or not (name.isalpha() and len(name) > 1 and _NO_TEXT_PREFIX.fullmatch(name)):
            return False
        self.b.space()
        self.b.verbatim(name, n.pos + 1)
        self.b.space()
        return True

    def broken_math(self, n: LatexMathNode) -> bool:
        """Math that TeX itself would refuse (unclosed, across a blank line, braces that
        do not balance) is where the parser went wrong: a ``$`` typed as a character, a
        ``\\[`` that a package made a unit macro. Read again from after its opening."""
        src = self.table.text[n.pos : n.pos + n.len]
        opening, closing = n.delimiters
        closed = len(src) >= len(opening) + len(closing) and src.endswith(closing)
        if closed and not _PARAGRAPH.search(src) and _balanced(src):
            return False
        self.reread(n.pos, n.pos + len(opening), n.pos + n.len, f"unclosed {opening}")
        return True

    def broken_group(self, group) -> bool:
        """A macro's argument whose closing brace never came (it runs to the end of the
        file): dropped, or taken whole as a heading, it would take the rest along."""
        opening, closing = group.delimiters or ("", "")
        if not closing or self.table.text[: group.pos + group.len].endswith(closing):
            return False
        end = group.pos + group.len
        self.reread(group.pos, group.pos + len(opening), end, "unclosed argument")
        return True

    def reread(self, pos: int, resume: int, end: int, what: str) -> None:
        """Where the parser failed at ``pos``: the opening up to ``resume`` as plain text,
        and the source it swallowed, to ``end``, parsed again on its own (a prefix of the
        file, so positions hold). Past ``MAX_RECOVERIES`` failures, or once the parts parsed
        again add up to ``MAX_REPARSED`` times the file, read as plain text."""
        self.lost.append((self.table.where(pos)[0], what))
        self.b.verbatim(self.table.text[pos:resume], pos)
        text = self.source[:end]
        self.reparsed += end - resume
        budget = MAX_REPARSED * len(self.table.text) + 65536
        if len(self.lost) > MAX_RECOVERIES or self.reparsed > budget:
            self.chars(LatexCharsNode(chars=text[resume:], pos=resume, len=end - resume))
            return
        walker = LatexWalker(text, latex_context=_WALK_DB, tolerant_parsing=True)
        self.walk(walker.get_latex_nodes(pos=resume)[0])

    def chars(self, n: LatexCharsNode, dimen: bool = False) -> None:
        chars = self.table.text[n.pos : n.pos + n.len]  # the source's, not the parser's
        at = _DIMEN.match(chars).end() if dimen else 0  # \\kern-.05em: no text
        pieces = _PARAGRAPH.split(chars[at:])
        pos = at
        for i, piece in enumerate(pieces):
            if i:
                self.flush()
            start = chars.find(piece, pos)
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

    def macro(self, n: LatexMacroNode, followed: bool = False) -> None:
        """One macro; ``followed``: a ``{group}`` comes next (an unknown macro's argument)."""
        name = n.macroname
        groups = [a for a in _args(n) if isinstance(a, LatexGroupNode)]
        if any(self.broken_group(g) for g in groups):
            return
        if name in _LOGOS and not groups:
            self.logo(n)
        elif name in _DIMEN_AFTER and not groups:
            self.dimen = True
        elif name in ("title", "author", "date"):
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
        elif name in ("verb", "path"):
            self.verb(n)
        elif name in ("url", "href"):
            self.url(n)
        elif name == "space":
            self.b.space()
        elif groups or followed or not self.unknown(name):
            self.walk(groups)
        else:  # \\CTAN, \\KPS: a macro kbx does not know, that typesets a word
            self.b.space()
            self.b.verbatim(name, n.pos + 1)
            self.b.space()

    def unknown(self, name: str) -> bool:
        """A macro that neither pylatexenc nor kbx knows as typesetting no text."""
        return (
            len(name) > 1
            and name.isalpha()
            and name not in _NO_TEXT
            and not _NO_TEXT_PREFIX.fullmatch(name)
            and _TEXT_DB.get_macro_spec(name) is None
            and _WALK_DB.get_macro_spec(name) is None
        )

    def logo(self, n: LatexMacroNode) -> None:
        """``\\BibTeX``: the word, mapped to the macro's name where it spells the word."""
        word = _LOGOS[n.macroname]
        if word == n.macroname:
            self.b.verbatim(word, n.pos + 1)
        else:
            self.b.synthetic(word, n.pos)
        if n.macro_post_space:  # TeX eats it, but \\xspace and most authors mean a space
            self.b.space()

    def verb(self, n: LatexMacroNode) -> None:
        """``\\verb|x|``: the characters between the delimiters, as inline code."""
        argd = n.nodeargd
        text = getattr(argd, "verbatim_text", None)
        if text:
            close = argd.verbatim_delimiters[1]
            self.b.code(text, n.pos + n.len - len(close) - len(text))

    def url(self, n: LatexMacroNode) -> None:
        """``\\url{x}``, ``\\href{x}{text}``: the URL as typed, as text; then the link text."""
        argd = n.nodeargd
        if isinstance(argd, ParsedVerbatimArgs):  # \\url
            self.b.verbatim(argd.verbatim_text, argd.argnlist[0].pos)
            return
        if (url := getattr(argd, "url", None)) is not None:  # \\href
            self.b.verbatim(url.chars, url.pos)
            self.b.space()
        self.walk([a for a in _args(n) if isinstance(a, LatexGroupNode)])

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
        if name in _CODE_ENVS or name in _SKIP_ENVS or name in _FLOATS:
            src = self.table.text[n.pos : n.pos + n.len]
            if not re.search(r"\\end\s*\{" + re.escape(name) + r"\}\s*$", src):
                head = re.match(r"\\begin\s*\{[^}]*\}", src)
                resume = n.pos + (head.end() if head else len("\\begin"))
                self.reread(n.pos, resume, n.pos + n.len, f"unclosed environment {name}")
                return
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


MAX_RECOVERIES = 100  # parser failures in one file before its rest is read as plain text
MAX_REPARSED = 3  # how many times its own length a file may be parsed again after failures


def _walk_file(w: _Walker, nodes: list) -> None:
    """Walk a whole file's nodes: its document environment, if any, and the metadata
    of the preamble (which otherwise holds only definitions)."""
    document = next(
        (
            n
            for n in nodes
            if isinstance(n, LatexEnvironmentNode) and n.environmentname == "document"
        ),
        None,
    )
    if document is not None:
        for n in nodes:
            if isinstance(n, LatexMacroNode) and n.macroname in ("title", "author", "date"):
                w.macro(n)
        w.walk([document])
    else:
        w.walk(nodes)


_SCAN = re.compile(
    r"(?P<skip>\\verb\*?([^\sA-Za-z*])[^\n]*?\2|\\(?:path|url)(?:\|[^|\n]*\||\{[^}\n]*\})"
    r"|\\href\s*\{[^}\n]*\}"
    r"|\\begin\{(verbatim\*?|alltt|lstlisting|minted|Verbatim|comment)\}.*?\\end\{\3\}"
    r"|\\[^\[\]()]|%[^\n]*)"
    r"|(?P<tok>\\[\[\]()]|\$\$|\$|\{|\}|\n[ \t]*\n)",
    re.DOTALL,
)
_CLOSES = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}


def _unclosed_math(text: str) -> tuple[str, list[tuple[int, str]]]:
    """``text`` with each math opener TeX would not close turned into plain text for the
    parser, and where those were: a ``$`` whose math meets a blank line or the ``}`` of the
    group it opened in (``\\dirname{$HOME}``), a ``\\[`` that no ``\\]`` closes before a
    blank line (a style made it a unit macro: ``32\\[pt]``). pylatexenc would open math
    there that swallows paragraphs, often to the end of the file, and parsing again after
    each of a manual's dozens would cost a parse of the rest each. A ``$`` becomes a
    character the parser reads as text (the walker takes characters from the source), a
    ``\\[`` the macro ``\\?``, which typesets nothing: same length, so positions hold."""
    if "$" not in text and "\\[" not in text and "\\(" not in text:
        return text, []
    unclosed: list[tuple[int, str]] = []
    math: tuple[str, int, int] | None = None  # opener, where, brace depth there
    depth = 0
    for m in _SCAN.finditer(text):
        t = m.group("tok")
        if t is None:
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            if math is not None and depth == math[2]:
                unclosed.append(math[:2])
                math = None
            depth = max(depth - 1, 0)
        elif t[0] == "\n":
            if math is not None:
                unclosed.append(math[:2])
                math = None
        elif math is None:
            if t in _CLOSES:
                math = (t, m.start(), depth)
        elif t == _CLOSES[math[0]]:
            math = None
        elif math[0] == "$" and t == "$$":  # $a$$b$: one closes, one opens
            math = ("$", m.start() + 1, depth)
        elif t in ("\\[", "\\("):  # math does not nest: the one open never closed
            unclosed.append(math[:2])
            math = (t, m.start(), depth)
    if math is not None:
        unclosed.append(math[:2])
    if not unclosed:
        return text, []
    chars = list(text)
    for opener, pos in unclosed:
        if opener.startswith("$"):
            chars[pos : pos + len(opener)] = "\x1a" * len(opener)
        else:
            chars[pos + 1] = "?"
    return "".join(chars), [(pos, f"unclosed {opener}") for opener, pos in unclosed]


def _lost_warning(lost: list[tuple[int, str]]) -> str:
    """The warning of a file the parser failed on in places, each read as plain text."""
    shown = ", ".join(f"line {line} ({what})" for line, what in lost[:5])
    more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
    return f"{PARTLY_AS_TEXT}: the LaTeX parser failed at {shown}{more}"


def parse(
    text: str, original: str, encoding: str, path: str = ""
) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks and metadata of one LaTeX source."""
    table = LineTable(text, encoding, original)
    source, unclosed = _unclosed_math(text)
    w = _Walker(table, path, source)
    w.lost = [(table.where(pos)[0], what) for pos, what in unclosed]
    nodes = LatexWalker(source, latex_context=_WALK_DB, tolerant_parsing=True).get_latex_nodes()[0]
    _walk_file(w, nodes)
    w.flush()
    if w.lost:
        w.warnings.append(_lost_warning(w.lost))
    # "A and B" as BibTeX reads it: two authors, like "A \\and B"
    names = re.split(r",|\s+and\s+", w.meta.get("author", ""))
    authors = [a.strip() for a in names if a.strip()]
    fields: dict = {k: v for k, v in w.meta.items() if v}
    if w.includes:
        fields["includes"] = w.includes
    meta = Metadata(w.meta.get("title") or None, w.meta.get("date") or None, authors, fields)
    return w.blocks, meta, w.warnings
