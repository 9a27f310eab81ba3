"""``kbx resolve``: metadata for the identifier entities, cached in the store.

Separate from indexing, which never waits on the network. Each answer is committed on
its own, so a killed run loses at most the one in flight; a work found is kept until
``--refresh``, a 404 is recorded as not found and not asked again, and a failure is
retried next run, and never overwrites an answer already had. A service that cannot be
reached is not asked again in the run, which says so in one line; offline, nothing changes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from kbx.config import load_config
from kbx.entities.build import reference_id, settle
from kbx.errors import BadArgument, ServiceFailed, ServiceNotFound, ServiceOffline
from kbx.linking.resolvers import (
    DATES,
    Crossref,
    OpenAlex,
    Polite,
    Settings,
)
from kbx.linking.works import agrees
from kbx.store.db import Index, WriterLease, kill_point, mark_dirty
from kbx.store.transaction import transaction

SERVICES = {"doi": ("crossref", "openalex"), "orcid": ("openalex",), "reference": ("crossref",)}
MATCH = "crossref-bibliographic"


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


def _kinds(only: list[str] | None) -> list[str]:
    kinds = only or list(SERVICES)
    unknown = [k for k in kinds if k not in SERVICES]
    if unknown:
        raise BadArgument(f"--only {unknown[0]!r}: choose from {', '.join(SERVICES)}")
    return kinds


def _done(con) -> set[tuple[str, str]]:
    return set(
        con.execute(
            "SELECT entity_id, service FROM resolutions WHERE status IN ('ok', 'not_found')"
        ).fetchall()
    )


def pending_references(con, refresh: bool = False) -> tuple[list[tuple[str, str]], int]:
    """(resolution key, text) of reference strings with no DOI yet, and how many are cached."""
    texts = [
        t
        for (t,) in con.execute(
            "SELECT DISTINCT value FROM mentions WHERE type = 'REFERENCE' AND key IS NULL "
            "ORDER BY 1"
        ).fetchall()
    ]
    done = _done(con)
    todo = [(reference_id(t), t) for t in texts]
    fresh = [(k, t) for k, t in todo if refresh or (k, MATCH) not in done]
    return fresh, len(todo) - len(fresh)


def pending(
    con, only: list[str] | None = None, refresh: bool = False
) -> tuple[list[tuple[str, str, str]], int]:
    """(entity ID, value, service) still to ask, and how many answers are cached."""
    kinds = [k for k in _kinds(only) if k != "reference"]
    rows = con.execute(
        """SELECT e.entity_id, lower(e.type) FROM entities e
           WHERE e.source = 'identifier' AND list_contains(?, lower(e.type))
           ORDER BY e.entity_id""",
        [kinds],
    ).fetchall()
    done = _done(con)
    todo, cached = [], 0
    for entity_id, kind in rows:
        for service in SERVICES[kind]:
            if (entity_id, service) in done and not refresh:
                cached += 1
            else:
                todo.append((entity_id, entity_id.split(":", 1)[1], service))
    return todo, cached


QUICK_ANSWER = 0.25  # seconds: after an answer this quick the writer keeps the file


def _record(lease: WriterLease, entity_id, service, status, data=None, error=None) -> None:
    with transaction(con := lease.con()):
        if status == "failed":  # a failed --refresh keeps the answer it meant to renew
            con.execute(
                "DELETE FROM resolutions WHERE entity_id = ? AND service = ? AND status = 'failed'",
                [entity_id, service],
            )
        con.execute(
            f"INSERT OR {'IGNORE' if status == 'failed' else 'REPLACE'} INTO resolutions "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [entity_id, service, status, datetime.now(), json.dumps(data) if data else None, error],
        )
        if status != "failed":  # an answer can change the entity layer; a failure cannot
            mark_dirty(con)
    kill_point("resolve.answer")


@contextmanager
def _closing(clients: dict) -> Iterator[None]:
    """Close the service clients a run opened (their pooled connections), however it ends."""
    try:
        yield
    finally:
        for c in clients.values():
            c.close()


def _match(crossref: Crossref, text: str, settings: Settings) -> tuple[str, dict]:
    """The first candidate above the score threshold whose title and year agree with the
    reference string; "not_found" with the best candidate and why, when none does."""
    best = None
    for rank, item in enumerate(crossref.bibliographic(text), start=1):
        title = item.get("title")
        title = title if isinstance(title, str) else (title or [None])[0]
        year = _year(item)
        info = {"doi": item.get("DOI"), "score": item.get("score"), "title": title, "year": year,
                "rank": rank}  # fmt: skip
        ok, why = agrees(text, title, year)
        if (item.get("score") or 0) < settings.min_score:
            ok, why = False, f"score {item.get('score')} is below {settings.min_score:g}"
        if ok and info["doi"]:
            return "ok", info | {"why": why}
        best = best or info | {"why": why}
    return "not_found", best or {"why": "no candidates"}


def _year(item: dict) -> int | None:
    for key in DATES:
        parts = (item.get(key) or {}).get("date-parts") or [[None]]
        if parts[0] and parts[0][0]:
            return int(parts[0][0])
    return None


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
    kinds = _kinds(only)
    report = ResolveReport()
    polite = Polite(settings, sleep)
    clients: dict = {}
    offline: dict[str, str] = {}  # service: why it cannot be reached
    written = 0

    def client(service: str):
        if service not in clients:
            clients[service] = (Crossref if service == "crossref" else OpenAlex)(settings, polite)
        return clients[service]

    def ask(lease, entity_id: str, service: str, fetch: Callable[[], tuple[str, dict]]) -> None:
        """One question, its answer committed on its own; none to a service found offline."""
        nonlocal written
        host = "crossref" if service == MATCH else service
        if host in offline:
            return
        asked = time.monotonic()
        try:
            status, data = fetch()
            _record(lease, entity_id, service, status, data)
            if status == "ok":
                report.found += 1
            else:
                report.not_found += 1
        except ServiceNotFound:
            _record(lease, entity_id, service, "not_found")
            report.not_found += 1
        except ServiceFailed as e:
            _record(lease, entity_id, service, "failed", error=str(e))
            report.failures.append((entity_id, service, str(e)))
        except ServiceOffline as e:
            offline[host] = f"{host} cannot be reached ({e})"
            return
        written += 1
        if time.monotonic() - asked > QUICK_ANSWER or lease.expired:
            lease.release()  # the next answer may be as slow: readers get the file meanwhile

    def work(service: str, entity_id: str, value: str) -> tuple[str, dict]:
        c = client(service)
        return "ok", c.work(value) if entity_id.startswith("doi:") else c.author(value)

    with WriterLease(index) as lease, _closing(clients):
        wanted = "reference" in kinds
        refs, refs_cached = pending_references(lease.con(), refresh) if wanted else ([], 0)
        refs = refs[:limit] if limit else refs
        for n, (ref, text) in enumerate(refs, start=1):
            ask(lease, ref, MATCH, lambda t=text: _match(client("crossref"), t, settings))
            if progress:
                progress(n, len(refs))
        if written:
            settle(lease.con())  # matched DOIs become entities, resolved below
        todo, cached = pending(lease.con(), only, refresh)
        room = None if limit is None else max(limit - len(refs), 0)
        todo = todo[:room] if room is not None else todo
        report.todo, report.cached = len(refs) + len(todo), cached + refs_cached
        for n, (entity_id, value, service) in enumerate(todo, start=1):
            ask(lease, entity_id, service, lambda s=service, e=entity_id, v=value: work(s, e, v))
            if progress:
                progress(n, len(todo))
        settle(lease.con())  # also after a run killed before its rebuild
    report.offline = "; ".join(offline.values()) or None
    report.retried = polite.retried
    report.seconds = time.monotonic() - started
    return report
