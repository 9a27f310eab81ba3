"""``kbx export FORMAT``: one function, one report; each format is written by its own module.

The export reads one snapshot of the index (one read connection for the whole run) and
writes all or nothing (``out.py``). File formats may go to a stream (standard output)
instead of ``--out``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import duckdb

from kbx.errors import BadArgument
from kbx.export import brat, docbin, jsonl, out, parquet, webanno
from kbx.export.read import Selection, choose
from kbx.search.filters import Filters
from kbx.store.db import Index

Progress = Callable[[int, int], None]


@dataclass
class ExportReport:
    """What an export wrote. ``documents``, ``units`` and ``mentions`` count what the
    files hold; the rest is said by the formats it concerns."""

    format: str
    out: str | None  # None: standard output
    documents: int = 0  # chosen by the filters (parquet: rows written)
    units: int = 0
    mentions: int = 0  # written
    files: int = 0
    renamed: dict[str, str] = field(default_factory=dict)  # brat: types renamed to fit it
    unaligned: int = 0  # docbin: spans no token boundary could be found for (left out)
    expanded: int = 0  # docbin: spans widened to the tokens they cut
    stale: int = 0  # webanno: documents changed or gone since indexed (quoted, not placed)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class Job:
    """What a format's writer is handed."""

    con: duckdb.DuckDBPyConnection
    sel: Selection
    index: Index
    report: ExportReport
    progress: Progress


FOLDERS = {"brat": brat.write, "docbin": docbin.write, "parquet": parquet.write}
FILES = {"webanno": webanno.write, "jsonl": jsonl.write}
FORMATS = (*FOLDERS, *FILES)


def export(
    index: Index,
    fmt: str,
    out_path: str | Path | None = None,
    filters: Filters | None = None,
    recognizers: list[str] | None = None,
    progress: Progress | None = None,
    stream: TextIO | None = None,
) -> ExportReport:
    """Write the mentions (and texts) that ``filters`` choose as ``fmt`` to ``out_path``
    (a folder for brat, docbin and parquet; a file for webanno and jsonl, or ``stream``)."""
    if fmt not in FORMATS:
        raise BadArgument(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
    if out_path is None and (fmt in FOLDERS or stream is None):
        kind = "DIR" if fmt in FOLDERS else "FILE"
        raise BadArgument(f"{fmt} needs --out {kind}: where to write the export")
    if fmt == "docbin":
        docbin.need_spacy()
    started = time.perf_counter()
    target = Path(out_path).expanduser().absolute() if out_path is not None else None
    report = ExportReport(fmt, str(target) if target else None)
    tick = progress or (lambda done, total: None)
    with index.reader() as con:
        sel = choose(con, filters, recognizers or [])
        report.documents, report.units = sel.documents, sel.units
        job = Job(con, sel, index, report, tick)
        if fmt in FOLDERS:
            with out.folder(target) as work:
                FOLDERS[fmt](job, work)
        elif target is None:
            FILES[fmt](job, stream)
        else:
            with out.file(target) as work, work.open("w", encoding="utf-8", newline="") as f:
                FILES[fmt](job, f)
            report.files = 1
    report.seconds = round(time.perf_counter() - started, 3)
    return report
