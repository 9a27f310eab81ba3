"""HTML: the standard library's tolerant parser, which reports where every text run starts.

selectolax and lxml expose no character positions for text nodes, and the offset
map needs one for every run of text, so we use ``html.parser`` with character
references left unconverted and place each decoded entity where it stood.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser

from kbx.extract.model import CODE, PROSE, TABLE, Block, Metadata
from kbx.extract.textmap import LineTable, TextBuilder

_SKIP = {
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "head",
    "nav",
    "iframe",
    "object",
    "canvas",
    "select",
    "button",
    "math",
}
_SKIP_CLASSES = {"headerlink", "sphinxsidebar", "related", "skip-link", "visually-hidden"}
_SKIP_ROLES = {"navigation", "search", "banner", "contentinfo"}
_BLOCK = {
    "p",
    "div",
    "li",
    "dt",
    "dd",
    "blockquote",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "figure",
    "figcaption",
    "ul",
    "ol",
    "dl",
    "table",
    "form",
    "caption",
    "aside",
    "hr",
    "address",
    "details",
    "summary",
    "body",
    "html",
    "center",
}
_INLINE_CODE = {"code", "kbd", "samp", "tt"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
    "param",
}
_META_KEYS = {
    "author": "author",
    "dc.creator": "author",
    "citation_author": "author",
    "date": "date",
    "dc.date": "date",
    "citation_date": "date",
    "citation_publication_date": "date",
    "article:published_time": "date",
    "citation_title": "title",
    "dc.title": "title",
    "og:title": "title",
}


class _Parser(HTMLParser):
    def __init__(self, table: LineTable):
        super().__init__(convert_charrefs=False)
        self.table = table
        self.stack: list[tuple[str, bool]] = []
        self.skipping = 0
        self.pre = 0
        self.pre_opened = False  # the <pre> tag was the last thing read
        self.code = 0  # depth of inline code elements outside <pre>
        self.row: TextBuilder | None = None
        self.heading: tuple[int, TextBuilder] | None = None
        self.headings: list[tuple[int, str]] = []
        self.blocks: list[Block] = []
        self.b = TextBuilder(table)
        self.title: list[str] = []
        self.in_title = False
        self.meta: dict[str, list[str]] = {}

    def here(self) -> int:
        line, col = self.getpos()
        return self.table.starts[line - 1] + col

    def flush(self) -> None:
        if self.b.text().strip():
            kind = CODE if self.pre else PROSE
            self.blocks.append(Block.built(self.b, kind, tuple(h for _, h in self.headings)))
        self.fresh()

    def fresh(self) -> None:
        """A new builder; inline code open across a block break goes on in it."""
        self.b = TextBuilder(self.table)
        if self.code:
            self.b.open_code()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.pre_opened = False
        a = {k: v or "" for k, v in attrs}
        if tag == "meta":
            key = (a.get("name") or a.get("property") or "").lower()
            if key in _META_KEYS and a.get("content"):
                self.meta.setdefault(_META_KEYS[key], []).append(a["content"].strip())
            return
        if tag == "title":
            self.in_title = True
        if tag in _VOID:
            if tag == "br" and not self.skipping:
                self.b.verbatim("\n", self.here()) if self.pre else self.b.space()
            return
        skip = (
            tag in _SKIP
            or bool(_SKIP_CLASSES & set(a.get("class", "").split()))
            or a.get("role") in _SKIP_ROLES
            or "hidden" in a
        )
        self.stack.append((tag, skip))
        self.skipping += skip
        if self.skipping:
            return
        if tag in _HEADINGS:
            self.flush()
            self.heading = (int(tag[1]), self.b)
        elif tag == "pre":
            self.flush()
            self.pre += 1
            self.pre_opened = True
        elif tag == "tr":
            self.flush()
            self.row = self.b
        elif tag in ("td", "th") and self.row is not None:
            if self.b.length:
                self.b.cell(self.here())
        elif tag in _INLINE_CODE and not self.pre:
            self.code += 1
            self.b.open_code()
        elif tag in _BLOCK:
            self.block()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag not in (t for t, _ in self.stack):
            return
        while self.stack:
            name, skip = self.stack.pop()
            self.skipping -= skip
            if not self.skipping:
                self.close_element(name)
            if name == tag:
                break

    def close_element(self, tag: str) -> None:
        if tag in _HEADINGS and self.heading:
            level, b = self.heading
            self.heading = None
            self.headings = [h for h in self.headings if h[0] < level]
            self.headings.append((level, " ".join(b.text().split())))
            self.flush()
        elif tag == "pre":
            self.flush()
            self.pre = max(self.pre - 1, 0)
        elif tag == "tr" and self.row is not None:
            if self.b.text().strip():
                self.blocks.append(Block.built(self.b, TABLE, tuple(h for _, h in self.headings)))
            self.fresh()
            self.row = None
        elif tag in _INLINE_CODE and self.code and not self.pre:
            self.code -= 1
            if not self.code:
                self.b.close_code()
        elif tag in _BLOCK:
            self.block()

    def block(self) -> None:
        """A block element starts or ends: a new block, except inside a table row, whose
        cells often hold paragraphs (Sphinx writes ``<td><p>``) and stay one row."""
        if self.row is not None:
            self.b.space()
        else:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skipping:
            return
        if self.pre:
            at = self.here()
            if self.pre_opened and data.startswith("\n"):  # HTML drops a newline right
                data, at = data[1:], at + 1  # after <pre>: no passage opens on the tag's line
            self.pre_opened = False
            self.b.verbatim(data, at)
        else:
            self.b.flowing(data, self.here())

    def _ref(self, raw: str) -> None:
        char = html.unescape(raw)
        if self.in_title:
            self.title.append(char)
        if self.skipping:
            return
        if char.isspace():
            self.b.space()
        else:
            self.b.synthetic(char, self.here())

    def handle_entityref(self, name: str) -> None:
        self._ref(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._ref(f"&#{name};")


def parse(text: str, original: str, encoding: str) -> tuple[list[Block], Metadata, list[str]]:
    """Blocks and metadata of one HTML text."""
    table = LineTable(text, encoding, original)
    p = _Parser(table)
    p.feed(text)
    p.close()
    p.flush()
    title = " ".join("".join(p.title).split()) or next(iter(p.meta.get("title", [])), None)
    meta = Metadata(
        title=title or None,
        date=next(iter(p.meta.get("date", [])), None),
        authors=p.meta.get("author", []),
        fields={k: v if len(v) > 1 else v[0] for k, v in p.meta.items()},
    )
    return p.blocks, meta, []
