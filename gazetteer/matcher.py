"""The gazetteer recognizer: every alias of every entry, found in one Aho-Corasick pass.

Matches respect word boundaries (``Cedar`` is not found in ``Cedars``), follow each
entry's case rule, and overlapping matches keep the leftmost, then the longest
(``Apple Inc.`` over ``Apple``), as spaCy's ``filter_spans`` does.

An alias several entries share (an import from Wikidata can hold two "Apple"s) names
none of them: the span is kept from shorter matches but gives no mention, unless one of
the entries pins that alias (``Entry.pinned``); a wrong link would be silent, a missing
one shows as an unlinked name.
"""

from __future__ import annotations

from collections.abc import Sequence

import ahocorasick

from kbx.gazetteer.entries import TYPES, Entry, version_of
from kbx.recognizers.base import Mention, RecognizerInfo


def fold_same_length(text: str) -> str:
    """Lower case with every offset kept (a character whose lower case is longer stays)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


class GazetteerRecognizer:
    """Finds the aliases of the given entries; its version is a digest of them."""

    def __init__(self, entries: Sequence[Entry]):
        self.entries = list(entries)
        held = {e.type for e in self.entries}
        self.info = RecognizerInfo(  # filter-grade only for the types it holds entries of,
            name="gazetteer",  # so asking for another type falls to whoever else finds it
            version=version_of(self.entries),
            types=TYPES,
            boost_types=tuple(t for t in TYPES if t not in held),
        )
        self._exact = ahocorasick.Automaton()
        self._folded = ahocorasick.Automaton()
        for e in self.entries:
            for alias in e.aliases:
                automaton = self._folded if e.ignore_case else self._exact
                key = fold_same_length(alias) if e.ignore_case else alias
                n, held = automaton.get(key, (len(alias), ()))
                automaton.add_word(key, (n, e) if not held else (n, (*_many(held), e)))
        for a in (self._exact, self._folded):
            if len(a):
                a.make_automaton()

    def _found(self, text: str) -> dict[tuple[int, int], list[Entry]]:
        """Each matched span, with every entry that has it as an alias."""
        out: dict[tuple[int, int], list[Entry]] = {}
        for automaton, haystack in ((self._exact, text), (self._folded, None)):
            if not len(automaton):
                continue
            for end, (n, held) in automaton.iter(haystack or fold_same_length(text)):
                start, stop = end - n + 1, end + 1
                if _is_word(text[start]) and start > 0 and _is_word(text[start - 1]):
                    continue
                if _is_word(text[end]) and stop < len(text) and _is_word(text[stop]):
                    continue
                out.setdefault((start, stop), []).extend(_many(held))
        return out

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text in texts:
            kept, last = [], 0
            for (start, stop), held in sorted(self._found(text).items(), key=_leftmost_longest):
                if start < last:
                    continue
                last = stop  # an ambiguous span still wins over what it overlaps
                if e := _owner(held, text[start:stop]):
                    kept.append(
                        Mention(start, stop, e.type, text[start:stop], e.entry_id, 1.0, e.entry_id)
                    )
            out.append(kept)
        return out


def _many(held: Entry | tuple[Entry, ...]) -> tuple[Entry, ...]:
    return held if isinstance(held, tuple) else (held,)


def _leftmost_longest(item: tuple[tuple[int, int], list[Entry]]) -> tuple[int, int]:
    (start, stop), _ = item
    return start, -stop


def _owner(held: list[Entry], surface: str) -> Entry | None:
    """The one entry a span names: the only one, or the one that pins the alias."""
    ids = {e.entry_id: e for e in held}
    if len(ids) == 1:
        return held[0]
    low = surface.lower()
    pinned = [e for e in ids.values() if any(p.lower() == low for p in e.pinned)]
    return pinned[0] if len(pinned) == 1 else None
