"""``kbx status``: what the index holds and what failed."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from kbx.annotate.failures import listed
from kbx.annotate.plan import pending_redo, standing
from kbx.recognizers.registry import Registry
from kbx.store.consistency import problems
from kbx.store.db import Index
from kbx.store.schema import SCHEMA_VERSION


@dataclass
class Status:
    """Counts, sizes and failures of one index."""

    db: str
    root: str
    schema_version: int
    size_bytes: int
    documents: dict[str, int]
    formats: dict[str, int]
    units: int
    placements: int
    postings: int
    terms: int
    stemmer: str | None
    indexed_at: str | None
    # units per language, English (and what could not be told) as "en": issue 44
    languages: dict[str, int] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    # units a recognizer failed on, documents the context failed on: annotate/failures.py
    unit_failures: list[dict] = field(default_factory=list)
    recognizers: list[dict] = field(default_factory=list)  # see reprocess.PlanRow
    problems: list[str] = field(default_factory=list)  # what the next writing command repairs
    # files of formats kbx does not read, by kind, as the last full walk counted them
    passed_over: dict[str, int] = field(default_factory=dict)
    # model, version, units; windows embedded, and later windows still to come (pending,
    # of pending_units): kbx embed's, which gives every unit its first window first
    vectors: list[dict] = field(default_factory=list)


def status(index: Index, registry: Registry | None = None) -> Status:
    """Read the index's counts and failures, and where each recognizer stands."""
    with index.reader() as con:
        standings = [
            dataclasses.asdict(standing(con, r, pending_redo(con, r))) for r in registry or []
        ]
        docs = dict(con.execute("SELECT status, count(*) FROM documents GROUP BY 1").fetchall())
        formats = dict(
            con.execute(
                "SELECT format, count(*) FROM documents WHERE format IS NOT NULL GROUP BY 1 "
                "ORDER BY 2 DESC"
            ).fetchall()
        )
        units = con.execute("SELECT count(*) FROM units").fetchone()[0]
        placements = con.execute("SELECT count(*) FROM placements").fetchone()[0]
        postings = con.execute("SELECT count(*) FROM postings").fetchone()[0]
        terms = con.execute("SELECT count(*) FROM terms").fetchone()[0]
        meta = dict(con.execute("SELECT key, value FROM kbx_meta").fetchall())
        found = problems(con)
        vectors = [
            {"model": m, "version": v, "units": n, "windows": w, "pending": p, "pending_units": pu}
            for m, v, n, w, p, pu in con.execute(
                """SELECT model, version, count(DISTINCT unit_hash),
                          count(*) FILTER (len(vector) > 0), count(*) FILTER (len(vector) = 0),
                          count(DISTINCT unit_hash) FILTER (len(vector) = 0)
                   FROM vectors WHERE unit_hash IN (SELECT unit_hash FROM units)
                   GROUP BY ALL ORDER BY 3 DESC, 1, 2"""
            ).fetchall()
        ]
        failures = [
            {"path": p, "status": s, "error": e}
            for p, s, e in con.execute(
                "SELECT path, status, error FROM documents WHERE error IS NOT NULL ORDER BY path"
            ).fetchall()
        ]
        unit_failures = listed(con)
    return Status(
        db=str(index.db),
        root=str(index.root),
        schema_version=SCHEMA_VERSION,  # a reader opens only a file of this version
        size_bytes=index.db.stat().st_size,
        documents=docs,
        formats=formats,
        units=units,
        placements=placements,
        postings=postings,
        terms=terms,
        stemmer=meta.get("stemmer"),
        indexed_at=meta.get("indexed_at"),
        languages=_languages(meta, units),
        passed_over=json.loads(meta.get("passed_over", "{}")),
        failures=failures,
        unit_failures=unit_failures,
        recognizers=standings,
        problems=found,
        vectors=vectors,
    )


def _languages(meta: dict[str, str], units: int) -> dict[str, int]:
    """Units per language, the most first: those ``kbx index`` recorded as other than
    English, and the rest as English."""
    other = json.loads(meta.get("languages", "{}"))
    out = {"en": units - sum(other.values()), **other}
    return dict(sorted(((k, n) for k, n in out.items() if n > 0), key=lambda kv: -kv[1]))
