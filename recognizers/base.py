"""The one contract a recognizer author sees: metadata, a mention, and a batch call.

A recognizer turns units of clean text into mentions: spans ``[start, end)`` of
that text with a type, the exact text, a normalized value and a confidence. Its
(name, version) is the cache key kbx keeps per unit, so a name's behaviour never
changes under the same version: new behaviour, new version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from kbx.errors import BadArgument

_NAME = re.compile(r"^[a-z][a-z0-9_]{1,40}$")
_LOADED: dict[tuple, object] = {}
M = TypeVar("M")


def loaded(key: tuple, load: Callable[[], M]) -> M:
    """The model ``key`` names (its kind, where it lives and what identifies its contents),
    loaded once per process. Each run of ``kbx index`` builds its recognizers anew, and a
    server runs one on every change it sees; loading a pipeline takes from about half a
    second (spaCy's small English one) to several (GLiNER), where a one-file re-index takes
    a few tenths. A model is only read once loaded, so every recognizer of it can share it;
    a forked reader inherits the parent's."""
    found = _LOADED.get(key)
    if found is None:
        found = _LOADED[key] = load()
    return found  # type: ignore[return-value]


@dataclass(frozen=True)
class RecognizerInfo:
    """What a recognizer declares; checked the moment it is registered."""

    name: str
    version: str
    types: tuple[str, ...]
    languages: tuple[str, ...] = ("en",)
    needs_context: bool = False
    filter: bool = True  # precise enough to filter on; False: its mentions only boost
    boost_types: tuple[str, ...] = ()  # types too imprecise to filter on, even if filter
    fork_safe: bool = True  # False: never run in forked workers (e.g. torch thread pools)
    slow: bool = False  # a model: `kbx index` runs it once the folder is searchable
    names: bool = False  # its mentions are names: linked to entities by alias or surface form
    headings: bool = False  # recognize() also takes headings=[each unit's heading path]
    code: bool = True  # False: code units get an empty run (hex dumps are not dates or litres)
    inline_code: bool = True  # False: a mention wholly inside inline code (`1L`) is dropped
    cross_cells: bool = True  # False: one across a table cell or row, or a blank line, is too

    def __post_init__(self):
        if not _NAME.match(self.name):
            raise BadArgument(f"recognizer name {self.name!r}: use lower case, digits and _")
        if not self.version or not self.types:
            raise BadArgument(f"recognizer {self.name!r} must declare a version and its types")
        odd = [t for t in (*self.types, *self.boost_types) if t != t.strip().upper() or not t]
        if odd:  # `--type` reads a type upper-cased: one in lower case would never filter
            raise BadArgument(
                f"recognizer {self.name!r}: mention types are in upper case (e.g. DATASET), "
                f"not {', '.join(map(repr, odd))}"
            )


@dataclass(frozen=True)
class Mention:
    """A standoff span over one unit's clean text (0-based, end exclusive)."""

    start: int
    end: int
    type: str
    text: str
    value: str | None = None
    confidence: float = 1.0
    key: str | None = None  # the entity it names, when the recognizer knows (``doi:10.…``)


@runtime_checkable
class Recognizer(Protocol):
    """Anything with ``info`` and a batched ``recognize`` is a recognizer. One that loads a
    model may also have ``load()``: kbx calls it before forking workers, so the model is
    loaded once and shared. One whose ``info.headings`` is set is called as
    ``recognize(texts, headings=...)`` with each unit's heading path."""

    info: RecognizerInfo

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        """The mentions of each text, in the order given."""
        ...


def check_spans(text: str, mentions: list[Mention], name: str) -> list[Mention]:
    """Refuse a mention whose span does not hold its text (offsets must be exact)."""
    for m in mentions:
        if not (0 <= m.start < m.end <= len(text)) or text[m.start : m.end] != m.text:
            raise ValueError(
                f"recognizer {name!r} returned a misaligned span [{m.start}, {m.end}) "
                f"for {m.text!r}"
            )
    return mentions


_BLANK_LINE = re.compile(r"\n\s*\n")


def shown_text(info: RecognizerInfo, text: str, breaks: Sequence[int] = ()) -> str:
    """The text a recognizer is given: to one that may not cross cells, a row break reads as
    ``|``, like a cell's, so it finds "March 3" and "2021" in two rows rather than one date
    across them. One character for one: offsets, and the text of what it may keep, agree."""
    if info.cross_cells or not breaks:
        return text
    chars = list(text)
    for x in breaks:
        chars[x] = "|"
    return "".join(chars)


def within_rules(
    info: RecognizerInfo,
    text: str,
    mentions: list[Mention],
    code_spans: Sequence[Sequence[int]] = (),
    breaks: Sequence[int] = (),
) -> list[Mention]:
    """The mentions a recognizer's declared rules keep in one unit. kbx applies them to every
    recognizer's output, so no recognizer re-implements them: without ``inline_code``, none
    wholly inside inline code (`` `0B 9B` ``, `` `MONDAY` ``; "`30` seconds" stays, it is
    only partly code); without ``cross_cells``, none holding a cell or row separator
    (``breaks``) or a blank line (two paragraphs), so two rows are never one duration."""
    if not info.inline_code and code_spans:
        mentions = [
            m for m in mentions if not any(a <= m.start and m.end <= b for a, b in code_spans)
        ]
    if not info.cross_cells:
        mentions = [
            m
            for m in mentions
            if not any(m.start <= x < m.end for x in breaks)
            and not _BLANK_LINE.search(text, m.start, m.end)
        ]
    return mentions


def surface(text: str) -> str:
    """A name's normalized surface form (spaces collapsed, a possessive and a leading "the"
    dropped): the value of a name mention, and the facet value of a name no entity claims."""
    s = " ".join(text.split())
    for suffix in ("'s", "’s"):
        s = s.removesuffix(suffix)
    return s.removeprefix("the ").removeprefix("The ")
