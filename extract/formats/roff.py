"""Manual pages in roff: the man(7) and mdoc(7) macros read for their words, not typeset.

A page is read line by line as groff reads it in nroff mode (``man`` on a terminal):
requests and escapes are dropped or become the characters they print, each character
mapped to the source line it came from; ``.SH``/``.Sh`` and ``.SS``/``.Ss`` open sections,
so a passage never crosses one and is cited to it. What only defines or decides (``.de``,
``.ds``, ``.nr``, conditionals) is evaluated as far as needed to expand the page's strings
and to leave the branches troff alone would print, and never printed itself. A file with a
man section's suffix that holds no request (a rotated ``syslog.1``) is plain text.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from kbx.extract.formats import text as plain
from kbx.extract.model import CODE, PARTLY_AS_TEXT, PROSE, TABLE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder
from kbx.wordchars import CJK

# A man section's suffix: ``.1``-``.9``, maybe with letters as Debian and Perl add them
# (``.3pm``, ``.7ssl``, ``.3tcl``, ``.1p``); Tcl's upstream ``.n`` collides with too much.
SUFFIX = re.compile(r"\.[1-9](?:[a-z][a-z0-9]{0,9})?")
# A request line among a file's first lines: what tells a page from a log named ``x.1``.
_REQUEST = re.compile(
    r"^[.'][ \t]*(?:\\[\"#]|(?:TH|SH|Dd|Dt|Os|Sh|so|de|ds|nr|ig|if|ie|IX|PP|TP|Nm|Nd|lf|mso"
    r"|nh|ad|na|hy|ft|ll|in|EQ|TS|rm|tr|ss|sp|br|nf|fi|B|I|BR)(?:[ \t]|$))",
    re.M,
)
_NAME = re.compile(r"[.'][ \t]*([^\s\\]*)")
_SNIFF_LINES = 30
_CJK = re.compile(f"[{CJK}]")
_SIZE = re.compile(r"[+-]?(?:\(\d\d|\[[^\]]*\]|'[^']*'|[1-3]\d|\d)?")
# A tbl table's options (``allbox tab(:);``) or format line (``lb l.``): not its data.
_TBL_FORMAT = re.compile(r".*;\s*|[lrcnasLRCNAS^_=|\s.,()0-9bBiIfFtTuUeEzZwWpPvVdDxX-]*")
_GLUE = "\x01"  # ``\c``: the next line's words follow with no space
_SPACE = "\x02"  # an unbreakable space escape (``\ ``, ``\~``)
_MAX_DEPTH = 8  # strings that expand strings, nested at most this deep


def _words(words: str) -> list[str]:
    return words.split()


# Named characters (``\(xx``, ``\[xx]``): the common ones; accented letters and Greek by rule.
_CHARS = dict(
    zip(
        _words(
            "em en hy mi aq dq lq rq oq cq Bq bq bu co rg tm de ga ha ti rs sl ba br ul pl eq "
            "mu di +- fm sd ps sc Do Eu Po Ye ct r! r? ss ae AE o/ O/ <- -> <= >= != == ** "
            "Fo Fc fo fc lA rA la ra Ye OK at sh"
        ),
        _words(
            "— – - - ' \" “ ” ‘ ’ „ ‚ • © ® ™ ° ` ^ ~ \\ / | | _ + = × ÷ ± ′ ″ ¶ § $ € £ ¥ ¢ "
            "¡ ¿ ß æ Æ ø Ø ← → ≤ ≥ ≠ ≡ * « » ‹ › ⇐ ⇒ ⟨ ⟩ ¥ ✓ @ #"
        ),
        strict=True,
    )
)
_ACCENTS = {"'": "\u0301", "`": "\u0300", ":": "\u0308", "^": "\u0302", "~": "\u0303",
            ",": "\u0327", "o": "\u030a", "v": "\u030c"}  # fmt: skip
_GREEK = dict(zip("abgdezyhiklmncoprstufxqw", "αβγδεζηθικλμνξοπρστυφχψω", strict=True))
# Strings every page may use (``\*(lq``), and pod2man's, which it defines under conditions.
_STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™", "Aq": "'", "q": '"', ".T": "utf8",
            "C+": "C++",  # pod2man's from here
            'L"': "“", 'R"': "”", "C'": "'", "C`": "'", "--": "—", "PI": "π",
            "Am": "&", "Gt": ">", "Lt": "<", "Ba": "|", "Le": "≤", "Ge": "≥", "Ne": "≠",  # mdoc's
            "Pm": "±", "If": "∞", "Na": "NaN", "Lq": "“", "Rq": "”", "Pi": "π"}  # fmt: skip


def is_page(text: str) -> bool:
    """A request among the first lines: a page, not a text that only bears a page's suffix."""
    head = "\n".join(text.lstrip("\ufeff").split("\n", _SNIFF_LINES)[:_SNIFF_LINES])
    return _REQUEST.search(head) is not None


def _char(name: str) -> str:
    """The character a ``\\(xx``/``\\[name]`` names; unknown ones print nothing."""
    if name in _CHARS:
        return _CHARS[name]
    if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}(?:_[0-9A-Fa-f]{4,6})*", name):
        cps = [int(c, 16) for c in name[1:].split("_")]
        if all(c < 0x110000 and not 0xD800 <= c < 0xE000 for c in cps):
            return unicodedata.normalize("NFC", "".join(map(chr, cps)))
        return ""
    if name.startswith("char") and name[4:].isdigit() and int(name[4:]) < 256:
        return chr(int(name[4:]))
    if len(name) == 2 and name[0] in _ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ACCENTS[name[0]])
    if len(name) == 2 and name[0] == "*" and name[1].lower() in _GREEK:
        letter = _GREEK[name[1].lower()]
        return letter.upper() if name[1].isupper() else letter
    return ""


def _name(s: str, j: int) -> tuple[str, int]:
    """An escape's name at ``s[j]``: one character, ``(xx``, or ``[long]``."""
    if j >= len(s):
        return "", j
    if s[j] == "(":
        return s[j + 1 : j + 3], min(j + 3, len(s))
    if s[j] == "[":
        k = s.find("]", j)
        return (s[j + 1 :], len(s)) if k < 0 else (s[j + 1 : k], k + 1)
    return s[j], j + 1


def _delimited(s: str, j: int) -> tuple[str, int]:
    """An escape's argument between two of the character at ``s[j]`` (``\\h'1n'``)."""
    if j >= len(s):
        return "", j
    k = s.find(s[j], j + 1)
    return (s[j + 1 :], len(s)) if k < 0 else (s[j + 1 : k], k + 1)


def _uncommented(s: str) -> str:
    """``s`` up to its comment (``\\"`` or ``\\#``), escaped backslashes skipped."""
    i = s.find("\\")
    while 0 <= i < len(s) - 1:
        if s[i + 1] in '"#':
            return s[:i]
        i = s.find("\\", i + 2)
    return s


def _args(s: str, i: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` of each argument of a request from ``s[i]``: words, or quoted."""
    out, n = [], len(s)
    while i < n:
        while i < n and s[i] in " \t":
            i += 1
        if i >= n:
            break
        quoted = s[i] == '"'
        j = i + 1 if quoted else i
        while j < n and (s[j] != '"' if quoted else s[j] not in " \t"):
            if quoted and s.startswith('""', j):
                j += 1  # "" inside quotes is one quote
            j += 2 if s[j] == "\\" else 1
        j = min(j, n)
        out.append((i + 1, j) if quoted else (i, j))
        i = j + 1 if quoted else j
    return out


@dataclass
class _Line:
    """One logical input line (lines ended by ``\\`` joined) and where its parts lie."""

    text: str
    starts: list[int]  # where each joined physical line begins in ``text``
    offsets: list[int]  # and in the source

    def at(self, i: int) -> int:
        k = bisect_right(self.starts, i) - 1
        return self.offsets[k] + i - self.starts[k]

    def runs(self, a: int, b: int) -> list[tuple[int, int]]:
        """``[a, b)`` cut where a joined line begins: each run lies on one source line."""
        cuts = [s for s in self.starts if a < s < b]
        edges = [a, *cuts, b]
        return list(zip(edges, edges[1:], strict=False))


def _lines(text: str) -> list[_Line]:
    out, starts, offsets, parts, at = [], [], [], [], 0
    for raw in text.split("\n"):
        joined = (len(raw) - len(raw.rstrip("\\"))) % 2 == 1
        starts.append(sum(map(len, parts)))
        offsets.append(at)
        parts.append(raw[:-1] if joined else raw)
        at += len(raw) + 1
        if not joined:
            out.append(_Line("".join(parts), starts, offsets))
            starts, offsets, parts = [], [], []
    if parts:
        out.append(_Line("".join(parts), starts, offsets))
    return out


Piece = tuple[str, int, bool]  # text, source offset, copied verbatim from there
_CLOSE = frozenset(".,:;)]?!")
_OPEN = frozenset("([")
_ENCLOSE = {"Op": "[]", "Dq": "“”", "Sq": "‘’", "Ql": "‘’", "Pq": "()", "Bq": "[]",
            "Brq": "{}", "Aq": "⟨⟩", "Qq": '""'}  # fmt: skip
_OPENER = {"Oo": "[", "Do": "“", "So": "‘", "Po": "(", "Bo": "[", "Bro": "{", "Ao": "⟨",
           "Qo": '"'}  # fmt: skip
_CLOSER = {"Oc": "]", "Dc": "”", "Sc": "’", "Pc": ")", "Bc": "]", "Brc": "}", "Ac": "⟩",
           "Qc": '"'}  # fmt: skip
_SYSTEMS = {"Bx": "BSD", "Bsx": "BSD/OS", "Fx": "FreeBSD", "Nx": "NetBSD", "Ox": "OpenBSD",
            "Dx": "DragonFly", "At": "AT&T UNIX", "Ux": "UNIX"}  # fmt: skip
_STANDARDS = {"-p1003.1": "IEEE Std 1003.1 (“POSIX.1”)", "-ansiC": "ANSI X3.159-1989",
              "-isoC": "ISO/IEC 9899:1990 (“ISO C90”)", "-isoC-99": "ISO/IEC 9899:1999",
              "-susv2": "Version 2 of the Single UNIX Specification",
              "-susv3": "Version 3 of the Single UNIX Specification",
              "-susv4": "Version 4 of the Single UNIX Specification",
              "-xpg4": "X/Open Portability Guide Issue 4"}  # fmt: skip
_CALLABLE = (
    frozenset(
        _words(
            "Ad An Ap Ar At Bsx Bx Cd Cm Dv Dx Em Er Ev Fa Fl Fn Ft Fx Ic Li Lk Ms Mt Nm No Ns Nx "
            "Ox Pa Pf Sx Sy Tn Ux Va Vt Xr St Ta In Fr Ot Lb Fo Fc Fd"
        )
    )
    | set(_ENCLOSE)
    | set(_OPENER)
    | set(_CLOSER)
    | {"Eo", "Ec"}
)
# man(7) macros that only set type or space: their arguments, if any, are not text.
_SILENT = frozenset(
    _words(
        "RS RE in ad na hy nh ne ft ps ta ti ll pl vs ls cs ss ul cu ce bp fl mk rt pc lt tl "
        "DT PD UC AT IX hw cc ec eo lf pso mso ch wh it em blm lsm nm nn ev po kern fam fschar "
        "Os Bk Ek Bf Ef Sm Db Ud Hf Vb Ve Sp TS TE T& EQ EN PS PE ig de de1 am ami dei ds ds1 as "
        "nr rr rm rn als tr so if ie el"
    )
)
_BREAK = frozenset(_words("PP LP P HP TP TQ sp br Pp Lp Bl El Rs Re Sp"))
_ALTERNATE = {"BR", "BI", "IB", "IR", "RB", "RI"}
_FONT = {"B", "I", "SM", "SB", "R"}


class _Reader:
    """The walk over one page's lines: its state, the blocks made so far."""

    def __init__(self, table: LineTable):
        self.table = table
        self.b = TextBuilder(table)
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        self.heading_next = 0  # a bare .SH: the next line is its title, at this level
        self.kind = PROSE
        self.fill = True
        self.glue = False  # the next words join the last with no space
        self.strings: dict[str, str] = {}
        self.registers: dict[str, int] = {".g": 1}
        self.macros: set[str] = set()  # defined by the page: their arguments are text
        self.skip_to: str | None = None  # the end of a .de or .ig body
        self.blocks_open: list[bool] = []  # each open \{: whether its body is read
        self.ie: list[bool] = []  # conditions of .ie, for their .el
        self.tbl: str | None = None  # in a .TS table: "format" or "data"
        self.tab = "\t"
        self.cell_text = False  # inside a table's T{ ... T}
        self.name: str | None = None  # mdoc's .Nm
        self.fo = -1  # arguments given to an open mdoc .Fo
        self.meta = Metadata()
        self.warnings: list[str] = []

    # -- output ------------------------------------------------------------------------

    def flush(self) -> None:
        if self.b.text().strip():
            path = tuple(h for _, h in self.headings)
            self.blocks.append(Block.built(self.b, self.kind, path))
        self.b = TextBuilder(self.table)
        self.glue = False

    def emit(self, pieces: list[Piece], sep: bool = True) -> None:
        """Add ``pieces``, after a space where ``sep`` asks and no ``\\c`` or CJK joins."""
        pieces = [p for p in pieces if p[0]]
        if not pieces:
            return
        b, first = self.b, pieces[0][0]
        if self.fill and sep and not self.glue and b.length:
            last = b.parts[-1][-1:]
            if not (_CJK.match(last) and _CJK.match(first[:1])):
                b.space()
        self.glue = False
        for text, at, verbatim in pieces:
            if text == _GLUE:
                self.glue = True
            elif text == _SPACE:
                b.space() if self.fill else b.synthetic(" ", at)
            elif verbatim:
                b.flowing(text, at) if self.fill else b.verbatim(text, at)
            else:
                b.synthetic(text, at)

    def word(self, text: str, at: int, glue_before: bool = False, glue_after: bool = False) -> None:
        if glue_before:
            self.glue = True
        self.emit([(text, at, False)])
        self.glue = glue_after

    def heading(self, level: int, pieces: list[Piece]) -> None:
        self.flush()
        words = (" " if p[0] == _SPACE else p[0] for p in pieces if p[0] != _GLUE)
        title = " ".join("".join(words).split())
        self.heading_next = 0
        if not title:
            return
        self.headings = [h for h in self.headings if h[0] < level] + [(level, title)]
        self.emit(pieces)
        self.flush()

    # -- escapes -------------------------------------------------------------------------

    def expand(self, s: str, a: int, b: int, where: _Line | int, depth: int = 0) -> list[Piece]:
        """The pieces ``s[a:b]`` prints: plain runs copied (where ``where`` is the line
        they lie on), escapes as the characters they print at the escape's place."""
        out: list[Piece] = []
        i = a
        while i < b:
            k = s.find("\\", i, b)
            end = b if k < 0 else k
            if end > i:
                if isinstance(where, int):
                    out.append((s[i:end], where, False))
                else:
                    out += [(s[p:q], where.at(p), True) for p, q in where.runs(i, end)]
            if k < 0:
                break
            at = where if isinstance(where, int) else where.at(k)
            i, text = self.escape(s, k, b, at, depth)
            if isinstance(text, list):
                out += text
            elif text:
                out.append((text, at, False))
        return out

    def escape(self, s: str, k: int, b: int, at: int, depth: int) -> tuple[int, str | list]:
        """Where the escape at ``s[k]`` ends, and what it prints."""
        if k + 1 >= b:
            return b, ""
        c, j = s[k + 1], k + 2
        if c in '"#':
            return b, ""
        if c in "fFgkmMVY$":
            return _name(s, j)[1], ""
        if c in "(":
            name, end = _name(s, k + 1)
            return end, _char(name)
        if c == "[":
            name, end = _name(s, k + 1)
            return end, _char(name.split()[0] if name.split() else "")
        if c == "C":
            name, end = _delimited(s, j)
            return end, _char(name)
        if c == "N":
            num, end = _delimited(s, j)
            return end, chr(int(num)) if num.isdigit() and 0 < int(num) < 0xD800 else ""
        if c == "*":
            name, end = _name(s, j)
            value = self.strings.get(name, _STRINGS.get(name, ""))
            if depth >= _MAX_DEPTH or "\\" not in value:
                return end, value
            return end, self.expand(value, 0, len(value), at, depth + 1)
        if c == "n":
            j += j < b and s[j] in "+-"
            return _name(s, j)[1], ""
        if c == "s":
            m = _SIZE.match(s, j)
            return m.end() if m else j, ""
        if c in "hvwoDlLbxXZRABSHT":
            return _delimited(s, j)[1], ""
        if c == "O":
            return _name(s, j)[1], ""
        if c in " ~0t":
            return j, _SPACE
        if c == "c":
            return j, _GLUE
        if c in "e\\E":
            return j, "\\"
        if c in "|^&),/%:{}adurpjz!?":
            return j, ""
        return j, c  # \- \. \' \` \_ and any other: the character

    def plain(self, s: str, where: int = 0) -> str:
        """What ``s`` prints, as a string (a title, a compared string)."""
        parts = (p[0] for p in self.expand(s, 0, len(s), where))
        return "".join(" " if p == _SPACE else p for p in parts if p != _GLUE)

    # -- lines ---------------------------------------------------------------------------

    def line(self, ln: _Line) -> None:
        s = ln.text
        if self.skip_to is not None:
            if re.match(r"[.'][ \t]*" + re.escape(self.skip_to) + r"(?:\s|$)", s):
                self.skip_to = None
            return
        if not all(self.blocks_open):
            for m in re.finditer(r"\\[{}]", s):
                if m.group() == "\\{":
                    self.blocks_open.append(False)
                elif self.blocks_open:
                    self.blocks_open.pop()
            return
        self.read(ln, 0)
        for _ in range(s.count("\\}")):
            if self.blocks_open:
                self.blocks_open.pop()

    def read(self, ln: _Line, a: int) -> None:
        """One line from ``a``: a request, or text (a conditional's body starts past 0)."""
        s = ln.text
        if self.tbl == "format" and s[a : a + 1] not in (".", "'"):
            if _TBL_FORMAT.fullmatch(s):
                self.tbl = "data" if _uncommented(s).rstrip().endswith(".") else "format"
                self.tab = m.group(1) if (m := re.search(r"tab\s*\((.)\)", s)) else self.tab
                return
            self.tbl = "data"  # no format ended with "." (a broken table): this is a row
        if s[a : a + 1] in (".", "'"):
            self.request(ln, a)
        elif self.tbl == "data" and not self.cell_text:
            self.row(ln, a)
        elif self.cell_text and s.startswith("T}", a):
            self.cell_text = False
            self.row(ln, a + 2, cont=True)
        else:
            self.text(ln, a)

    def text(self, ln: _Line, a: int) -> None:
        s = ln.text
        if not s[a:].strip() and not self.tbl:
            if self.fill:
                self.flush()
            elif self.b.length:
                self.b.synthetic("\n", ln.at(a))
            return
        pieces = self.expand(s, a, len(s), ln)
        if self.heading_next:
            self.heading(self.heading_next, pieces)
        elif self.fill:
            self.emit(pieces)
        else:
            if self.b.length:
                self.b.synthetic("\n", ln.at(a))
            self.emit(pieces, sep=False)

    def row(self, ln: _Line, a: int, cont: bool = False) -> None:
        """A data line of a tbl table: its cells, ``|`` between, a block per row."""
        s = ln.text
        if not cont and re.fullmatch(r"[\s_=|]*", s[a:]):
            return
        at = a
        for n, cell in enumerate(s[a:].split(self.tab)):
            if n:
                self.b.cell(ln.at(at - 1))
            if cell.strip() == "T{":
                self.cell_text = True
                return
            self.emit(self.expand(s, at, at + len(cell), ln))
            at += len(cell) + 1
        self.flush()

    def request(self, ln: _Line, a: int) -> None:
        s = _uncommented(ln.text)
        m = _NAME.match(s, a)
        name = m.group(1) if m else ""
        if self.tbl and name == "TH":  # a table's header rows end here, not a page's title
            return
        spans = _args(s, m.end() if m else len(s))
        args = [self.expand(s, p, q, ln) for p, q in spans]
        raw = [s[p:q] for p, q in spans]
        at = ln.at(a)
        if name in ("if", "ie", "el", "while"):
            self.conditional(ln, s, name, m.end() if m else len(s))
        elif name == "ig":
            self.skip_to = raw[0] if raw else "."
        elif name in ("EQ", "PS") and name not in self.macros:  # eqn, pic: drawing, not words
            self.skip_to = "EN" if name == "EQ" else "PE"
        elif name in ("de", "de1", "am", "ami", "dei"):
            self.skip_to = raw[1] if len(raw) > 1 else "."
            self.macros.update(raw[:1])
        elif name in ("ds", "ds1", "as") and raw:
            value = s[spans[0][1] :].lstrip(" \t")
            value = value[1:] if value.startswith('"') else value
            self.strings[raw[0]] = (self.strings.get(raw[0], "") if name == "as" else "") + value
        elif name == "nr" and len(raw) > 1:
            self.registers[raw[0]] = self.number(raw[1])
        elif name == "rm" and raw:
            self.strings.pop(raw[0], None)
        elif name == "so" and raw:
            self.flush()
            self.emit([("see ", at, False), *args[0]])
            self.flush()
        elif name in ("TH", "Dt"):
            words = [self.plain(r, at).strip() for r in raw]
            self.meta.title = f"{words[0]}({words[1]})" if len(words) > 1 else (words or [""])[0]
            keys = ("section", "date", "source", "manual") if name == "TH" else ("section",)
            self.meta.fields.update({k: v for k, v in zip(keys, words[1:], strict=False) if v})
            if name == "TH" and len(words) > 2:
                self.meta.date = words[2]
        elif name == "Dd":
            date = self.plain(s[m.end() :] if m else "", at)
            self.meta.date = re.sub(r"^\s*\$Mdocdate: |\s*\$\s*$", "", date).strip() or None
        elif name in ("SH", "SS", "Sh", "Ss"):
            level = 1 if name in ("SH", "Sh") else 2
            if args:
                self.heading(level, [p for arg in _spaced(args, at) for p in arg])
            else:
                self.flush()
                self.heading_next = level
        elif name in ("nf", "EX", "fi", "EE", "Vb", "Ve", "Bd", "Ed"):
            self.flush()
            self.fill = name in ("fi", "EE", "Ve", "Ed") or (
                name == "Bd" and not {"-literal", "-unfilled"} & set(raw)
            )
            self.kind = CODE if name in ("EX", "Vb") or "-literal" in raw else PROSE
        elif name == "TS":
            self.flush()
            self.tbl, self.kind, self.tab = "format", TABLE, "\t"
        elif name == "TE":
            self.flush()
            self.tbl, self.kind, self.cell_text = None, PROSE, False
        elif name == "T&":
            self.tbl = "format"
        elif name in _BREAK:
            self.flush()
        elif name == "IP":
            self.flush()
            self.emit(args[0] if args else [])
        elif name in _ALTERNATE:
            joined = [p for arg in args for p in arg]
            self.heading(self.heading_next, joined) if self.heading_next else self.line_out(joined)
        elif name in _FONT:
            joined = [p for arg in _spaced(args, at) for p in arg]
            self.heading(self.heading_next, joined) if self.heading_next else self.line_out(joined)
        elif name in ("UR", "MT"):
            self.emit(args[0] if args else [])
        elif name in ("UE", "ME") and args:
            self.glue = True  # punctuation after the link
            self.emit([p for arg in args for p in arg])
        elif name in ("SY", "OP"):
            if name == "SY":
                self.flush()
            pieces = [p for arg in _spaced(args, at) for p in arg]
            self.emit([("[", at, False), *pieces, ("]", at, False)] if name == "OP" else pieces)
        elif name == "YS":
            self.flush()
        elif name in ("It", "Dl", "D1"):
            self.flush()
            self.mdoc("No", raw, args, at)
            if name != "It":
                self.flush()
        elif name == "Nd":
            self.word("—", at)
            self.mdoc("No", raw, args, at)
        elif name in ("Ex", "Rv"):
            self.standard(name, [r for r in raw if r != "-std"], at)
        elif name.startswith("%") or name in _CALLABLE:
            self.mdoc(name, raw, args, at)
        elif name in self.macros and name not in _SILENT:
            self.line_out([p for arg in _spaced(args, at) for p in arg])

    def line_out(self, pieces: list[Piece]) -> None:
        """A macro's output as one input line: in no-fill mode, a line of its own."""
        if not self.fill and self.b.length and pieces:
            self.b.synthetic("\n", pieces[0][1])
        self.emit(pieces, sep=self.fill)

    def conditional(self, ln: _Line, s: str, name: str, i: int) -> None:
        """``.if``/``.ie``/``.el``: the body is read where nroff would read it."""
        if name == "el":
            taken = not self.ie.pop() if self.ie else False
        else:
            taken, i = self.condition(s, i)
            if name == "ie":
                self.ie.append(taken)
        while i < len(s) and s[i] in " \t":
            i += 1
        if s.startswith("\\{", i):
            self.blocks_open.append(taken)
            i += 2
            while i < len(s) and s[i] in " \t":
                i += 1
        if taken and i < len(s):
            self.read(ln, i)

    def condition(self, s: str, i: int) -> tuple[bool, int]:
        """Whether the condition at ``s[i]`` holds in nroff mode, and where it ends."""
        while i < len(s) and s[i] in " \t":
            i += 1
        negate = False
        while i < len(s) and s[i] == "!":
            negate, i = not negate, i + 1
        if i >= len(s):
            return negate, i
        c, nxt = s[i], s[i + 1 : i + 2]
        if c in "ntoe" and (not nxt or nxt in " \t\\"):
            value, i = c in "no", i + 1
        elif c in "dmrcFSv" and nxt in (" ", "\t"):
            m = re.compile(r"[ \t]+(\S*)").match(s, i + 1)
            word = m.group(1) if m else ""
            if c == "r":
                value = word in self.registers
            else:
                value = c == "d" and (word in self.strings or word in self.macros)
            i = m.end() if m else len(s)
        elif not (c.isalnum() or c in "(+-\\.|"):
            left, j = _delimited(s, i)
            k = s.find(c, j)
            right, i = (s[j:], len(s)) if k < 0 else (s[j:k], k + 1)
            value = self.plain(left) == self.plain(right)
        else:
            j = i
            while j < len(s) and s[j] not in " \t":
                j += 2 if s[j] == "\\" else 1
            value, i = self.number(s[i:j]) > 0, min(j, len(s))
        return value != negate, i

    def number(self, expr: str) -> int:
        """A numeric expression as roff reads it (left to right), registers looked up;
        what it cannot read is 0."""
        expr = re.sub(
            r"\\n[+-]?(\([^\s]{0,2}|\[[^\]]*\]|.)",
            lambda m: str(self.registers.get(m.group(1).strip("([]"), 0)),
            expr,
        )
        tokens = re.findall(r"\d+(?:\.\d*)?[icpPmnvuMsfz]?|[<>!=]=|<\?|>\?|[-+*/%<>=&:()]", expr)
        return int(_evaluate(tokens)) if tokens else 0

    def standard(self, name: str, names: list[str], at: int) -> None:
        """mdoc's ``.Ex -std`` and ``.Rv -std``: the sentences they stand for."""
        who = " ".join(names) or (self.name or "")
        if name == "Ex":
            words = f"The {who} utility exits 0 on success, and >0 if an error occurs."
        else:
            words = (
                f"The {who}() function returns the value 0 if successful; otherwise the "
                "value -1 is returned and the global variable errno is set to indicate the error."
            )
        self.emit([(words, at, False)])

    # -- mdoc ----------------------------------------------------------------------------

    def mdoc(self, name: str, raw: list[str], args: list[list[Piece]], at: int) -> None:
        """An mdoc macro and the macros its arguments call, as mandoc prints them."""
        if name in _ENCLOSE:
            k = len(raw)
            while k and raw[k - 1] in _CLOSE:
                k -= 1
            self.word(_ENCLOSE[name][0], at, glue_after=True)
            self.mdoc("No", raw[:k], args[:k], at)
            self.word(_ENCLOSE[name][1], at, glue_before=True)
            self.mdoc("No", raw[k:], args[k:], at)
            return
        if name in _OPENER or name in _CLOSER:
            closing = name in _CLOSER
            self.word((_CLOSER if closing else _OPENER)[name], at, closing, not closing)
            name = "No"  # what follows are words, or macros called by name
        if name == "No" and raw and raw[0] in _CALLABLE:
            self.mdoc(raw[0], raw[1:], args[1:], at)
            return
        k = next((n for n, r in enumerate(raw) if r in _CALLABLE), len(raw))
        self.own(name, raw[:k], args[:k], at)
        if k < len(raw):
            self.mdoc(raw[k], raw[k + 1 :], args[k + 1 :], at)

    def own(self, name: str, raw: list[str], args: list[list[Piece]], at: int) -> None:
        """The words an mdoc macro makes of its own arguments (up to the next macro)."""
        words = [n for n, r in enumerate(raw) if r not in _CLOSE and r not in _OPEN and r != "|"]
        if name == "Nm" and words and self.name is None:
            self.name = self.plain(raw[words[0]], at)
        if not words:
            default = {"Fl": "-", "Ar": "file ...", "Nm": self.name or "", "Ns": "",
                       "Ap": "'"}.get(name, _SYSTEMS.get(name, ""))  # fmt: skip
            if name == "Ns":
                self.glue = True
            elif default:
                self.word(default, at, glue_before=name == "Ap", glue_after=name == "Ap")
        first = words[0] if words else -1
        for n, (r, pieces) in enumerate(zip(raw, args, strict=True)):
            if r in _CLOSE:
                self.word(r, pieces[0][1] if pieces else at, glue_before=True)
            elif r in _OPEN:
                self.word(r, pieces[0][1] if pieces else at, glue_after=True)
            elif name == "Fl":
                self.emit([("-", pieces[0][1] if pieces else at, False), *pieces])
            elif name == "Xr" and n == first + 1:
                self.glue = True
                self.emit([("(", at, False), *pieces, (")", at, False)])
            elif name in ("Fn", "Fo") and n > first:
                self.word(", " if n > first + 1 else "(", at, glue_before=True, glue_after=True)
                self.emit(pieces)
            elif name == "In":
                self.emit([("<", at, False), *pieces, (">", at, False)])
            elif name == "St":
                self.emit([(_STANDARDS.get(r, r.lstrip("-")), at, False)])
            elif name == "Fa" and self.fo >= 0:
                self.word(", " if self.fo else "", at, glue_before=True, glue_after=True)
                self.emit(pieces)
                self.fo += 1
            else:
                if name in _SYSTEMS and n == first:
                    self.word(_SYSTEMS[name], at)
                self.emit(pieces)
                if name == "Pf" and n == first:
                    self.glue = True
        if name == "Fn" and first >= 0:
            self.word(")" if len(words) > 1 else "()", at, glue_before=True)
        elif name == "Fo":
            self.word("(", at, glue_before=True, glue_after=True)
            self.fo = 0
        elif name == "Fc":
            self.word(")", at, glue_before=True)
            self.fo = -1


def _spaced(args: list[list[Piece]], at: int) -> list[list[Piece]]:
    """Arguments printed with a space between them (``.B two words``, a heading)."""
    return [arg if n == 0 else [(_SPACE, at, False), *arg] for n, arg in enumerate(args)]


def _evaluate(tokens: list[str]) -> float:
    """roff's arithmetic: strictly left to right, parentheses first; scaling units dropped."""
    stack: list[tuple[float, str]] = []
    value, op = 0.0, "+"
    for t in tokens:
        if t == "(":
            stack.append((value, op))
            value, op = 0.0, "+"
        elif t == ")":
            inner = value
            value, op = stack.pop() if stack else (0.0, "+")
            value = _apply(value, op, inner)
        elif t[0].isdigit():
            value = _apply(value, op, float(t.rstrip("icpPmnvuMsfz")))
        else:
            op = t
    while stack:
        inner = value
        value, op = stack.pop()
        value = _apply(value, op, inner)
    return value


def _apply(a: float, op: str, b: float) -> float:
    ops = {
        "+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0, "%": a % b if b else 0.0,
        "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b, "=": a == b, "==": a == b,
        "!=": a != b, "&": a > 0 and b > 0, ":": a > 0 or b > 0, "<?": min(a, b), ">?": max(a, b),
    }  # fmt: skip
    return float(ops.get(op, b))


def parse(text: str, original: str, encoding: str) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks and metadata of one manual page; a file that is no page is read as text."""
    if not is_page(text):
        return plain.parse(text, original, encoding)
    table = LineTable(text, encoding, original)
    r = _Reader(table)
    try:
        for ln in _lines(text):
            r.line(ln)
        r.flush()
    except (RecursionError, ValueError, IndexError, KeyError, OverflowError) as e:
        blocks, meta, warnings = plain.parse(text, original, encoding)
        why = f"the roff reader failed ({type(e).__name__}: {str(e)[:80]})"
        return blocks, meta, [*warnings, f"{PARTLY_AS_TEXT}: {why}; the page is read as text"]
    if r.skip_to is not None:
        r.warnings.append(f"a macro definition is never closed (no .{r.skip_to})")
    if r.blocks_open:
        r.warnings.append(f"{len(r.blocks_open)} conditional block(s) never closed (no \\}})")
    return r.blocks, r.meta, r.warnings
