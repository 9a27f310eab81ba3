"""Which gazetteer names the analysis chain would damage, so they can be kept whole.

A name is damaged when the chain splits it into parts that match other words
(``seL4`` → ``se``, ``l``, ``4``) or stems it into a frequent term of the corpus
(``Hastings`` → ``hast``, ``Wells`` → ``well``). Protected, it is indexed and
queried as one term, as Lucene's ``keyword_marker`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kbx.analysis import TOKEN, Analyzer, fold

FREQUENT = 5  # a stem shared by at least this many units, and twice the name's own


@dataclass(frozen=True)
class Damage:
    """One word of a name and what the chain does to it."""

    word: str  # folded: the term to protect
    why: str


def damage(name: str, analyzer: Analyzer, df: Callable[[str], int]) -> list[Damage]:
    """The words of ``name`` the chain would split or over-stem; ``df`` gives a term's
    document frequency in units."""
    out = []
    for m in TOKEN.finditer(name):
        raw, whole = m.group(), fold(m.group())
        terms = [t for _, _, t in analyzer.tokens(raw)]
        if len(terms) > 1:
            out.append(Damage(whole, f"split into {', '.join(terms[1:])}"))
            continue
        stem = terms[0] if terms else whole
        if stem != whole and raw[:1].isupper():
            shared, own = df(stem), df(whole)
            if shared >= max(FREQUENT, 2 * own):
                out.append(Damage(whole, f"stems to {stem!r}, a term of {shared} units"))
    return out
