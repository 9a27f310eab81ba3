"""Markdown and MDX: markdown-it.rs block nodes to blocks; front matter to metadata."""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache

import yaml
from markdown_it_pyrs import MarkdownIt, Node

from kbx.extract.model import CODE, PROSE, TABLE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TAG_OR_TEXT = re.compile(r"<[^>]*>|[^<]+")
# Inline markup, stripped from the raw source so every kept character stays verbatim.
# Block structure comes from markdown-it; its inline parser gives no columns.
# Groups: code span, escape, entity, autolink; the rest is dropped. The lookahead names
# every character a match can start with, so most positions fail on one class test rather
# than on each alternative (half the scan's time on the Node.js corpus). The outer group
# is the whole match: ``split`` then hands over every piece with its length, in C.
_INLINE = re.compile(
    r"(?=[`\\&<\]!\[*~_])((?:"
    r"(?P<tick>`+)(?P<code>.+?)(?P=tick)"
    r"|\\(?P<esc>[!-/:-@\[-`{-~])"
    r"|(?P<ent>&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});)"
    r"|<(?P<auto>(?:https?|ftp|mailto):[^<>\s]*)>"
    r"|\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
    r"|\]\[[^\]]*\]"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<!--.*?-->"
    r"|!?\[|\]|\*+|~~|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|\\$))"
)
# ``_INLINE.split`` gives, after each piece of text, the whole match and then its groups
# in this order; the text after the last match ends the list.
_GROUPS = 1 + _INLINE.groups
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


_BLOCK_RULES = [
    "blockquote", "code", "fence", "heading", "hr", "html_block",
    "lheading", "list", "paragraph", "reference", "table",
]  # fmt: skip


@cache
def _parser() -> MarkdownIt:
    """markdown-it.rs (Rust) with CommonMark's block rules and tables, no inline rules: a
    seventh of markdown-it-py's block-parse time on the Node.js corpus, with the same
    blocks, lines and contents there (``benchmarks/extract_compare.py`` shows every unit
    equal). One per process; ``tree`` keeps no state between calls."""
    return MarkdownIt("zero").enable_many(_BLOCK_RULES)


# One block as the walker needs it: kind, first line, end line (0-based, exclusive), and
# its text as the parser gives it (container markers and indentation taken off), a
# heading's level or a table row's cells.
Event = tuple[str, int, int, object]


def _events(body: str, line_starts: list[int]) -> Iterator[Event]:
    """The blocks of ``body`` in reading order. Node source maps are byte offsets (the
    character ``line_starts`` serve while the text is ASCII); a block's end is where its
    last line's text ends, so a last line left empty (an unclosed fence over trailing
    blank lines) still counts."""
    data = body.encode("utf-8")
    ascii_text = len(data) == len(body)
    starts = line_starts if ascii_text else [0, *(m.end() for m in re.finditer(b"\n", data))]
    nul = "\0" in body  # markdown-it-py read NUL as U+FFFD; keep its text

    def lines(node: Node, end: int | None = None) -> tuple[int, int]:
        a, b = node.srcmap or (0, len(data))
        b = b if end is None else min(b, end)  # a tight item's text can overrun (tabs)
        return bisect_right(starts, a) - 1, bisect_right(starts, b)

    def text(node: Node) -> str:
        t = node.children[0].meta["content"] if node.children else ""
        return t.replace("\0", "\ufffd") if nul else t

    stack = [(c, "root", 0) for c in reversed(_parser().tree(body).children)]
    while stack:
        node, parent, parent_end = stack.pop()
        name = node.name
        if name in ("heading", "lheading"):
            yield ("heading", *lines(node), (text(node), node.meta["level"]))
        elif name == "paragraph":
            yield ("inline", *lines(node), text(node))
        elif name == "trow":
            yield ("row", *lines(node), [text(c) for c in node.children])
        elif name in ("fence", "code_block"):
            content = node.meta["content"]
            yield (name, *lines(node), content.replace("\0", "\ufffd") if nul else content)
        elif name == "html_block":
            yield ("html", *lines(node), None)
        elif name == "text" and parent == "list_item":  # a tight list's paragraph
            t = node.meta["content"]
            yield ("inline", *lines(node, parent_end), t.replace("\0", "\ufffd") if nul else t)
        else:
            end = node.srcmap[1] if node.srcmap else len(data)
            stack.extend((c, name, end) for c in reversed(node.children))


class _Walker:
    def __init__(self, table: LineTable, mdx: bool):
        self.table = table
        self.mdx = mdx
        self.headings: list[tuple[int, str]] = []
        self.blocks: list[Block] = []

    def bounds(self, a: int, b: int) -> tuple[int, int]:
        starts = self.table.starts
        return starts[min(a, len(starts) - 1)], starts[b] if b < len(starts) else len(
            self.table.text
        )

    def emit(self, b: TextBuilder, kind: str) -> None:
        text = b.text()
        if text.strip():
            self.blocks.append(Block.built(b, kind, tuple(h for _, h in self.headings), text))

    def inline(self, b: TextBuilder, content: str, cursor: int, limit: int) -> int:
        """Add a block's inline text, markup stripped, each line found in the source.
        ``split`` cuts a line into text and matches in one C call; most matches are
        markup to drop, and the one group set in a kept match says its kind. A line's
        leading blanks only separate it from the last (markdown-it.rs writes a
        continuation line's tab as spaces), so the line is looked up without them."""
        find, flowing, split = self.table.text.find, b.flowing, _INLINE.split
        for n, line in enumerate(content.split("\n")):
            if n:
                b.space()
                line = line.lstrip(" \t")
            pos = find(line, cursor, limit)
            if pos < 0:
                cursor = b.aligned(line, cursor, limit)
                continue
            pieces = split(line)
            at = pos
            for i in range(0, len(pieces) - 1, _GROUPS):
                text, whole, tick, code, esc, ent, auto = pieces[i : i + _GROUPS]
                if text:
                    flowing(text, at)
                    at += len(text)
                if code is not None:
                    b.code(code, at + len(tick))
                elif esc is not None:
                    b.verbatim(esc, at + 1)
                elif ent is not None:
                    b.synthetic(html.unescape(ent), at)
                elif auto is not None:
                    b.verbatim(auto, at + 1)
                at += len(whole)
            if pieces[-1]:
                flowing(pieces[-1], at)
            cursor = pos + len(line)
        return cursor

    def run(self, events: Iterator[Event]) -> list[Block]:
        for kind, a, z, data in events:
            if kind == "heading":
                content, level = data
                b = TextBuilder(self.table)
                self.inline(b, content, *self.bounds(a, z))
                self.headings = [h for h in self.headings if h[0] < level]
                self.headings.append((level, b.text().strip()))
                self.emit(b, PROSE)
            elif kind == "row":
                self.row(data, a, z)
            elif kind == "inline":
                b = TextBuilder(self.table)
                self.inline(b, data, *self.bounds(a, z))
                if not (self.mdx and _MDX_STATEMENT.match(b.text())):
                    self.emit(b, PROSE)
            elif kind in ("fence", "code_block"):
                self.code(data, a, z, kind == "fence")
            else:
                self.html(a, z)
        return self.blocks

    def row(self, cells: list[str], a: int, z: int) -> None:
        b = TextBuilder(self.table)
        cursor, limit = self.bounds(a, z)
        for cell in cells:
            if b.length:
                b.cell(cursor)
            cursor = self.inline(b, cell, cursor, limit)
        self.emit(b, TABLE)

    def code(self, content: str, a: int, z: int, fenced: bool) -> None:
        b = TextBuilder(self.table)
        cursor, limit = self.bounds(a, z)
        src = self.table.text
        if fenced:  # skip the opening fence line
            cursor = src.find("\n", cursor, limit) + 1 or cursor
        for n, line in enumerate(content.rstrip("\n").split("\n")):
            if n:
                b.synthetic("\n", cursor)
            cursor = b.aligned(line, cursor, limit)
            nl = src.find("\n", cursor, limit)
            cursor = nl + 1 if nl >= 0 else cursor
        self.emit(b, CODE)

    def html(self, a: int, z: int) -> None:
        b = TextBuilder(self.table)
        start, limit = self.bounds(a, z)
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
    blocks = _Walker(table, mdx).run(_events(body, table.starts))
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
