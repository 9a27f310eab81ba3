"""kbx resolve against a loopback server standing in for Crossref and OpenAlex: answers
cached and turned into facets, every fault handled and counted, offline said once, and a
killed run losing at most the answer in flight."""

from __future__ import annotations

import json
import multiprocessing
import signal
import time
from pathlib import Path

import pytest
from helpers import Loopback, attached, crossref_work
from inprocess import run_cli

from kbx.entities.lookup import entity
from kbx.entities.resolve import resolve
from kbx.indexing.ingest import index
from kbx.linking.resolvers import Settings
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.references import ReferenceRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.filters import Filters
from kbx.search.search import search
from kbx.store.db import Index

SEL4 = "10.1145/1629575.1629596"
WORK = crossref_work(
    SEL4,
    "seL4: formal verification of an OS kernel",
    2009,
    [("Gerwin", "Klein", "0000-0002-1825-0097"), ("Kevin", "Elphinstone", None)],
    "SOSP",
)
OPENALEX_WORK = {"id": "https://openalex.org/W2100837269", "publication_year": 2009}


def _corpus(root: Path, dois: list[str]) -> Index:
    root.mkdir()
    for i, doi in enumerate(dois):
        (root / f"p{i}.md").write_text(f"# Paper {i}\n\nThe kernel paper is doi:{doi} here.\n")
    (root / "plain.md").write_text("# Plain\n\nNo identifiers, just a kernel.\n")
    idx = Index.for_root(root)
    index(root, registry=Registry([IdentifierRecognizer()]))
    return idx


def _settings(server: Loopback, **kw) -> Settings:
    base = {"rate": 1000.0, "timeout": 0.5, "retries": 2, "backoff": 0.01, "mailto": "kb@x.org"}
    return Settings(crossref_url=server.url, openalex_url=server.url, **(base | kw))


def _rows(idx: Index) -> list[tuple]:
    with attached(idx.db) as con:
        return con.execute(
            "SELECT entity_id, service, status, error FROM resolutions ORDER BY 1, 2"
        ).fetchall()


@pytest.fixture
def server():
    s = Loopback(
        {
            f"/works/{SEL4}": [(200, WORK, {})],
            "/works/https://doi.org/": [(200, OPENALEX_WORK, {})],
        }
    )
    yield s
    s.close()


def test_answers_are_cached_and_become_facets(tmp_path, server):
    idx = _corpus(tmp_path / "docs", [SEL4])
    waits: list[float] = []
    r = resolve(idx, settings=_settings(server), sleep=waits.append)
    assert (r.found, r.not_found, r.failures, r.offline) == (2, 0, [], None)
    crossref = [h for p, h in server.requests if p.startswith("/works/10.")]
    assert "mailto:kb@x.org" in crossref[0]["User-Agent"]  # the polite pool
    openalex = [h for p, h in server.requests if p.startswith("/works/https:")]
    assert openalex[0]["From"] == "kb@x.org"  # as pyalex sends it
    e = entity(idx, f"doi:{SEL4}")
    assert e.label == "seL4: formal verification of an OS kernel"
    assert (e.meta["year"], e.meta["venue"], e.meta["openalex"]) == (2009, "SOSP", "W2100837269")
    assert "W2100837269" in e.aliases
    # the citing passage names the work's authors and venue: facets and filters
    hits = search(idx, "kernel", filters=Filters(entities=["orcid:0000-0002-1825-0097"])).hits
    assert [h.path for h in hits] == ["p0.md"]
    assert [h.path for h in search(idx, "kernel", filters=Filters(entities=["SOSP"])).hits] == [
        "p0.md"
    ]
    assert entity(idx, "W2100837269").entity_id == f"doi:{SEL4}"
    cited = search(idx, "kernel", facets=True).facets.cited_years
    assert cited.values == [{"year": 2009, "count": 1}]
    asked = len(server.requests)
    again = resolve(idx, settings=_settings(server))
    assert (again.todo, again.cached, len(server.requests)) == (0, 2, asked)  # cached
    resolve(idx, settings=_settings(server), refresh=True)
    assert len(server.requests) == asked + 2


def test_every_fault_is_handled_counted_and_nothing_is_corrupted(tmp_path):
    dois = {
        "retry_after": "10.5555/ra1",
        "retry_no_header": "10.5555/rn1",
        "always_500": "10.5555/s500",
        "hang": "10.5555/hang",
        "malformed": "10.5555/bad",
        "moved": "10.5555/old",
        "missing": "10.5555/gone",
    }
    target = crossref_work("10.5555/new", "The new one", 2020, [], "J")
    ok = crossref_work("10.5555/x", "Fine", 2021, [], "J")
    server = Loopback(
        {
            f"/works/{dois['retry_after']}": [(429, {}, {"Retry-After": "7"}), (200, ok, {})],
            f"/works/{dois['retry_no_header']}": [(429, {}, {}), (200, ok, {})],
            f"/works/{dois['always_500']}": [(500, {"message": "down"}, {})],
            f"/works/{dois['hang']}": [(200, "HANG", {})],
            f"/works/{dois['malformed']}": [(200, b"{not json", {})],
            f"/works/{dois['moved']}": [(301, {}, {"Location": "/works/10.5555/new"})],
            "/works/10.5555/new": [(200, target, {})],
            f"/works/{dois['missing']}": [(404, {"message": "Resource not found."}, {})],
            "/works/https://doi.org/": [(404, {}, {})],
        },
        hang=1.5,
    )
    try:
        idx = _corpus(tmp_path / "docs", list(dois.values()))
        waits: list[float] = []
        r = resolve(idx, settings=_settings(server), sleep=waits.append)
        assert 7.0 in waits  # Retry-After honoured
        failed = {e.split(":", 1)[1]: why for e, svc, why in r.failures if svc == "crossref"}
        assert failed == {
            dois["always_500"]: "HTTP 500, after 3 tries",
            dois["hang"]: "timed out after 0.5 s, after 3 tries",
            dois["malformed"]: failed[dois["malformed"]],
        }
        assert failed[dois["malformed"]].startswith("malformed JSON")
        status = {(e, s): st for e, s, st, _ in _rows(idx)}
        assert len(status) == 2 * len(dois)  # one row per identifier and service
        assert status[(f"doi:{dois['retry_after']}", "crossref")] == "ok"
        assert status[(f"doi:{dois['retry_no_header']}", "crossref")] == "ok"
        assert status[(f"doi:{dois['missing']}", "crossref")] == "not_found"
        assert entity(idx, f"doi:{dois['moved']}").label == "The new one"  # redirect followed
        # next run: failures are asked again, answers and 404s are not
        before = len(server.requests)
        again = resolve(idx, settings=_settings(server, retries=0), sleep=lambda s: None)
        asked = {p for p, _ in server.requests[before:]}
        assert asked == {f"/works/{dois[k]}" for k in ("always_500", "hang", "malformed")}
        assert again.cached == 2 * len(dois) - 3
        assert search(idx, "kernel").hits  # the store still answers
    finally:
        server.close()


def test_offline_is_one_line_and_changes_nothing(tmp_path):
    idx = _corpus(tmp_path / "docs", [SEL4])
    closed = Settings(crossref_url="http://127.0.0.1:9", openalex_url="http://127.0.0.1:9")
    r = resolve(idx, settings=closed)
    assert r.offline and r.offline.startswith("crossref cannot be reached")
    assert (r.found, _rows(idx)) == (0, [])
    assert search(idx, "kernel").hits
    env = {"KBX_CROSSREF_URL": "http://127.0.0.1:9", "KBX_OPENALEX_URL": "http://127.0.0.1:9"}
    out = run_cli("resolve", cwd=tmp_path / "docs", env=env)
    assert out.returncode == 0 and out.stdout.startswith("offline: crossref cannot be reached")


def test_a_kill_during_resolve_loses_only_the_answer_in_flight(tmp_path):
    dois = [f"10.5555/k{i}" for i in range(4)]
    records = {
        f"/works/{d}": [(200, crossref_work(d, f"Work {d}", 2020, [], "J"), {})] for d in dois
    }
    records[f"/works/{dois[1]}"] = [(200, "HANG", {})]  # the second crossref answer never comes
    server = Loopback(records | {"/works/https://doi.org/": [(404, {}, {})]}, hang=60)
    try:
        idx = _corpus(tmp_path / "docs", dois)
        url = server.url
        settings = Settings(crossref_url=url, openalex_url=url, rate=1000, timeout=60)
        child = multiprocessing.get_context("fork").Process(
            target=resolve, args=(idx,), kwargs={"only": ["doi"], "settings": settings}
        )  # a forked child, killed while it waits for the second answer
        child.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(p == f"/works/{dois[1]}" for p, _ in server.requests):
                break
            time.sleep(0.05)
        time.sleep(0.3)
        child.kill()
        child.join()
        assert child.exitcode == -signal.SIGKILL
        rows = _rows(idx)
        assert [(e, s, st) for e, s, st, _ in rows] == [
            (f"doi:{dois[0]}", "crossref", "ok"),
            (f"doi:{dois[0]}", "openalex", "not_found"),
        ]
        with attached(idx.db) as con:
            assert json.loads(con.execute("SELECT data FROM resolutions LIMIT 1").fetchone()[0])
        server.routes[f"/works/{dois[1]}"] = records[f"/works/{dois[0]}"]
        r = resolve(idx, settings=_settings(server))
        assert r.cached == 2 and r.found == 3 and len(_rows(idx)) == 8
    finally:
        server.close()


def test_the_command_reports_and_index_can_resolve(tmp_path, server):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "p.md").write_text(f"# P\n\nSee doi:{SEL4}.\n")
    (root / "kbx.toml").write_text(
        f'[recognizers]\ndisable = ["spacy"]\n\n[resolve]\nmailto = "kb@x.org"\nrate = 1000\n'
        f'crossref_url = "{server.url}"\nopenalex_url = "{server.url}"\n'
    )
    r = run_cli("index", str(root), "--resolve", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["resolve"]["found"] == 2
    r = run_cli("resolve", "--only", "isbn", cwd=root)
    assert r.returncode == 2 and "--only 'isbn': choose from doi, orcid, reference" in r.stderr
    r = run_cli("entity", SEL4, "--json", cwd=root)
    assert json.loads(r.stdout)["meta"]["year"] == 2009


def _candidate(doi: str, title: str, year: int, score: float) -> dict:
    return {"DOI": doi, "title": [title], "issued": {"date-parts": [[year]]}, "score": score}


def _found(*items: dict) -> tuple[int, dict, dict]:
    """A Crossref work-list answer."""
    return 200, {"message": {"total-results": len(items), "items": list(items)}}, {}


def test_reference_strings_link_to_a_doi_only_when_title_and_year_agree(tmp_path):
    refs = (  # a Markdown list: one item per reference
        "1. Klein, G., Elphinstone, K. (2009). seL4: formal verification of an OS kernel. SOSP.\n"
        "2. Smith, J., Jones, K. (2001). A study of small things. Journal of Things.\n"
        "3. Vaswani, A., et al. (2017). Attention is all you need. NeurIPS.\n"
    )
    answers = [  # one answer per query, in the order kbx asks (sorted strings)
        _found(_candidate(SEL4, WORK["message"]["title"][0], 2009, 91)),
        _found(_candidate("10.5555/old", "A study of small things", 1995, 80)),
        _found(_candidate("10.5555/att", "Attention in networks", 2017, 60)),
    ]
    server = Loopback(
        {
            "/works?": answers,
            f"/works/{SEL4}": [(200, WORK, {})],
            "/works/https://doi.org/": [(404, {}, {})],
        }
    )
    try:
        root = tmp_path / "docs"
        root.mkdir()
        (root / "paper.md").write_text(f"# Paper\n\nOur kernel.\n\n## References\n\n{refs}")
        idx = Index.for_root(root)
        index(root, registry=Registry([IdentifierRecognizer(), ReferenceRecognizer()]))
        r = resolve(idx, settings=_settings(server))
        queries = [p for p, _ in server.requests if p.startswith("/works?")]
        assert len(queries) == 3 and "query.bibliographic=Klein" in queries[0]
        rows = {e: (s, st) for e, s, st, _ in _rows(idx)}
        assert sorted(st for s, st in rows.values() if s == "crossref-bibliographic") == [
            "not_found",
            "not_found",
            "ok",
        ]
        with attached(idx.db) as con:
            why = dict(
                con.execute(
                    "SELECT json_extract_string(data, '$.title'), "
                    "json_extract_string(data, '$.why') "
                    "FROM resolutions WHERE service = 'crossref-bibliographic'"
                ).fetchall()
            )
        assert why["A study of small things"] == "the year does not agree"
        assert why["Attention in networks"] == "the title does not agree"
        # the matched DOI is an entity, was resolved in the same run, and filters search
        assert r.found == 2  # the match, and then the DOI's Crossref record
        hits = search(idx, "verification", filters=Filters(entities=[f"doi:{SEL4}"])).hits
        assert [h.heading_path[-1] for h in hits] == ["References"]
        assert entity(idx, f"doi:{SEL4}").meta["venue"] == "SOSP"
    finally:
        server.close()


def test_a_slow_connect_is_retried_not_taken_for_offline():
    import httpx

    from kbx.linking.resolvers import Polite

    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise httpx.ConnectTimeout("connect timed out")
        return {"ok": True}

    waits: list[float] = []
    polite = Polite(Settings(rate=1000, retries=3, backoff=0.5), sleep=waits.append)
    assert polite.call(flaky) == {"ok": True}
    assert len(calls) == 3 and [w for w in waits if w > 0.1] == [0.5, 1.0]  # backoff, doubled
