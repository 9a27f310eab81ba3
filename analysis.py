"""Clean text to index terms: our own chain, the same at index and query time.

Tokens are runs of word characters joined by connector punctuation, so
identifiers stay whole (``seL4``, ``ERR_4021``, ``v18.2.0``, ``CVE-2023-12345``,
``10.17487/RFC8446``) and their parts are indexed too. Combining marks stay inside
their word (Devanagari's vowel signs). Chinese, Japanese and Korean, written without
spaces, are cut into overlapping pairs of characters, each character also a term of its
own (Lucene's CJK bigrams, plus unigrams so a one-character query finds its character):
any run a person types is found where its pairs are. Case and accents are folded (not
the marks that spell a word: virama, nukta, kana voicing). Prose is stemmed (a
conservative plural stemmer or Snowball); code is not; names the gazetteer protects are
never stemmed or split.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache

import Stemmer

from kbx.errors import BadArgument
from kbx.wordchars import CJK, MARKS

WORD = rf"[\w{MARKS}]"  # a word character: \w, or a combining mark inside a word
TOKEN = re.compile(rf"{WORD}+(?:[.\-/:@+'’_]{WORD}+)*")
CJK_RUN = re.compile(f"[{CJK}]+")
# The version of the chain, recorded in the index (kbx_meta 'analysis'): an index whose
# postings an older chain made is analyzed again by `kbx index`, and refused by search.
# 2: combining marks inside words, CJK bigrams, marks of spelling kept by folding.
ANALYSIS_VERSION = "2"
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
PART = re.compile(f"(?:[^\\W_]|[{MARKS}])+")
STEMMERS = ("snowball", "plural", "none")


def fold(token: str) -> str:
    """Lower case without accents (``Café`` and ``cafe`` meet)."""
    token = token.lower()
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    kept = "".join(c for c in decomposed if not _accent(unicodedata.combining(c)))
    return unicodedata.normalize("NFC", kept) if len(kept) > 1 else kept


def _accent(ccc: int) -> bool:
    """Whether a mark of this canonical combining class is an accent to fold away: the
    overlays and the marks placed above or below (Latin, Greek, Cyrillic accents) and the
    vowel points of Hebrew, Arabic and Syriac; not a nukta (7), kana voicing (8), virama
    (9) or the vowel and tone marks of Telugu, Thai, Lao and Tibetan (84-132), which spell
    a different word. NFC then joins what is left again (Hangul syllables, が)."""
    return ccc == 1 or 10 <= ccc <= 36 or ccc >= 200


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
            for at, piece, cjk in pieces(m):
                found = cjk_terms(piece) if cjk else self._token(piece, code, refold=True)
                for start, end, term in found:
                    if _one_word(term):
                        yield at + start, at + end, term

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
        distinct one is analyzed once per process (see ``expansions``)."""
        raws = Counter(TOKEN.findall(text))
        expand = self.expansions(raws, code)
        out: dict[str, int] = {}
        get = out.get
        for raw, n in raws.items():
            for term in expand[raw]:
                out[term] = get(term, 0) + n
        return Counter(out)

    def expansions(self, raws: Iterable[str], code: bool) -> dict[str, tuple[str, ...]]:
        """The terms of each raw token, from a per-process cache filled in bulk: an ASCII
        token (nearly all of them) is lowered and split into its parts here, and all new
        words are stemmed in one ``stemWords`` call; any other goes through ``tokens``."""
        cache = token_cache(self, code)
        new = [raw for raw in raws if raw not in cache]
        if not new:
            return cache
        if len(cache) > CACHE_TOKENS:
            cache.clear()
        words: list[str] = []  # to be stemmed, in order
        shapes: list[tuple[str, str | None, int]] = []  # raw, its whole form, words it gave
        for raw in new:
            if not raw.isascii():
                cache[raw] = tuple(t for _, _, t in self.tokens(raw, code))
                continue
            low = raw.lower()
            if low in self.protected:
                cache[raw] = (low,)
            elif _PLAIN.fullmatch(low):
                shapes.append((raw, None, 1))
                words.append(low)
            else:  # the whole identifier unstemmed, then its parts (no lone letters)
                parts = [p for p in _PLAIN.findall(low) if len(p) > 1 or p.isdigit()]
                shapes.append((raw, low, len(parts)))
                words += parts
        stems = _stem_all(self, words, code)
        i = 0
        for raw, whole, n in shapes:
            cache[raw] = (*stems[i : i + n],) if whole is None else (whole, *stems[i : i + n])
            i += n
        return cache

    def query(self, text: str, stopwords: bool = True) -> list[list[str]]:
        """A query's terms, grouped by the word they came from. A group's forms are
        alternatives (the whole identifier, its parts, the unstemmed form code units
        index); ranking takes the best of them. Function words are dropped unless
        the query has nothing else."""
        groups: list[list[str]] = []
        seen: set[str] = set()
        stop: list[bool] = []
        for m in TOKEN.finditer(text):
            for _, piece, cjk in pieces(m):
                if cjk:  # each pair of characters a word (one character: itself)
                    each = [[t] for t in cjk_query(piece)]
                else:
                    prose = [t for _, _, t in self.tokens(piece)]
                    code = [t for _, _, t in self.tokens(piece, code=True)]
                    each = [list(dict.fromkeys(prose + code))]
                for forms in each:
                    key = " ".join(forms)
                    if forms and key not in seen:
                        seen.add(key)
                        groups.append(forms)
                        stop.append(not cjk and fold(piece) in QUERY_STOPWORDS)
        if stopwords and not all(stop):
            groups = [g for g, s in zip(groups, stop, strict=True) if not s]
        return groups


def pieces(m: re.Match) -> Iterator[tuple[int, str, bool]]:
    """A token cut where Chinese, Japanese or Korean begins or ends: ``(start, piece,
    cjk)``, start in the text ``m`` searched; a token with none is its one piece. What
    lies between two runs is tokenized again (no connector left at its ends)."""
    raw = m.group()
    if raw.isascii() or not CJK_RUN.search(raw):
        yield m.start(), raw, False
        return
    at = 0
    for run in CJK_RUN.finditer(raw):
        for t in TOKEN.finditer(raw, at, run.start()):
            yield m.start() + t.start(), t.group(), False
        yield m.start() + run.start(), run.group(), True
        at = run.end()
    for t in TOKEN.finditer(raw, at):
        yield m.start() + t.start(), t.group(), False


def cjk_terms(run: str) -> Iterator[tuple[int, int, str]]:
    """The terms of a run of CJK characters, spans relative to it: each character, and
    each overlapping pair. Where folding changes the run's length (half-width kana and
    their voicing marks), every term spans the whole run."""
    folded = fold(run)
    n = len(folded)
    same = n == len(run)
    for i in range(n):
        yield (i, i + 1, folded[i]) if same else (0, len(run), folded[i])
        if i + 1 < n:
            yield (i, i + 2, folded[i : i + 2]) if same else (0, len(run), folded[i : i + 2])


def cjk_query(run: str) -> list[str]:
    """What a query's CJK run must match: its overlapping pairs, or its one character."""
    folded = fold(run)
    if len(folded) == 1:
        return [folded]
    return [folded[i : i + 2] for i in range(len(folded) - 1)]


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds Chinese, Japanese or Korean (words without spaces)."""
    return not text.isascii() and CJK_RUN.search(text) is not None


def _one_word(term: str) -> bool:
    """Non-empty and without whitespace (what ``str.split`` would split on)."""
    return term.split() == [term]


CACHE_TOKENS = 1_000_000  # distinct raw tokens remembered per analyzer and kind
_PLAIN = re.compile(r"[a-z0-9]+")  # a part of a lower-case ASCII token (PART, in ASCII)
_CACHES: dict[tuple, dict] = {}


def token_cache(analyzer: Analyzer, code: bool, kind: str = "terms") -> dict:
    """A per-process cache of what one analyzer makes of each raw token, one per ``kind``
    (its terms here; their spans for marking hits, search/passages.py). Kept beside the
    analyzer, not in it: analyzers travel to workers with every job."""
    key = (kind, analyzer.stemmer, analyzer.protected, code)
    found = _CACHES.get(key)
    if found is None:
        found = _CACHES[key] = {}
    return found


def _stem_all(analyzer: Analyzer, words: list[str], code: bool) -> list[str]:
    """Stems of lower-case ASCII words, Snowball's in one C call."""
    if code or analyzer.stemmer == "none":
        return words
    if analyzer.stemmer == "snowball":
        return _snowball().stemWords(words)
    return [plural_stem(w) for w in words]


@cache
def _snowball() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@cache
def _stem_fn(name: str):
    if name == "snowball":
        return lru_cache(maxsize=200_000)(_snowball().stemWord)
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
        extra = [t for t in head if t not in body]
        terms = [*body, *extra]
        out.append(
            (
                " ".join(terms),
                " ".join([*map(str, body.values()), *["0"] * len(extra)]),
                " ".join([str(head[t]) if t in head else "0" for t in terms]),
                sum(body.values()),
            )
        )
    return out
