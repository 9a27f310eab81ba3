"""``author`` on every face: the command line (``--author``, repeatable), the HTTP API and
the MCP tools, each answering what the library answers: the passages a person signed, not
those that merely name them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import httpx
import pytest
from inprocess import run_cli
from mcp import Client
from serving import serving

from kbx import api

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
CHANGELOG = (
    "pkg (1.1) unstable; urgency=medium\n\n  * Thanks to Ann Lee <ann@x.org> for the patch.\n\n"
    " -- Bob Stone <bob@x.org>  Wed, 30 Nov 2022 18:22:03 +0100\n\n"
    "pkg (1.0) unstable; urgency=low\n\n  * First upload.\n\n"
    " -- Ann Lee <ann@x.org>  Tue, 01 Feb 2022 10:00:00 +0100\n"
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("authors") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "changelog.txt").write_text(CHANGELOG)
    (root / "note.md").write_text("---\nauthor: Ann Lee\n---\n# Note\n\nA patch for pkg.\n")
    api.index(root)
    return root


def _lines(answer: dict, key: str) -> list[tuple[str, int]]:
    return sorted({(h["path"], h["start_line"]) for h in answer[key]})


def test_the_command_line_keeps_what_a_person_wrote(folder):
    r = run_cli("grep", "patch|upload", "--author", "Ann Lee", "--json", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert _lines(json.loads(r.stdout), "matches") == [("changelog.txt", 9), ("note.md", 6)]
    r = run_cli("grep", "patch|upload", "--entity", "Ann Lee", "--json", cwd=folder)
    named = _lines(json.loads(r.stdout), "matches")
    assert ("changelog.txt", 3) in named  # she is thanked in Bob's entry: named, not its author
    r = run_cli("search", "patch", "--author", "Nobody Known", cwd=folder)
    assert r.returncode == 2 and "no entity named 'Nobody Known'" in r.stderr
    r = run_cli("entity", "Ann Lee", cwd=folder)
    assert "person:ann-lee  PERSON  Ann Lee  (from byline)" in r.stdout
    assert "  e-mail: ann@x.org" in r.stdout.splitlines()
    r = run_cli("search", "patch", "--facets", cwd=folder)
    assert "  authors: Ann Lee (person:ann-lee) 1, Bob Stone (person:bob-stone) 1" in r.stdout


def test_http_and_mcp_pass_the_parameter(folder, start):
    with start(folder) as url:
        got = httpx.get(f"{url}/api/grep", params={"pattern": "patch", "author": "Bob Stone"})
        assert got.status_code == 200
        assert _lines(got.json(), "matches") == [("changelog.txt", 3)]

        async def session() -> dict:
            async with Client(f"{url}/mcp") as agent:
                s = await agent.call_tool("search", {"query": "patch", "author": ["Ann Lee"]})
                assert not s.is_error, s.content[0].text
                return s.structured_content

        searched = anyio.run(session)
    expect = api.search(
        api.Index.for_root(folder), "patch", filters=api.Filters(authors=["Ann Lee"])
    )
    assert searched == json.loads(api.json_text(api.to_json("search", expect)))
    assert {h["path"] for h in searched["hits"]} == {"note.md"}


def test_the_page_shows_who_wrote_the_passages_and_narrows_to_one(folder):
    with serving(folder, page=True) as url, httpx.Client(base_url=url, timeout=60) as page:
        html = page.get("/", params={"q": "patch"}).text
        assert "<h3>Written by</h3>" in html
        written = html.split("<h3>Written by</h3>")[1].split("</section>")[0]
        link = re.search(r'<a class="name" href="([^"]+)"[^>]*>Bob Stone</a>', written)
        assert link and "author=person%3Abob-stone" in link[1]
        narrowed = page.get(link[1].replace("&amp;", "&")).text
        assert re.findall(r'class="loc"[^>]*>([^:<]+)', narrowed) == ["changelog.txt"]
        assert "<b>author</b> Bob Stone" in narrowed  # a chip that removes it
