"""spaCy ``DocBin``: one ``Doc`` per unit (its clean text, tokenized by ``spacy.blank("en")``),
its mentions as ``doc.spans["kbx"]`` (label: the type; ``kb_id_``: the entity) and as
``doc.ents`` where they do not overlap (the longest first, ``spacy.util.filter_spans``).

What a span cannot hold is in ``doc.user_data["kbx"]``: the unit's hash, heading path and
placements (path, start and end line), and per span, in the order of ``doc.spans["kbx"]``,
the mention's own offsets, value, entity, recognizer, version and confidence. A mention
whose edges cut a token is widened to the tokens it touches (``alignment_mode="expand"``,
counted as ``expanded``); one that covers no token at all is left out (``unaligned``).
Written as ``part-00000.spacy``, … of ``SHARD`` docs each, so memory stays bounded; spaCy
reads the folder as one corpus (``spacy.training.Corpus(DIR)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kbx.errors import KbxError
from kbx.export.read import units

if TYPE_CHECKING:
    from kbx.export.run import Job

SHARD = 5000
SPANS_KEY = "kbx"


def need_spacy() -> None:
    """Fail in one line, before any work, when spaCy is not installed."""
    try:
        import spacy  # noqa: F401
    except ImportError:
        raise KbxError("kbx export docbin needs spaCy: pip install 'kbx[ner]'") from None


def write(job: Job, folder: Path) -> None:
    import spacy
    from spacy.tokens import DocBin
    from spacy.util import filter_spans

    nlp = spacy.blank("en")
    r, done = job.report, 0
    shard, part = DocBin(store_user_data=True), 0

    def flush() -> None:
        nonlocal shard, part
        shard.to_disk(folder / f"part-{part:05d}.spacy")
        r.files += 1
        shard, part = DocBin(store_user_data=True), part + 1

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
