"""``kbx export FORMAT``: the mentions and texts the filters choose, in the field's formats."""

from __future__ import annotations

import sys

from kbx import api
from kbx.cli.common import emit_json, err, out, progress_bar
from kbx.cli.define import command
from kbx.errors import BadArgument


@command(api.COMMANDS["export"])
def export(o: api.ExportOptions, *, db=None, as_json: bool = False) -> None:
    """Write what the recognizers found, in the formats annotators and analysts read.

    brat: per document PATH.txt (its clean text) and PATH.ann (T lines and # notes with
    value, entity, recognizer@version), annotation.conf, and kbx-units.tsv (where each
    passage starts in the .txt and its original lines). webanno: one W3C Web Annotation
    collection (JSON-LD), each mention targeting the original file by character position
    and quote. docbin: spaCy DocBin files, one Doc per passage, mentions in
    doc.spans["kbx"]. parquet: documents, units, placements, mentions, doc_mentions, entities and
    gazetteer_log, one file each. jsonl: one mention per line with path, original lines,
    unit, offsets, type, value, entity, recognizer, version and confidence.

    The filters are search's: they choose passages; --type and --recognizer also choose
    which mentions are written. Nothing is written under --out until the export is whole.

    Examples:

      kbx export jsonl --type DOI | head

      kbx export brat --out annotate/ --path "blog/*" --after 2021

      kbx export parquet --out tables/ --json

      kbx export webanno --out mentions.jsonld --recognizer dates
    """
    o.format = fmt = o.format.strip().lower()
    if as_json and o.out is None and fmt in ("webanno", "jsonl"):
        raise BadArgument("--json prints the report on standard output: give --out FILE too")
    with progress_bar(f"[bold]exporting {fmt}", as_json) as bar:
        task = bar.add_task("", total=None)
        r = api.perform(
            api.Index.find(db),
            o,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            stream=None if o.out else sys.stdout,
        )
    if as_json:
        emit_json(api.to_json("export", r))
        return
    say = out if o.out else err  # the export itself may be on standard output
    where = r.out or "standard output"
    say.print(
        f"{r.mentions} mentions of {r.units} passages in {r.documents} documents "
        f"written as {r.format} to {where} ({r.seconds:.1f} s)",
        markup=False,
    )
    if r.renamed:
        renamed = ", ".join(f"{a} as {b}" for a, b in r.renamed.items())
        say.print(f"  types renamed for brat: {renamed}", markup=False)
    if r.unaligned or r.expanded:
        say.print(
            f"  {r.expanded} spans widened to token edges, {r.unaligned} left out "
            "(no token to align to)",
            markup=False,
        )
    for note in r.notes:
        err.print(f"note: {note}", markup=False)
