"""Names carried through one document: what a model's unit-level names mean in context.

A model names each unit on its own, so within one document it calls "Clinton" a place
after "Bill Clinton", types one team two ways, and misses a name in one sentence that it
found in the next. Read in document order, the document settles these (one sense per
discourse): a short form after its long form names the same thing; one name has one type,
its majority; and a distinctive name found somewhere is a name wherever it is written
(in a headline's capitals too). The document's authors count as names found before its
first line. The unit-level mentions stay as recognized: this is a pure function of them,
and ``annotate/context.py`` stores its result per document.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

import ahocorasick

from kbx.recognizers.base import surface as normal

_SUFFIX = re.compile(
    r"(?:,?\s+(?:Inc\.?|Incorporated|Corp\.?|Corporation|Ltd\.?|Limited|LLC|L\.L\.C\.|GmbH|AG|"
    r"S\.A\.|plc|PLC|Co\.))+$"
)


def short_form(name: str, type_: str) -> str | None:
    """How a document refers to a named thing after naming it in full: ``Apple`` after
    ``Apple Inc.``, ``Dahl`` after ``Ryan Dahl``; None when there is no safe one."""
    if type_ == "PERSON":
        words = name.split()
        last = words[-1] if len(words) > 1 else ""
        return last if len(last) > 2 and last[0].isupper() and last.isalpha() else None
    short = _SUFFIX.sub("", name).strip()
    return short if short and short != name and any(c.isupper() for c in short) else None


@dataclass(frozen=True)
class Found:
    """A unit-level name mention, as its recognizer wrote it."""

    start: int
    end: int
    type: str
    text: str
    surface: str
    recognizer: str


@dataclass(frozen=True)
class Unit:
    """One unit of the document, in reading order, with its name mentions."""

    unit_hash: str
    text: str
    found: tuple[Found, ...]


@dataclass(frozen=True)
class Name:
    """A name in its document: a span of one unit, the type the document gives it, and
    the surface of the name it stands for there (its long form, when it is a short one).
    ``how``: found (as recognized), carried (a short form), typed (retyped to agree) or
    added (written where the model did not see it)."""

    unit_hash: str
    start: int
    end: int
    type: str
    text: str
    surface: str
    recognizer: str
    how: str


@dataclass(frozen=True)
class _At:
    name: Name
    at: tuple[int, int]  # (unit ordinal, start): reading order


def in_context(
    units: Sequence[Unit], authors: Sequence[str] = (), recognizer: str = "spacy"
) -> list[Name]:
    """The document's names: its units' mentions carried, typed and completed in context.
    A name written where only the authors vouch for it is put down to ``recognizer``."""
    names = [
        _At(Name(u.unit_hash, f.start, f.end, f.type, f.text, f.surface, f.recognizer, "found"),
            (i, f.start))
        for i, u in enumerate(units)
        for f in u.found
    ]  # fmt: skip
    longs = _long_forms(names, authors, given=True)
    names = [_carry(n, longs) for n in names]
    names = _one_type(names)
    longs = _long_forms(names, authors)
    for a in filter(None, map(normal, authors)):
        longs.setdefault(a, (a, "PERSON", (-1, 0)))  # an author's full name is theirs
    return [n.name for n in names + _added(units, names, longs, recognizer)]


def _long_forms(
    names: list[_At], authors: Sequence[str], given: bool = False
) -> dict[str, tuple[str, str, tuple]]:
    """short form -> (long surface, type, where the long form is first written); a short
    form two long forms share ("Clinton" of Bill and of Hillary) is dropped. With
    ``given``, a person's first word too: the model found "Wang" after "Wang Donghai"."""
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    first: dict[tuple[str, str], tuple] = {}
    forms = [((normal(a), "PERSON"), (-1, 0)) for a in authors if normal(a)]
    forms += [((n.name.surface, n.name.type), n.at) for n in names]
    for (long, type_), at in forms:
        shorts = {short_form(long, type_)}
        if given and type_ == "PERSON" and " " in long:
            shorts.add(short_form(" ".join(reversed(long.split())), type_))
        for short in shorts - {None}:
            seen[short].add((long, type_))
            first[(long, type_)] = min(first.get((long, type_), at), at)
    return {s: (*next(iter(ls)), first[next(iter(ls))]) for s, ls in seen.items() if len(ls) == 1}


def _carry(n: _At, longs: dict[str, tuple[str, str, tuple]]) -> _At:
    hit = longs.get(n.name.surface)
    if hit is None or hit[2] >= n.at:
        return n
    long, type_, _ = hit
    return _At(replace(n.name, surface=long, type=type_, how="carried"), n.at)


def _one_type(names: list[_At]) -> list[_At]:
    """One type for one name in a document: the type at least two thirds of its mentions
    have. A closer vote leaves the types as found: on the tuning news a tie broken by the
    longest mention's type was right 10 times in 28 ("Budapest" found once as a place and
    once as an organisation is both in turn)."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for n in names:
        votes[n.name.surface.lower()][n.name.type] += 1
    chosen = {}
    for key, c in votes.items():
        (type_, top), *_ = c.most_common(1)
        if 3 * top >= 2 * sum(c.values()):
            chosen[key] = type_
    out = []
    for n in names:
        t = chosen.get(n.name.surface.lower(), n.name.type)
        out.append(n if t == n.name.type else _At(replace(n.name, type=t, how="typed"), n.at))
    return out


def _added(units: Sequence[Unit], names: list[_At], longs: dict, recognizer: str) -> list[_At]:
    """A distinctive name the model found somewhere in the document, where it is written
    and nothing was found: as written, or in capitals on a line written in capitals; and a
    short form after its long form. Each unit is read once for all the forms (``Words``):
    a changelog of 3.4 MB names 12,000 signers, and a pattern of every name read over each
    unit, or each name looked for over the whole text, took minutes."""
    forms: dict[str, tuple[str, str, str, tuple]] = {}  # text -> surface, type, recognizer, after
    inside: set[str] = set()  # forms found once at least inside a sentence
    for n in names:
        if n.name.how != "carried":
            forms.setdefault(n.name.text, (n.name.surface, n.name.type, n.name.recognizer, (-1, 0)))
            if not _opens(units[n.at[0]].text, n.name.start):
                inside.add(n.name.text)
    for short, (long, type_, at) in longs.items():
        forms.setdefault(short, (long, type_, "", at))
        inside.add(short)
    lower = _in_lower_case([u.text for u in units], forms)
    forms = {
        t: v
        for t, v in forms.items()
        if _distinctive(t, lower) and (t in inside or " " in t)  # not "Men" of "Men 's 200 m"
    }
    if not forms:
        return []
    taken: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for n in names:
        taken[n.name.unit_hash].add((n.name.start, n.name.end))
    words = Words(forms, ignore_case=True)
    upper: dict[str, tuple] = {}  # a form as a headline writes it -> the first such form
    for t, v in forms.items():
        upper.setdefault(t.upper(), v)
    if names:
        recognizer = Counter(n.name.recognizer for n in names).most_common(1)[0][0]
    out = []
    for i, u in enumerate(units):
        for a, b in words.leftmost_longest(u.text):
            written = u.text[a:b]
            form = forms.get(written)
            if form is None and _capitals(u.text, a):
                form = upper.get(written)
            if form is None or (i, a) <= form[3] or _inside(taken[u.unit_hash], a, b):
                continue
            if not _capitals(u.text, a) and _in_longer_name(u.text, a, b):
                continue
            surface, type_, rec, _ = form
            out.append(
                _At(Name(u.unit_hash, a, b, type_, written, surface, rec or recognizer, "added"),
                    (i, a))
            )  # fmt: skip
            taken[u.unit_hash].add((a, b))
    return out


def _in_lower_case(texts: Sequence[str], forms: Iterable[str]) -> set[str]:
    """The forms' lower cases that the texts (a document's units, read as one text with a
    line between each) write as words of their own."""
    wanted = {t.lower() for t in forms if len(t) >= 3 and t[0].isupper()}
    text = "\n".join(texts)
    return {text[a:b] for a, b in Words(wanted).spans(text)}


def _distinctive(name: str, lower: set[str]) -> bool:
    """A name to look for elsewhere: capitalized, and never written in lower case in the
    document (so not a word that merely starts a sentence): ``lower`` holds the lower cases
    the document writes (``_in_lower_case``)."""
    if len(name) < 3 or not name[0].isupper():
        return False
    return name.lower() not in lower


class Words:
    r"""Where a set of strings is written as words of their own (``(?<!\w)form(?!\w)`` in
    ``re``), all of them found in one Aho-Corasick pass over a text, in time linear in the
    text and the matches: a pattern that alternates thousands of forms, or a search per
    form, reads the text once per form. With ``ignore_case``, as ``re.IGNORECASE`` matches
    (``ignoring_case``)."""

    def __init__(self, forms: Iterable[str], ignore_case: bool = False):
        self.ignore_case = ignore_case
        self._automaton = ahocorasick.Automaton()
        for form in forms:
            if form:
                self._automaton.add_word(ignoring_case(form) if ignore_case else form, len(form))
        if len(self._automaton):
            self._automaton.make_automaton()

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Every ``[start, end)`` of ``text`` that holds one of the forms as a word of its
        own, overlapping ones included, in no particular order."""
        if not len(self._automaton) or not text:
            return
        n = len(text)
        for end, length in self._automaton.iter(ignoring_case(text) if self.ignore_case else text):
            start, stop = end - length + 1, end + 1
            if (start and _is_word(text[start - 1])) or (stop < n and _is_word(text[stop])):
                continue
            yield start, stop

    def leftmost_longest(self, text: str) -> list[tuple[int, int]]:
        """The spans ``re.finditer`` gives for the forms' alternation, longest first: from
        the left, at each place the longest form there, then on from its end."""
        longest: dict[int, int] = {}
        for start, stop in self.spans(text):
            if stop > longest.get(start, -1):
                longest[start] = stop
        out, last = [], 0
        for start in sorted(longest):
            if start >= last:
                last = longest[start]
                out.append((start, last))
        return out


def _is_word(c: str) -> bool:
    r"""A character of ``re``'s ``\w``."""
    return c.isalnum() or c == "_"


def ignoring_case(text: str) -> str:
    """``text`` with each character replaced by the one that stands for every character
    ``re.IGNORECASE`` takes as equal to it (its simple lower case, and "ı" as "i", "ſ" as
    "s", the Kelvin sign as "k"), one for one, so offsets hold."""
    if text.isascii():
        return text.lower()
    table = {}
    for c in set(text):
        folded = _fold(c)
        if folded != c:
            table[ord(c)] = folded
    return text.translate(table)


try:  # how ``re`` itself compares characters without case (CPython 3.11 on)
    from _sre import unicode_tolower as _tolower
    from re._casefix import _EXTRA_CASES
except ImportError:  # pragma: no cover - another Python: lower case, where it is one for one
    _EXTRA_CASES = {}

    def _tolower(code: int) -> int:
        low = chr(code).lower()
        return ord(low) if len(low) == 1 else code


def _fold(c: str) -> str:
    low = _tolower(ord(c))
    return chr(min((low, *_EXTRA_CASES.get(low, ()))))


_OPENING = re.compile(r"(?:^|[.!?:;]\s)[\W\d]*$")


def _opens(text: str, at: int) -> bool:
    """Whether ``at`` starts a line or a sentence, where any word is capitalized."""
    return bool(_OPENING.search(text[text.rfind("\n", 0, at) + 1 : at]))


def _capitals(text: str, at: int) -> bool:
    """Whether the line holding ``at`` is written in capitals (a headline)."""
    line = text[text.rfind("\n", 0, at) + 1 : (text.find("\n", at) + 1 or len(text) + 1) - 1]
    return not any(c.islower() for c in line)


def _inside(spans: list[tuple[int, int]], a: int, b: int) -> bool:
    return any(s < b and a < e for s, e in spans)


_NEXT = re.compile(r"\s*([A-Z][\w.&'-]*)")
_BEFORE = re.compile(r"([A-Z][\w.&'-]*)\s*$")


def _in_longer_name(text: str, a: int, b: int) -> bool:
    """Whether a capitalized word joins the span on either side ("Clinton" of "Clinton
    Foundation"): then the span is part of another name."""
    line_start = text.rfind("\n", 0, a) + 1
    before = _BEFORE.search(text[line_start:a])
    return bool(_NEXT.match(text, b) and text[b : b + 1] == " ") or bool(
        before and text[a - 1 : a] == " "
    )
