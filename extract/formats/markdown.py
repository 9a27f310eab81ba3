"""Markdown and MDX: markdown-it-py block tokens to blocks; front matter to metadata."""

from __future__ import annotations

import html
import re
from functools import cache

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from kbx.extract.model import CODE, PROSE, TABLE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TAG_OR_TEXT = re.compile(r"<[^>]*>|[^<]+")
# Inline markup, stripped from the raw source so every kept character stays verbatim.
# Block structure comes from markdown-it-py; its inline parser is 20x slower than this
# and gives no columns. Groups: code span, escape, entity, autolink; the rest is dropped.
_INLINE = re.compile(
    r"(?P<tick>`+)(?P<code>.+?)(?P=tick)"
    r"|\\(?P<esc>[!-/:-@\[-`{-~])"
    r"|(?P<ent>&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});)"
    r"|<(?P<auto>(?:https?|ftp|mailto):[^<>\s]*)>"
    r"|\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
    r"|\]\[[^\]]*\]"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<!--.*?-->"
    r"|!?\[|\]|\*+|~~|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|\\$"
)
_MDX_STATEMENT = re.compile(r"^(import|export)\s.+(from\s+['\"]|=)", re.S)


MAX_ALIAS_NODES = 1000


class _AliasRefused(yaml.YAMLError):
    """Front matter whose aliases are recursive or expand too far."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader with aliases bounded: a few hundred bytes of nested anchors
    ("billion laughs") expand to gigabytes once the metadata is serialized, and a recursive
    alias never ends. Aliases are allowed (front matter uses them for shared defaults)
    unless one refers to a node that contains it, or all of them together stand for over
    ``MAX_ALIAS_NODES`` nodes; then the front matter is refused. Composing only links nodes,
    so the check runs on the composed graph, before anything is built from it."""

    def compose_document(self):
        node = super().compose_document()
        _check_aliases(node)
        return node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _check_aliases(root: yaml.Node) -> None:
    """Refuse a node graph with a cycle, or one that expands far beyond its own size."""
    state = {id(root): "open"}
    stack = [(root, iter(_children(root)))]
    while stack:
        node, rest = stack[-1]
        child = next(rest, None)
        if child is None:
            state[id(node)] = "done"
            stack.pop()
        elif state.get(id(child)) == "open":
            raise _AliasRefused("an alias refers to a node that contains it")
        elif id(child) not in state:
            state[id(child)] = "open"
            stack.append((child, iter(_children(child))))
    limit = len(state) + MAX_ALIAS_NODES
    expanded, todo = 0, [root]
    while todo:
        expanded += 1
        if expanded > limit:
            raise _AliasRefused(f"aliases expand to over {MAX_ALIAS_NODES} nodes")
        todo.extend(_children(todo.pop()))


# libyaml's loader, where PyYAML has it: ten times the pure one's speed on front matter.
_C_LOADER = getattr(yaml, "CSafeLoader", None)
_C_SAFE = re.compile(r"[^&*\[{]{0,65536}")  # no anchors, aliases or flow collections; short


def _load_yaml(text: str):
    """Front matter as YAML. Most of it is a few plain ``key: value`` lines, which libyaml
    reads; anything with an anchor, an alias or a flow collection (what the bounded loader
    guards against: recursion in C has no limit) goes to the bounded loader, and so does
    what libyaml refuses, so the warning names the pure loader's reason."""
    if _C_LOADER is not None and _C_SAFE.fullmatch(text):
        try:
            return yaml.load(text, Loader=_C_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=_BoundedLoader)


def split_front_matter(text: str) -> tuple[dict, str, list[str]]:
    """YAML front matter as a dict, and the text with those lines blanked (line numbers kept).
    Front matter that cannot be read safely is ignored with a warning; the body is kept."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text, []
    warnings: list[str] = []
    try:
        data = _load_yaml(m.group(1) or "") or {}
    except _AliasRefused as e:
        data, warnings = {}, [f"front matter ignored: {e}"]
    except yaml.YAMLError as e:
        data, warnings = {}, [f"front matter ignored: not valid YAML: {str(e).splitlines()[0]}"]
    except RecursionError:
        data, warnings = {}, ["front matter ignored: nested too deep"]
    except ValueError as e:  # e.g. an integer over Python's 4300-digit limit
        data, warnings = {}, [f"front matter ignored: {str(e).split(':')[0]}"]
    if not isinstance(data, dict):
        data = {}
    blank = "\n" * m.group(0).count("\n")
    return data, blank + text[m.end() :], warnings


@cache
def _parser() -> MarkdownIt:
    """One parser per process, where each file built one and compiled its rule chains again
    (0.2 ms a file, 4% of the block parse); ``parse`` keeps no state between calls."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    return md.disable("inline")


class _Walker:
    def __init__(self, table: LineTable, mdx: bool):
        self.table = table
        self.mdx = mdx
        self.headings: list[tuple[int, str]] = []
        self.blocks: list[Block] = []

    def bounds(self, tok: Token) -> tuple[int, int]:
        starts = self.table.starts
        a, b = tok.map or (0, len(starts))
        return starts[min(a, len(starts) - 1)], starts[b] if b < len(starts) else len(
            self.table.text
        )

    def emit(self, b: TextBuilder, kind: str) -> None:
        text = b.text()
        if text.strip():
            self.blocks.append(Block.built(b, kind, tuple(h for _, h in self.headings), text))

    def inline(self, b: TextBuilder, tok: Token, cursor: int, limit: int) -> int:
        """Add an inline token's text, markup stripped, each line found in the source.
        Most matches are markup to drop: ``lastgroup`` names the kept kind in one look."""
        src = self.table.text
        flowing = b.flowing
        for n, line in enumerate(tok.content.split("\n")):
            if n:
                b.space()
            pos = src.find(line, cursor, limit)
            if pos < 0:
                cursor = b.aligned(line, cursor, limit)
                continue
            last = 0
            for m in _INLINE.finditer(line):
                start = m.start()
                if start > last:
                    flowing(line[last:start], pos + last)
                kind = m.lastgroup
                if kind is not None:
                    if kind == "code":
                        b.code(m.group("code"), pos + m.start("code"))
                    elif kind == "ent":
                        b.synthetic(html.unescape(m.group("ent")), pos + start)
                    else:  # an escaped character or an autolink: kept as written
                        b.verbatim(m.group(kind), pos + m.start(kind))
                last = m.end()
            if last < len(line):
                flowing(line[last:], pos + last)
            cursor = pos + len(line)
        return cursor

    def run(self, tokens: list[Token]) -> list[Block]:
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.type == "heading_open":
                b = TextBuilder(self.table)
                start, limit = self.bounds(tok)
                self.inline(b, tokens[i + 1], start, limit)
                level = int(tok.tag[1])
                self.headings = [h for h in self.headings if h[0] < level]
                self.headings.append((level, b.text().strip()))
                self.emit(b, PROSE)
                i += 3
                continue
            if tok.type == "tr_open":
                i = self.row(tokens, i)
                continue
            if tok.type == "inline":
                b = TextBuilder(self.table)
                start, limit = self.bounds(tok)
                self.inline(b, tok, start, limit)
                if not (self.mdx and _MDX_STATEMENT.match(b.text())):
                    self.emit(b, PROSE)
            elif tok.type in ("fence", "code_block"):
                self.code(tok)
            elif tok.type == "html_block":
                self.html(tok)
            i += 1
        return self.blocks

    def row(self, tokens: list[Token], i: int) -> int:
        b = TextBuilder(self.table)
        start, limit = self.bounds(tokens[i])
        cursor = start
        while tokens[i].type != "tr_close":
            if tokens[i].type == "inline":
                if b.length:
                    b.cell(cursor)
                cursor = self.inline(b, tokens[i], cursor, limit)
            i += 1
        self.emit(b, TABLE)
        return i + 1

    def code(self, tok: Token) -> None:
        b = TextBuilder(self.table)
        cursor, limit = self.bounds(tok)
        if tok.type == "fence":  # skip the opening fence line
            cursor = self.table.text.find("\n", cursor, limit) + 1 or cursor
        for n, line in enumerate(tok.content.rstrip("\n").split("\n")):
            if n:
                b.synthetic("\n", cursor)
            cursor = b.aligned(line, cursor, limit)
            nl = self.table.text.find("\n", cursor, limit)
            cursor = nl + 1 if nl >= 0 else cursor
        self.emit(b, CODE)

    def html(self, tok: Token) -> None:
        b = TextBuilder(self.table)
        start, limit = self.bounds(tok)
        src = self.table.text[start:limit]
        for m in _TAG_OR_TEXT.finditer(src):
            if not m.group().startswith("<"):
                b.flowing(m.group(), start + m.start())
        self.emit(b, PROSE)


def _as_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        out = []
        for v in value:
            out.append(str(v.get("name", v)) if isinstance(v, dict) else str(v))
        return out
    return [s.strip() for s in re.split(r",|;|&| and ", str(value)) if s.strip()]


def parse(
    text: str, original: str, encoding: str, mdx: bool = False
) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks and metadata of one Markdown (or MDX) text."""
    front, body, warnings = split_front_matter(text)
    table = LineTable(body, encoding, original)
    blocks = _Walker(table, mdx).run(_parser().parse(body))
    title = front.get("title")
    date = front.get("date") or front.get("pubDate") or front.get("published")
    authors = _as_list(front.get("authors") or front.get("author"))
    meta = Metadata(
        title=str(title) if title else None,
        date=str(date) if date else None,
        authors=authors,
        fields=front,
    )
    return blocks, meta, warnings
