"""Clean text to index terms: our own chain, the same at index and query time.

Tokens are runs of word characters joined by connector punctuation, so
identifiers stay whole (``seL4``, ``ERR_4021``, ``v18.2.0``, ``CVE-2023-12345``,
``10.17487/RFC8446``) and their parts are indexed too. Case and accents are
folded. Prose is stemmed (a conservative plural stemmer or Snowball); code is
not; names the gazetteer protects are never stemmed or split.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache

import Stemmer

from kbx.errors import BadArgument

TOKEN = re.compile(r"\w+(?:[.\-/:@+'’_]\w+)*")
# Function words dropped from queries (never from the index, so grep and phrases keep
# them): measured on SciFact and the Node.js questions, see docs/BENCHMARKS.md.
# fmt: off
QUERY_STOPWORDS = frozenset((
    "a", "about", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "he", "her", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "just", "me", "more", "most", "my", "no", "nor", "not", "of", "on",
    "only", "or", "other", "our", "out", "over", "own", "same", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your", "because", "both",
))
# fmt: on
PART = re.compile(r"[^\W_]+")
STEMMERS = ("snowball", "plural", "none")


def fold(token: str) -> str:
    """Lower case without accents (``Café`` and ``cafe`` meet)."""
    token = token.lower()
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def plural_stem(word: str) -> str:
    """Lucene's EnglishMinimalStemmer: plurals only, so ``Hastings`` stays near itself."""
    n = len(word)
    if n < 3 or word[-1] != "s" or word[-2] in "us":
        return word
    if word[-2] == "e":
        if n > 3 and word[-3] == "i" and word[-4] not in "ae":
            return word[:-3] + "y"
        if word[-3] in "iaoe":
            return word
    return word[:-1]


@dataclass(frozen=True)
class Analyzer:
    """One analysis chain: a stemmer for prose and the names it must keep whole."""

    stemmer: str = "snowball"
    protected: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self):
        if self.stemmer not in STEMMERS:
            raise BadArgument(
                f"unknown stemmer {self.stemmer!r}; choose from {', '.join(STEMMERS)}"
            )

    def tokens(self, text: str, code: bool = False) -> Iterator[tuple[int, int, str]]:
        """``(start, end, term)`` for every term of ``text``; parts follow their whole.
        A term is never empty and never holds whitespace: the ingest joins terms with
        spaces, so one with a space inside would break the postings."""
        for m in TOKEN.finditer(text):
            for start, end, term in self._token(m.group(), code, refold=True):
                if _one_word(term):
                    yield m.start() + start, m.start() + end, term

    def _token(self, raw: str, code: bool, refold: bool) -> Iterator[tuple[int, int, str]]:
        """The terms of one token, spans relative to it."""
        stem = _stem_fn("none" if code else self.stemmer)
        whole = fold(raw)
        if whole in self.protected:
            yield 0, len(raw), whole
            return
        if not _one_word(whole):
            # Folding turned a letter into words with spaces (U+FDFA) or into nothing
            # (U+037A, U+FF9E): the words it made are the terms, each spanning the token.
            if refold:
                for m in TOKEN.finditer(whole):
                    for _, _, term in self._token(m.group(), code, refold=False):
                        yield 0, len(raw), term
            return
        parts = list(PART.finditer(raw))
        if len(parts) == 1 and parts[0].end() - parts[0].start() == len(raw):
            yield 0, len(raw), stem(whole)
            return
        yield 0, len(raw), whole
        for p in parts:
            if p.end() - p.start() > 1 or p.group().isdigit():  # no "s" of "what's"
                yield p.start(), p.end(), stem(fold(p.group()))

    def terms(self, text: str, code: bool = False) -> Counter[str]:
        """Term frequencies of one text: raw tokens are counted first (in C), and each
        distinct one is analyzed once."""
        out: Counter[str] = Counter()
        for raw, n in Counter(TOKEN.findall(text)).items():
            for term in self._expand(raw, code):
                out[term] += n
        return out

    @lru_cache(maxsize=500_000)  # noqa: B019 - analyzers are few and live as long as a run
    def _expand(self, raw: str, code: bool) -> tuple[str, ...]:
        return tuple(t for _, _, t in self.tokens(raw, code))

    def query(self, text: str, stopwords: bool = True) -> list[list[str]]:
        """A query's terms, grouped by the word they came from. A group's forms are
        alternatives (the whole identifier, its parts, the unstemmed form code units
        index); ranking takes the best of them. Function words are dropped unless
        the query has nothing else."""
        groups: list[list[str]] = []
        seen: set[str] = set()
        stop: list[bool] = []
        for m in TOKEN.finditer(text):
            prose = [t for _, _, t in self.tokens(m.group())]
            code = [t for _, _, t in self.tokens(m.group(), code=True)]
            forms = list(dict.fromkeys(prose + code))
            key = " ".join(forms)
            if forms and key not in seen:
                seen.add(key)
                groups.append(forms)
                stop.append(fold(m.group()) in QUERY_STOPWORDS)
        if stopwords and not all(stop):
            groups = [g for g, s in zip(groups, stop, strict=True) if not s]
        return groups


def _one_word(term: str) -> bool:
    """Non-empty and without whitespace (what ``str.split`` would split on)."""
    return term.split() == [term]


@cache
def _stem_fn(name: str):
    if name == "snowball":
        stemmer = Stemmer.Stemmer("english")
        return lru_cache(maxsize=200_000)(stemmer.stemWord)
    if name == "plural":
        return lru_cache(maxsize=200_000)(plural_stem)
    return lambda w: w


def analyze_units(units, analyzer: Analyzer) -> list[tuple[str, str, str, int]]:
    """Each unit's terms with their body and heading frequencies, as space-separated
    strings (they cross process and database boundaries far faster than tuples), and
    its body length."""
    headings: dict[tuple[str, ...], Counter[str]] = {}
    out = []
    for u in units:
        body = analyzer.terms(u.text, code=u.kind == "code")
        if u.heading_path not in headings:
            headings[u.heading_path] = analyzer.terms(" ".join(u.heading_path))
        head = headings[u.heading_path]
        terms = list(body | head)
        out.append(
            (
                " ".join(terms),
                " ".join(str(body.get(t, 0)) for t in terms),
                " ".join(str(head.get(t, 0)) for t in terms),
                sum(body.values()),
            )
        )
    return out
