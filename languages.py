"""The language of a passage, told offline in microseconds, for stemming it in its language.

A script other than Latin names its language (Cyrillic: Russian, or Ukrainian or Serbian by
the letters only they write; Greek; Arabic, or Persian by its own letters; Devanagari:
Hindi; Tamil; Armenian; Hebrew; kana: Japanese; Hangul: Korean; Han alone: Chinese) once
it holds a quarter of the letters: the Latin words inside a Russian or Japanese manual
page are its commands and options. Latin text is told by its function words, which make
up a third of running prose; English, or too few of them to tell (a table, a list of
names, code), is None: analyzed as it always was. A detector with a model (py3langid) was
tried: its model takes seconds to load in every indexing process, for the same answers
on these passages (docs/BENCHMARKS.md, "Every script searchable").
"""

from __future__ import annotations

import re
from collections import Counter

# The Snowball stemmer (PyStemmer's name) of each language told here; None: not stemmed.
SNOWBALL = {
    "de": "german", "fr": "french", "es": "spanish", "it": "italian", "pt": "portuguese",
    "nl": "dutch", "sv": "swedish", "da": "danish", "no": "norwegian", "fi": "finnish",
    "hu": "hungarian", "ro": "romanian", "tr": "turkish", "pl": "polish", "cs": "czech",
    "id": "indonesian", "ru": "russian", "uk": None, "sr": "serbian",
    "el": "greek", "ar": "arabic", "fa": "persian", "hi": "hindi", "ta": "tamil",
    "hy": "armenian", "he": None, "ja": None, "zh": None, "ko": None,
}  # fmt: skip

# fmt: off
FUNCTION_WORDS = {
    "en": "the and of to is in that it with for this are was be on not by from which or have",
    "de": "der die das und ist nicht ein eine mit den dem des auf für sich wird werden auch "
          "oder zu von bei nach wenn kann",
    "fr": "le la les des est une et du dans pour pas qui que sur avec au aux ce cette sont "
          "par être ou il ne de en un à",
    "es": "el la los las del que es una por con para no se su al lo como más pero sus este "
          "esta está son de en un y",
    "it": "il di che la le gli della del per non una un sono con è nel alla questo come "
          "anche dei delle essere",
    "pt": "o os da do das dos que não uma um em para com por se é são na no ao como mais "
          "pelo pela de",
    "nl": "de het een en van is niet dat die op te met voor zijn worden wordt aan ook bij "
          "naar kan als deze",
    "sv": "och att det som en är av för med till den inte på om har kan ett eller de vid från",
    "da": "og at det som en er af for med til den ikke på om har kan et eller de fra skal",
    "no": "og at det som en er av for med til den ikke på om har kan et eller fra skal ble",
    "fi": "ja on ei se että tai kun jos ovat oli myös mutta sen hän voi tämä joka kuin ole",
    "hu": "az és hogy nem egy van meg ez vagy csak már mint kell még",
    "ro": "și în cu pe nu este sau care din pentru să mai sunt această",
    "tr": "ve bir bu için ile değil olarak daha gibi çok veya olan ki sonra",
    "pl": "nie na się jest że jak ale od lub po są przez dla tak",
    "cs": "se na je že jako ale nebo pro jsou by od po také být",
    "id": "yang dan di ini itu dengan untuk dari dalam tidak akan pada adalah atau juga ke oleh",
}
# fmt: on
_LANGS_OF: dict[str, tuple[str, ...]] = {}  # a function word: the languages it is one of
for _lang, _words in FUNCTION_WORDS.items():
    for _w in _words.split():
        _LANGS_OF[_w] = (*_LANGS_OF.get(_w, ()), _lang)
_SCRIPTS = [  # name, its letters
    ("latin", "a-zA-Z\u00c0-\u024f"),
    ("cyrillic", "\u0400-\u04ff"),
    ("greek", "\u0370-\u03ff\u1f00-\u1fff"),
    ("arabic", "\u0600-\u06ff\u0750-\u077f"),
    ("hebrew", "\u05d0-\u05ea"),
    ("devanagari", "\u0900-\u097f"),
    ("tamil", "\u0b80-\u0bff"),
    ("armenian", "\u0531-\u0587"),
    ("kana", "\u3041-\u30ff"),
    ("hangul", "\uac00-\ud7a3\u1100-\u11ff"),
    ("han", "\u4e00-\u9fff\u3400-\u4dbf"),
]
_CLASSES = [(name, re.compile(f"[{chars}]")) for name, chars in _SCRIPTS]
_OTHER = re.compile("[" + "".join(chars for _, chars in _SCRIPTS[1:]) + "]")  # any but Latin
_WORD = re.compile(r"[^\W\d_]+")
_OF_SCRIPT = {"greek": "el", "hebrew": "he", "devanagari": "hi", "tamil": "ta", "armenian": "hy"}
_PUNCT = ".,;:!?()[]{}\"'«»“”‘’`*_<>|"
SAMPLE = 2000  # characters looked at
MIN_LETTERS = 8  # fewer letters of a script than this tell nothing
MIN_WORDS = 3  # function words a Latin-script language needs, and twice English's


def detect(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language, or None for English or too little to
    tell (both analyzed as English always was)."""
    sample = text[:SAMPLE]
    if sample.isascii() or len(_OTHER.findall(sample)) < MIN_LETTERS:
        return _latin(sample)  # no script but Latin has MIN_LETTERS: one scan, not ten
    counts = {name: len(rx.findall(sample)) for name, rx in _CLASSES[1:]}
    if not any(n >= MIN_LETTERS for n in counts.values()):
        return _latin(sample)
    latin = len(_CLASSES[0][1].findall(sample))
    script, n = max(counts.items(), key=lambda kv: kv[1])
    if n < (latin + sum(counts.values())) / 4:
        return _latin(sample)
    return _of_script(script, sample, counts)


# English names of the languages told here, for messages.
NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
    "fi": "Finnish", "hu": "Hungarian", "ro": "Romanian", "tr": "Turkish", "pl": "Polish",
    "cs": "Czech", "id": "Indonesian", "ru": "Russian", "uk": "Ukrainian", "sr": "Serbian",
    "el": "Greek", "ar": "Arabic", "fa": "Persian", "hi": "Hindi", "ta": "Tamil",
    "hy": "Armenian", "he": "Hebrew", "ja": "Japanese", "zh": "Chinese", "ko": "Korean",
}  # fmt: skip


def of_query(text: str) -> str | None:
    """The language of a query, where its letters tell: a script other than Latin names
    one from its first letter on (a query is short: ``会議``, ``исследование``), once it
    holds a quarter of the letters (``Node.js のインストール`` is Japanese); Latin letters
    by their function words, as ``detect`` tells a passage (None: English, or too few to
    tell, as most short queries are)."""
    if text.isascii():
        return _latin(text)
    counts = {name: len(rx.findall(text)) for name, rx in _CLASSES[1:]}
    script, n = max(counts.items(), key=lambda kv: kv[1])
    latin = len(_CLASSES[0][1].findall(text))
    if n == 0 or n < (latin + sum(counts.values())) / 4:
        return _latin(text)
    return _of_script(script, text, counts)


def _of_script(script: str, sample: str, counts: dict[str, int]) -> str:
    """The language a script other than Latin names (``detect``'s rules)."""
    if script in ("kana", "han", "hangul"):
        kana, han, hangul = counts["kana"], counts["han"], counts["hangul"]
        if hangul > kana + han:
            return "ko"
        return "ja" if kana >= (kana + han) / 10 else "zh"
    if script == "cyrillic":
        if re.search("[іїєґІЇЄҐ]", sample):
            return "uk"
        return "sr" if re.search("[ђћџјљњЂЋЏЈЉЊ]", sample) else "ru"
    if script == "arabic":
        return "fa" if re.search("[پچژگی]", sample) else "ar"
    return _OF_SCRIPT[script]


def _latin(sample: str) -> str | None:
    """Told by function words among the whitespace-separated words made of letters only
    (a hash, a signature's base64 or an identifier is no word: ``de`` inside a hex digest
    is not Portuguese), which must be a tenth of them and at least two different ones."""
    tokens = Counter(sample.lower().split())  # counted in C: each distinct one looked at once
    scores = dict.fromkeys(FUNCTION_WORDS, 0)
    kinds: dict[str, set[str]] = {lang: set() for lang in FUNCTION_WORDS}
    get = _LANGS_OF.get
    for token, n in tokens.items():
        w = token.strip(_PUNCT)
        for lang in get(w, ()):  # a function word is letters alone: one of the words
            scores[lang] += n
            kinds[lang].add(w)
    best = max(scores, key=scores.__getitem__)
    n = scores[best]
    if best == "en" or n < MIN_WORDS or n < 2 * scores["en"]:
        return None
    words = sum(k for t, k in tokens.items() if _WORD.fullmatch(t.strip(_PUNCT)))
    if n < words / 10:  # counted only here: most passages are told English by now
        return None
    return best if len(kinds[best]) >= 2 else None
