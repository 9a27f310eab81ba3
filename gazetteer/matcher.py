"""The gazetteer recognizer: every alias of every entry, found in one Aho-Corasick pass.

Matches respect word boundaries (``Cedar`` is not found in ``Cedars``), follow each
entry's case rule, and overlapping matches keep the leftmost, then the longest
(``Apple Inc.`` over ``Apple``), as spaCy's ``filter_spans`` does.
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
                if e.ignore_case:
                    self._folded.add_word(fold_same_length(alias), (len(alias), e))
                else:
                    self._exact.add_word(alias, (len(alias), e))
        for a in (self._exact, self._folded):
            if len(a):
                a.make_automaton()

    def _found(self, text: str) -> list[tuple[int, int, Entry]]:
        out = []
        for automaton, haystack in ((self._exact, text), (self._folded, None)):
            if not len(automaton):
                continue
            for end, (n, e) in automaton.iter(haystack or fold_same_length(text)):
                start, stop = end - n + 1, end + 1
                if _is_word(text[start]) and start > 0 and _is_word(text[start - 1]):
                    continue
                if _is_word(text[end]) and stop < len(text) and _is_word(text[stop]):
                    continue
                out.append((start, stop, e))
        return out

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text in texts:
            kept, last = [], 0
            for start, stop, e in sorted(self._found(text), key=lambda m: (m[0], -m[1])):
                if start >= last:
                    kept.append(
                        Mention(start, stop, e.type, text[start:stop], e.entry_id, 1.0, e.entry_id)
                    )
                    last = stop
            out.append(kept)
        return out
