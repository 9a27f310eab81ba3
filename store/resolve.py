"""``kbx resolve``: metadata for the identifier entities, cached in the store.

Separate from indexing, which never waits on the network. Each answer is committed on
its own, so a killed run loses at most the one in flight; a work found is kept until
``--refresh``, a 404 is recorded as not found and not asked again, and a failure is
retried next run. With no network the run stops at the first request and says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from kbx.config import load_config
from kbx.errors import BadArgument
from kbx.recognizers.resolvers import (
    Crossref,
    Failed,
    NotFound,
    Offline,
    OpenAlex,
    Polite,
    Settings,
)
from kbx.store.db import Index, WriterLease
from kbx.store.entities import refresh as refresh_entities

SERVICES = {"doi": ("crossref", "openalex"), "orcid": ("openalex",)}


@dataclass
class ResolveReport:
    """What a run asked, found and could not."""

    todo: int = 0
    found: int = 0
    not_found: int = 0
    cached: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # entity, service, why
    offline: str | None = None
    retried: int = 0
    seconds: float = 0.0


def pending(
    index: Index, only: list[str] | None = None, refresh: bool = False
) -> tuple[list[tuple[str, str, str]], int]:
    """(entity ID, value, service) still to ask, and how many answers are cached."""
    kinds = only or list(SERVICES)
    unknown = [k for k in kinds if k not in SERVICES]
    if unknown:
        raise BadArgument(f"--only {unknown[0]!r}: choose from {', '.join(SERVICES)}")
    with index.reader() as con:
        rows = con.execute(
            """SELECT e.entity_id, lower(e.type) FROM entities e
               WHERE e.source = 'identifier' AND list_contains(?, lower(e.type))
               ORDER BY e.entity_id""",
            [kinds],
        ).fetchall()
        done = {
            (eid, svc)
            for eid, svc in con.execute(
                "SELECT entity_id, service FROM resolutions WHERE status IN ('ok', 'not_found')"
            ).fetchall()
        }
    todo, cached = [], 0
    for entity_id, kind in rows:
        for service in SERVICES[kind]:
            if (entity_id, service) in done and not refresh:
                cached += 1
            else:
                todo.append((entity_id, entity_id.split(":", 1)[1], service))
    return todo, cached


def _record(lease: WriterLease, entity_id, service, status, data=None, error=None) -> None:
    con = lease.con()
    con.execute(
        "INSERT OR REPLACE INTO resolutions VALUES (?, ?, ?, ?, ?, ?)",
        [entity_id, service, status, datetime.now(), json.dumps(data) if data else None, error],
    )
    lease.release()  # the next answer may be seconds away: readers get the file meanwhile


def resolve(
    index: Index,
    only: list[str] | None = None,
    limit: int | None = None,
    refresh: bool = False,
    settings: Settings | None = None,
    progress: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ResolveReport:
    """Fetch what the cache lacks (everything, with ``refresh``), then rebuild the entity
    layer so titles, years, venues and authors become facets."""
    started = time.monotonic()
    settings = settings or Settings.load(load_config(index.root).resolve)
    todo, cached = pending(index, only, refresh)
    todo = todo[:limit] if limit else todo
    report = ResolveReport(todo=len(todo), cached=cached)
    polite = Polite(settings, sleep)
    clients: dict = {}

    def client(service: str):
        if service not in clients:
            clients[service] = (Crossref if service == "crossref" else OpenAlex)(settings, polite)
        return clients[service]

    with WriterLease(index) as lease:
        for n, (entity_id, value, service) in enumerate(todo, start=1):
            try:
                c = client(service)
                data = c.work(value) if entity_id.startswith("doi:") else c.author(value)
                _record(lease, entity_id, service, "ok", data)
                report.found += 1
            except NotFound:
                _record(lease, entity_id, service, "not_found")
                report.not_found += 1
            except Failed as e:
                _record(lease, entity_id, service, "failed", error=str(e))
                report.failures.append((entity_id, service, str(e)))
            except Offline as e:
                report.offline = f"{service} cannot be reached ({e})"
                break
            if progress:
                progress(n, len(todo))
        refresh_entities(lease.con())
    report.retried = polite.retried
    report.seconds = time.monotonic() - started
    return report
