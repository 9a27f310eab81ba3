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
from kbx.languages import SNOWBALL, detect
from kbx.wordchars import CJK, MARKS

WORD = rf"[\w{MARKS}]"  # a word character: \w, or a combining mark inside a word
TOKEN = re.compile(rf"{WORD}+(?:[.\-/:@+'’_]{WORD}+)*")
# TOKEN on ASCII text, where \w is these and no mark or ’ occurs: 1.7x as fast on the
# Node.js units (``terms``)
ASCII_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.\-/:@+'_][A-Za-z0-9_]+)*")
CJK_RUN = re.compile(f"[{CJK}]+")
# The version of the chain, recorded in the index (kbx_meta 'analysis'): an index whose
# postings an older chain made is analyzed again by `kbx index`, and refused by search.
# 2: combining marks inside words, CJK bigrams, marks of spelling kept by folding.
# 3: prose stemmed in its own language (languages.py), and the unit's language a term.
# 4: and each word of such prose unstemmed too.
# 5: function words only among words of letters (no hex digest is Portuguese).
# 6: French and Spanish by their commonest words too (de, en, un), not as Dutch or Danish.
ANALYSIS_VERSION = "6"
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
    # the languages other than English whose passages the index holds: a query's words are
    # stemmed in each too (``forms``); the passages themselves are stemmed in their own
    languages: tuple[str, ...] = ()

    def __post_init__(self):
        if self.stemmer not in STEMMERS:
            raise BadArgument(
                f"unknown stemmer {self.stemmer!r}; choose from {', '.join(STEMMERS)}"
            )

    def tokens(
        self, text: str, code: bool = False, lang: str | None = None
    ) -> Iterator[tuple[int, int, str]]:
        """``(start, end, term)`` for every term of ``text``; parts follow their whole.
        Prose is stemmed in ``lang`` (None: English, or the stemmer chosen).
        A term is never empty and never holds whitespace: the ingest joins terms with
        spaces, so one with a space inside would break the postings."""
        for m in TOKEN.finditer(text):
            for at, piece, cjk in pieces(m):
                found = cjk_terms(piece) if cjk else self._token(piece, code, True, lang)
                for start, end, term in found:
                    if _one_word(term):
                        yield at + start, at + end, term

    def _token(
        self, raw: str, code: bool, refold: bool, lang: str | None = None
    ) -> Iterator[tuple[int, int, str]]:
        """The terms of one token, spans relative to it."""
        name = self.stem_name(code, lang)
        stem = _stem_fn(name)
        if name.startswith("snowball:"):  # stemmed as written (Russian's й), then folded

            def stem_of(w: str) -> str:
                return stem(w.lower())
        else:

            def stem_of(w: str) -> str:
                return stem(fold(w))

        whole = fold(raw)
        if whole in self.protected:
            yield 0, len(raw), whole
            return
        if not _one_word(whole):
            # Folding turned a letter into words with spaces (U+FDFA) or into nothing
            # (U+037A, U+FF9E): the words it made are the terms, each spanning the token.
            if refold:
                for m in TOKEN.finditer(whole):
                    for _, _, term in self._token(m.group(), code, False, lang):
                        yield 0, len(raw), term
            return
        parts = list(PART.finditer(raw))
        if len(parts) == 1 and parts[0].end() - parts[0].start() == len(raw):
            yield 0, len(raw), stem_of(raw)
            return
        yield 0, len(raw), whole
        for p in parts:
            if p.end() - p.start() > 1 or p.group().isdigit():  # no "s" of "what's"
                yield p.start(), p.end(), stem_of(p.group())

    def stem_name(self, code: bool, lang: str | None) -> str:
        """The stemmer for prose (or code) in ``lang``: ``snowball``, ``plural`` or ``none``
        for English and what cannot be told, ``snowball:ALGORITHM`` for another language
        Snowball stems (``none`` for one it does not, or with another stemmer chosen)."""
        if code:
            return "none"
        if lang is None:
            return self.stemmer
        algorithm = SNOWBALL.get(lang)
        return f"snowball:{algorithm}" if algorithm and self.stemmer == "snowball" else "none"

    def terms(self, text: str, code: bool = False, lang: str | None = None) -> Counter[str]:
        """Term frequencies of one text: raw tokens are counted first (in C), and each
        distinct one is analyzed once per process (see ``expansions``)."""
        raws = Counter((ASCII_TOKEN if text.isascii() else TOKEN).findall(text))
        expand = self.expansions(raws, code, lang)
        out: dict[str, int] = {}
        get = out.get
        for raw, n in raws.items():
            for term in expand[raw]:
                out[term] = get(term, 0) + n
        return Counter(out)

    def expansions(
        self, raws: Iterable[str], code: bool, lang: str | None = None
    ) -> dict[str, tuple[str, ...]]:
        """The terms of each raw token, from a per-process cache filled in bulk: an ASCII
        token (nearly all of them) is lowered and split into its parts here, and all new
        words are stemmed in one ``stemWords`` call; any other goes through ``tokens``."""
        name = self.stem_name(code, lang)
        cache = token_cache(self, code, f"terms:{name}")
        new = [raw for raw in raws if raw not in cache]
        if not new:
            return cache
        if len(cache) > CACHE_TOKENS:
            cache.clear()
        words: list[str] = []  # to be stemmed, in order
        shapes: list[tuple[str, str | None, int]] = []  # raw, its whole form, words it gave
        for raw in new:
            if not raw.isascii():
                cache[raw] = tuple(t for _, _, t in self.tokens(raw, code, lang))
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
        stems = _stem_all(name, words)
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
                # a CJK run: each pair of characters a word (one character: itself)
                each = [[t] for t in cjk_query(piece)] if cjk else [self.forms(piece)]
                for forms in each:
                    key = " ".join(forms)
                    if forms and key not in seen:
                        seen.add(key)
                        groups.append(forms)
                        stop.append(not cjk and fold(piece) in QUERY_STOPWORDS)
        if stopwords and not all(stop):
            groups = [g for g, s in zip(groups, stop, strict=True) if not s]
        return groups

    def forms(self, word: str) -> list[str]:
        """The terms a passage holding ``word`` may index for it, any of which is a
        match: as English prose (or the stemmer chosen), as code (unstemmed), and as
        prose of each other language the index holds."""
        found = [t for _, _, t in self.tokens(word)]
        found += [t for _, _, t in self.tokens(word, code=True)]
        for lang in self.languages:
            found += [t for _, _, t in self.tokens(word, lang=lang)]
        return list(dict.fromkeys(found))


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


def token_cache(analyzer: Analyzer, code: bool, kind: str = "terms:") -> dict:
    """A per-process cache of what one analyzer makes of each raw token, one per ``kind``
    (its terms here; their spans for marking hits, search/passages.py). Kept beside the
    analyzer, not in it: analyzers travel to workers with every job."""
    key = (kind, analyzer.stemmer, analyzer.protected, code)
    found = _CACHES.get(key)
    if found is None:
        found = _CACHES[key] = {}
    return found


def _stem_all(name: str, words: list[str]) -> list[str]:
    """Stems of lower-case ASCII words by the stemmer ``name`` (``Analyzer.stem_name``),
    Snowball's in one C call."""
    if name == "none":
        return words
    if name == "snowball":
        return _snowball().stemWords(words)
    if name.startswith("snowball:"):
        return _snowball(name[9:]).stemWords(words)
    return [plural_stem(w) for w in words]


@cache
def _snowball(algorithm: str = "english") -> Stemmer.Stemmer:
    return Stemmer.Stemmer(algorithm)


@cache
def _stem_fn(name: str):
    if name == "snowball":
        return lru_cache(maxsize=200_000)(_snowball().stemWord)
    if name.startswith("snowball:"):  # a lower-case word as written: its stem, folded
        stem = _snowball(name[9:]).stemWord
        return lru_cache(maxsize=200_000)(lambda w: fold(stem(w)))
    if name == "plural":
        return lru_cache(maxsize=200_000)(plural_stem)
    return lambda w: w


LANG_TERM = "#lang="  # a unit's language as a term: '#' is in no token, so no query's


def analyze_units(units, analyzer: Analyzer) -> list[tuple[str, str, str, int]]:
    """Each unit's terms with their body and heading frequencies, as space-separated
    strings (they cross process and database boundaries far faster than tuples), and
    its body length. Prose is stemmed in its own language (``languages.detect``), and a
    unit in a language other than English holds the term ``#lang=CODE`` (tf 1, not in its
    length), so the index knows the languages it holds."""
    headings: dict[tuple, Counter[str]] = {}
    out = []
    for u in units:
        code = u.kind == "code"
        lang = None if code else detect(u.text)
        body = analyzer.terms(u.text, code=code, lang=lang)
        n_terms = sum(body.values())
        if analyzer.stem_name(code, lang).startswith("snowball:"):
            # each word unstemmed too (as code is), so the word as written ranks above
            # its stem's other inflections; English keeps its stems alone, as always
            for term, n in analyzer.terms(u.text, code=True).items():
                body.setdefault(term, n)
        if (u.heading_path, lang) not in headings:
            headings[u.heading_path, lang] = analyzer.terms(" ".join(u.heading_path), lang=lang)
        head = headings[u.heading_path, lang]
        extra = [t for t in head if t not in body]
        terms = [*body, *extra]
        tfs = [*map(str, body.values()), *["0"] * len(extra)]
        htfs = [str(head[t]) if t in head else "0" for t in terms]
        if lang:
            terms.append(LANG_TERM + lang)
            tfs.append("1")
            htfs.append("0")
        out.append((" ".join(terms), " ".join(tfs), " ".join(htfs), n_terms))
    return out
