"""spaCy ``DocBin``: one ``Doc`` per unit (its clean text, tokenized by ``spacy.blank("en")``),
its mentions as ``doc.spans["kbx"]`` (label: the type; ``kb_id_``: the entity) and as
``doc.ents`` where they do not overlap (the longest first, ``spacy.util.filter_spans``).

What a span cannot hold is in ``doc.user_data["kbx"]``: the unit's hash, heading path and
placements (path, start and end line), and per span, in the order of ``doc.spans["kbx"]``,
the mention's own offsets, value, entity, recognizer, version and confidence. A mention
whose edges cut a token is widened to the tokens it touches (``alignment_mode="expand"``,
counted as ``expanded``); one that covers no token at all is left out (``unaligned``).
Written as ``part-00000.spacy``, … of ``SHARD`` docs each, each shard tokenized by a fresh
blank pipeline (a vocabulary grows by every new word it sees: commit hashes, identifiers),
so memory stays bounded; spaCy reads the folder as one corpus (``spacy.training.Corpus``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from kbx.errors import KbxError
from kbx.export.read import units

if TYPE_CHECKING:
    from kbx.export.run import Job

SHARD = 1000  # docs a file: the peak at 1,000 was 484 MB on Node.js, at 5,000 719 MB
SPANS_KEY = "kbx"
ATTRS = ["ORTH", "SPACY", "ENT_IOB", "ENT_TYPE", "ENT_KB_ID"]  # all a blank pipeline sets


def need_spacy() -> None:
    """Fail in one line, before any work, when spaCy is not installed."""
    try:
        import spacy  # noqa: F401
    except ImportError:
        raise KbxError("kbx export docbin needs spaCy: pip install 'kbx[ner]'") from None


@contextmanager
def _encoders_looked_up_once() -> Iterator[None]:
    """DocBin packs each doc's spans and user data with srsly's msgpack, whose every packer
    looks its encoders up again: a scan of every installed package's entry points and of
    the whole catalogue registry, three times a doc, half the export's time on the Node.js
    index. They cannot change during an export: looked up once, kept for its length."""
    from srsly import msgpack

    registries = [msgpack.msgpack_encoders, msgpack.msgpack_decoders]
    for reg in registries:
        found = reg.get_all()
        reg.get_all = lambda found=found: found  # the instance's, over the class's method
    try:
        yield
    finally:
        for reg in registries:
            del reg.get_all


def _blank(spacy) -> object:
    """A tokenizer that makes no lexeme attributes (shape, like_url, …): a DocBin keeps only
    each token's text and space (``ATTRS``), and a reader's vocabulary computes the rest,
    so they were a fifth of the time, thrown away."""
    nlp = spacy.blank("en")
    nlp.vocab.lex_attr_getters = {}
    return nlp


def write(job: Job, folder: Path) -> None:
    with _encoders_looked_up_once():
        _write(job, folder)


def _write(job: Job, folder: Path) -> None:
    import spacy
    from spacy.tokens import DocBin
    from spacy.util import filter_spans

    nlp = _blank(spacy)
    r, done = job.report, 0
    shard, part = DocBin(attrs=ATTRS, store_user_data=True), 0

    def flush() -> None:
        nonlocal shard, part, nlp
        shard.to_disk(folder / f"part-{part:05d}.spacy")
        r.files += 1
        shard, part = DocBin(attrs=ATTRS, store_user_data=True), part + 1
        nlp = _blank(spacy)

    for u in units(job.con, job.sel):
        doc = nlp.make_doc(u.text)
        spans, kept = [], []
        for m in u.mentions:
            span = doc.char_span(
                m.start, m.end, label=m.type, kb_id=m.entity or "", alignment_mode="expand"
            )
            if span is None or not len(span):
                r.unaligned += 1
                continue
            if (span.start_char, span.end_char) != (m.start, m.end):
                r.expanded += 1
            spans.append(span)
            kept.append(
                {
                    "start": m.start,
                    "end": m.end,
                    "text": m.text,
                    "value": m.value,
                    "entity": m.entity,
                    "recognizer": m.recognizer,
                    "version": m.version,
                    "confidence": m.confidence,
                }
            )
        doc.spans[SPANS_KEY] = spans
        doc.ents = filter_spans(spans)
        doc.user_data[SPANS_KEY] = {
            "unit": u.unit,
            "heading_path": u.heading_path,
            "placements": [list(x) for x in u.placed],
            "mentions": kept,
        }
        shard.add(doc)
        r.mentions += len(spans)
        done += 1
        if len(shard) >= SHARD:
            flush()
        job.progress(done, job.sel.units)
    if len(shard) or not r.files:
        flush()
