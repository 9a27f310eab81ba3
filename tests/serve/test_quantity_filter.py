"""``quantity`` on every face: the command line (``--quantity``, repeatable, its error line
and exit code, the facet in text), the HTTP API (a repeatable parameter), the MCP tools and
the page (a control, the facet's bins as links, the filter as a chip), each answering what
the library answers."""

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
DOCS = {
    "heavy.md": "The parcel weighs 1500 g on a 4 GB card.",
    "light.md": "The parcel weighs 900 g.",
    "disk.md": "The parcel disk holds 8 GiB.",
}


@pytest.fixture(scope="module")
def parcels(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("qserve") / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text(RULES_ONLY)
    for name, text in DOCS.items():
        (root / name).write_text(f"# {name}\n\n{text}\n")
    api.index(root)
    return root


def _cli(root: Path, *args: str):
    r = run_cli(*args, cwd=root)
    assert r.returncode == 0, r.stderr
    return r


def _paths(answer: dict, key: str = "hits") -> list[str]:
    return sorted({h["path"] for h in answer[key]})


def test_the_command_line_takes_repeated_quantities_and_says_a_bad_one_in_one_line(parcels):
    r = _cli(parcels, "search", "parcel", "--quantity", "mass>1kg", "--json")
    assert _paths(json.loads(r.stdout)) == ["heavy.md"]
    r = _cli(parcels, "search", "parcel", "--quantity", ">1 kg", "--quantity", "size>4GB")
    assert r.stdout == "'parcel' matches 3 passages without its filters; --quantity excludes them\n"
    r = _cli(parcels, "grep", "parcel", "--quantity", "size>4GB", "--json")
    assert _paths(json.loads(r.stdout), "matches") == ["disk.md"]
    r = run_cli("search", "parcel", "--quantity", "mass>4GB", cwd=parcels)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "error: --quantity 'mass>4GB': 4GB is data (B), not mass (kg) (e.g. mass>1kg, "
        "size<=4GB, temperature>=30°C, mass=1kg..5kg, >5 mg, usd>=1000)"
    ]
    r = _cli(parcels, "search", "parcel", "--facets")
    assert "  mass (kg): 2 passages (1 g–1 kg 1, 1 kg–1 t 1)" in r.stdout
    assert "  data (B): 2 passages (1 GB–1 TB 2)" in r.stdout


def test_http_and_mcp_pass_the_parameter(parcels, start):
    with start(parcels) as url:
        got = httpx.get(f"{url}/api/search", params={"q": "parcel", "quantity": "mass>1kg"})
        assert got.status_code == 200 and _paths(got.json()) == ["heavy.md"]
        both = httpx.get(
            f"{url}/api/search",
            params=[("q", "parcel"), ("quantity", ">1 g"), ("quantity", "size<5GB")],
        )
        assert _paths(both.json()) == ["heavy.md"]  # repeated: all must match
        grep = httpx.get(f"{url}/api/grep", params={"pattern": "parcel", "quantity": "size>4GB"})
        assert _paths(grep.json(), "matches") == ["disk.md"]
        bad = httpx.get(f"{url}/api/search", params={"q": "parcel", "quantity": "mass>5 blorps"})
        assert bad.status_code == 400 and "unknown unit 'blorps'" in bad.json()["message"]

        async def session() -> tuple[dict, dict]:
            async with Client(f"{url}/mcp") as agent:
                s = await agent.call_tool("search", {"query": "parcel", "quantity": ["mass<1kg"]})
                g = await agent.call_tool("grep", {"pattern": "parcel", "quantity": ["size>4GB"]})
                assert not s.is_error and not g.is_error, s.content[0].text
                return s.structured_content, g.structured_content

        searched, grepped = anyio.run(session)
    assert _paths(searched) == ["light.md"] and _paths(grepped, "matches") == ["disk.md"]
    expect = api.search(
        api.Index.for_root(parcels), "parcel", filters=api.Filters(quantities=["mass<1kg"])
    )
    assert searched == json.loads(api.json_text(api.to_json("search", expect)))


def test_the_page_shows_the_histogram_whose_bins_narrow_to_their_filter(parcels):
    with serving(parcels, page=True) as url, httpx.Client(base_url=url, timeout=60) as page:
        html = page.get("/", params={"q": "parcel"}).text
        link = re.search(r'<a class="name" href="([^"]+)"[^>]*>1 kg–1 t</a>', html)
        assert link and "<h3>Mass <span" in html
        narrowed = page.get(link[1].replace("&amp;", "&")).text
        assert re.findall(r'class="loc"[^>]*>([^:<]+)', narrowed) == ["heavy.md"]
        assert "<b>quantity</b> mass=1 kg..999.999 kg" in narrowed  # a chip that removes it
        bad = page.get("/", params={"q": "parcel", "quantity": "mass>4GB"})
        assert bad.status_code == 400 and "4GB is data (B), not mass (kg)" in bad.text
