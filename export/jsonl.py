"""JSONL: one mention per line, cited as search cites a passage (path, original lines, file
hash), with its unit, offsets into the unit's clean text, and what the recognizer said."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

from kbx.export.read import documents
from kbx.extract.textmap import unpack
from kbx.search.passages import line_span

if TYPE_CHECKING:
    from kbx.export.run import Job


def write(job: Job, f: TextIO) -> None:
    """Each chosen document's mentions in reading order; ``start_line`` and ``end_line`` are
    the original lines of the mention itself (from its unit's offset map)."""
    r = job.report
    for done, doc in enumerate(documents(job.con, job.sel), start=1):
        lines = []
        for p in doc.placements:
            segments = unpack(p.offsets) if p.mentions else None
            for m in p.mentions:
                a, b = line_span(segments, p.text, m.start, m.end)
                row = {
                    "path": doc.path,
                    "hash": doc.sha256,
                    "start_line": a,
                    "end_line": b,
                    "unit": p.unit,
                    "start": m.start,
                    "end": m.end,
                    "text": m.text,
                    "type": m.type,
                    "value": m.value,
                    "entity": m.entity,
                    "recognizer": m.recognizer,
                    "version": m.version,
                    "confidence": m.confidence,
                }
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        f.writelines(lines)
        r.mentions += len(lines)
        job.progress(done, job.sel.documents)
