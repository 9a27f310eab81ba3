"""What a new user met on real folders, each fixed once where it belongs, with its face:
usage errors under --json, a glob that matches no file, -k 0, --version, a passage that
several files share, export files under the umask, a wrong --hash."""

from __future__ import annotations

import json
import os
import stat

import anyio
import pytest
from inprocess import run_cli

from kbx import api
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry

SHARED = "# Pumps\n\nPrime the pump before the first run, every spring.\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("friction") / "docs"
    (root / "b").mkdir(parents=True)
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    (root / "a.md").write_text(SHARED)  # the same passage in two files
    (root / "b" / "copy.md").write_text(SHARED)
    (root / "c.md").write_text("# Valves\n\nClose the valve, then prime the pump.\n")
    index(root, registry=Registry([]))
    return root


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["search", "pump", "--afterr", "2020"], "No such option: --afterr"),
        (["search", "pump", "-k", "abc"], "Invalid value for '-k'"),
        (["search", "pump", "-k", "0"], "0 is not in the range x>=1"),
        (["grep", "--json"], "Missing argument 'pattern'"),
    ],
)
def test_a_usage_error_under_json_is_the_json_error_object(root, args, words):
    r = run_cli(*args, "--json", cwd=root)
    assert r.returncode == 2 and r.stderr == ""
    error = json.loads(r.stdout)
    assert set(error) == {"error", "code", "message", "hint"}
    assert error["error"] == "BadArgument" and error["code"] == 2 and words in error["message"]


def test_k_0_is_refused_not_the_default(root):
    r = run_cli("search", "pump", "-k", "0", cwd=root)
    assert r.returncode == 2 and "0 is not in the range x>=1" in r.stderr
    with pytest.raises(BadArgument, match="k must be from 1 to 100, got 0"):
        api.given_options(api.SearchOptions, {"query": "pump", "k": 0}, api.MCP, "search")


def test_version_is_an_option_too():
    for args in (["--version"], ["version"]):
        r = run_cli(*args)
        assert r.returncode == 0 and r.stdout.strip() == api.__dict__.get("__version__", "0.1.0")


def test_a_path_glob_that_matches_no_file_says_so(root):
    r = run_cli("search", "pump", "--path", "nope/*", cwd=root)
    assert r.returncode == 2
    assert "--path 'nope/*' matches no indexed file" in r.stderr and "a.md" in r.stderr
    r = run_cli("grep", "pump", "--path", "nope/*", "--json", cwd=root)
    assert r.returncode == 2 and "matches no indexed file" in json.loads(r.stdout)["message"]
    idx = api.Index.for_root(root)
    with pytest.raises(BadArgument, match="matches no indexed file"):
        idx.search("pump", filters=api.Filters(path="*.txt"))
    assert idx.search("pump", filters=api.Filters(path="b/*")).hits  # one that matches


def test_grep_folds_a_passage_that_several_files_share(root):
    g = api.Index.for_root(root).grep("the pump")
    shared = [m for m in g.matches if m.also_in]
    assert len(shared) == 1 and len(g.matches) == 2  # a.md (or its copy) once, and c.md
    assert {shared[0].path, *shared[0].also_in} == {"a.md", "b/copy.md"}
    assert g.files == 3 and g.left_out == 0
    r = run_cli("grep", "the pump", cwd=root)
    assert r.returncode == 0 and "(also in 1 more file)" in r.stdout
    assert len([line for line in r.stdout.splitlines() if "**the pump**" in line]) == 2


def test_export_files_and_folders_follow_the_umask(root, tmp_path):
    old = os.umask(0o022)
    try:
        r = run_cli("export", "jsonl", "--out", str(tmp_path / "m.jsonl"), cwd=root)
        assert r.returncode == 0, r.stderr
        r = run_cli("export", "brat", "--out", str(tmp_path / "brat"), cwd=root)
        assert r.returncode == 0, r.stderr
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "m.jsonl").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "brat").stat().st_mode) == 0o755


def test_export_passes_every_filter_on(root):
    r = run_cli("export", "jsonl", "--path", "nope/*", cwd=root)  # the filter reaches export
    assert r.returncode == 2 and "matches no indexed file" in r.stderr


def test_mcp_filters_take_one_value_and_the_cli_names(root):
    from kbx.serve.live import LiveIndex
    from kbx.serve.mcp import server

    live = LiveIndex.of(api.Index.for_root(root))

    async def call() -> list:
        agent = server(live)
        ok = await agent.call_tool("grep", {"pattern": "PRIME", "path": "b/*", "ignore-case": True})
        old = await agent.call_tool("grep", {"pattern": "prime", "ignore_case": True})
        one = await agent.call_tool("search", {"query": "pump", "type": "DATE", "lang": "en"})
        return [ok, old, one]

    try:
        ok, old, one = anyio.run(call)
    finally:
        live.close()
    assert not ok.is_error and ok.structured_content["total"] == 1
    assert old.is_error and "grep takes no ignore_case; it takes pattern" in old.content[0].text
    assert one.is_error  # a DATE filter on a folder with no dates: kbx's own error, one line
    assert "validation error" not in one.content[0].text


def test_facets_and_grep_read_the_same_in_the_cli_and_mcp(root):
    """One text presenter per result (kbx.present): the CLI and the MCP tools agreed on
    neither a quantity bin (``1 g–1 kg`` against ``1 g..1 kg``) nor the cited years."""
    from kbx.serve import text

    idx = api.Index.for_root(root)
    r = api.to_json("search", idx.search("pump", facets=True))
    g = api.to_json("grep", idx.grep("the pump"))
    facets = api.present.facets(r["facets"], r["mode"], r["total"])
    assert r["total"] == 2  # a passage two files share: once in the total, twice in facets
    assert facets[0] == (
        "facets of 3 matching passages, counted once per file that holds them (2 distinct)"
    )
    cli = run_cli("search", "pump", "--facets", cwd=root).stdout.splitlines()
    assert cli[-len(facets) :] == facets
    assert text.search(json.loads(api.json_text(r))).splitlines()[-len(facets) :] == facets
    assert text.grep(g).splitlines() == run_cli("grep", "the pump", cwd=root).stdout.splitlines()
    bins = [{"from": None, "to": "1 g", "count": 1}, {"from": "1 g", "to": "1 kg", "count": 2}]
    q = {"dimension": "mass", "unit": "kg", "count": 3, "bins": bins}
    shown = api.present.facets(r["facets"] | {"quantities": {"values": [q], "other": 0}}, "bm25")
    assert shown[-1] == "  mass (kg): 3 passages (< 1 g 1, 1 g–1 kg 2)"


def test_search_status_entities_and_read_read_the_same_in_the_cli_and_mcp(root):
    """One presenter per result: the MCP tools' text is the CLI's lines (MCP adding what
    the CLI sends to standard error), where the two had drifted apart."""
    from kbx.serve import text

    idx = api.Index.for_root(root)
    status = json.loads(api.json_text(api.to_json("status", idx.status())))
    assert text.status(status).splitlines() == run_cli("status", cwd=root).stdout.splitlines()
    rows = api.to_json("entities", idx.entities())
    assert text.entities(rows).splitlines() == run_cli("entities", cwd=root).stdout.splitlines()
    x = api.to_json("read", idx.read("c.md:1-3"))
    numbered = run_cli("read", "c.md:1-3", "-n", cwd=root).stdout.splitlines()
    assert text.read(x).splitlines() == ["c.md:1-3 #" + x["hash"][:12], *numbered]
    r = api.to_json("search", idx.search("valve", k=api.present.K_TEXT, exact=1))
    cli = run_cli("search", "valve", cwd=root).stdout.splitlines()
    assert text.search(r).splitlines() == cli


def test_an_entity_reads_the_same_in_the_cli_and_mcp(tmp_path):
    """The MCP tool printed mentions with their hash, the CLI an author's line as
    ``path:None``: both now print present.entity's lines."""
    from kbx.serve import text

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("---\nauthor: Ann Lee\n---\n# A\n\nBluefin Labs ships pumps.\n")
    index(root, registry=Registry([]))
    added = run_cli("gazetteer", "add", "Bluefin Labs", "-t", "ORG", "--by", "t", cwd=root)
    assert added.returncode == 0 and added.stdout.startswith("added gz:")
    idx = api.Index.for_root(root)
    sha = idx.read("a.md:1").hash[:12]
    for name, mention in (("Bluefin Labs", "a.md:6 #"), ("Ann Lee", "a.md #")):
        e = json.loads(api.json_text(api.to_json("entity", idx.entity(name))))
        cli = run_cli("entity", name, cwd=root).stdout.splitlines()
        assert text.entity(e).splitlines() == cli
        assert cli[-1].startswith(f"  {mention}{sha}  ")  # an author's: the document


def test_search_json_says_what_became_of_each_hits_file(root):
    """A hit's ``"file": "indexed"`` read as a file's name; ``since_indexed`` says it."""
    data = json.loads(run_cli("search", "valve", "--json", cwd=root).stdout)
    assert [h["since_indexed"] for h in data["hits"]] == ["unchanged"]
    assert "file" not in data["hits"][0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["grep", ""], "PATTERN is empty; it needs a Python regex"),
        (["search", "pump", "--entity", ""], "--entity is empty; it needs entity IDs"),
        (["search", "pump", "--author", " "], "--author is empty"),
        (["search", " "], "QUERY is empty; it needs words to search for"),
        (["export", "jsonl", "--path", ""], "--path is empty"),
    ],
)
def test_an_empty_pattern_query_or_filter_is_a_usage_error(root, args, said):
    """``kbx grep ''`` answered 0 matches and ``--entity ''`` CVE suggestions: an empty
    value asks for nothing, a usage error on every face (exit 2, the JSON error object)."""
    r = run_cli(*args, cwd=root)
    assert r.returncode == 2 and said in r.stderr and r.stdout == ""
    j = run_cli(*args, "--json", cwd=root)
    assert j.returncode == 2 and json.loads(j.stdout)["error"] == "BadArgument"
    assert said in json.loads(j.stdout)["message"]


@pytest.mark.parametrize("face", [api.MCP, api.HTTP])
def test_a_server_refuses_an_empty_pattern_or_filter_by_its_name(face):
    with pytest.raises(BadArgument, match="^pattern is empty"):
        api.given_options(api.GrepOptions, {"pattern": ""}, face, "grep")
    query = "q" if face == api.HTTP else "query"
    with pytest.raises(BadArgument, match="^entity is empty"):
        api.given_options(api.SearchOptions, {query: "x", "entity": ["Git", ""]}, face, "search")


def test_a_search_the_filters_emptied_says_so_and_names_the_filter(root):
    """"no passage matches" read as if the words were not there: the query matched, and
    the filter that excluded every passage is named."""
    r = run_cli("search", "valve", "--after", "2030", "--path", "c.md", cwd=root)
    assert r.returncode == 0
    said = "'valve' matches 1 passage without its filters; --after excludes it"
    assert r.stdout.splitlines() == [said] and said not in r.stderr
    data = json.loads(run_cli("search", "valve", "--after", "2030", "--json", cwd=root).stdout)
    assert data["total"] == 0 and data["notes"][0] == said
    from kbx.serve import text

    assert text.search(data) == said
    assert run_cli("search", "nothing", "--after", "2030", cwd=root).stdout == (
        "no passage matches 'nothing'\n"
    )


def test_a_long_query_is_said_back_shortened(root):
    query = "pneumatic " * 40
    r = run_cli("search", query, cwd=root)
    assert r.stdout == f"no passage matches {query[:80]!r}…\n"
    g = run_cli("grep", "(" + query, cwd=root)
    assert g.returncode == 2 and query[:100] not in g.stderr and "…" in g.stderr


def test_an_empty_file_is_skipped_as_empty_not_failed(tmp_path):
    """A 0-byte file was listed as failed by `kbx index` and `kbx status`."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    (root / "a.md").write_text("# A\n\nSome words.\n")
    (root / "empty.md").write_bytes(b"")
    r = run_cli("index", str(root))
    assert r.returncode == 0 and "0 failed, 1 skipped" in r.stdout
    assert "  - empty.md (skipped): empty file" in r.stdout.splitlines()
    status = run_cli("status", cwd=root).stdout.splitlines()
    assert "documents  2 (1 ok, 1 skipped)" in status
    assert "  - empty.md (skipped): empty file" in status
    again = json.loads(run_cli("index", str(root), "--json").stdout)
    assert (again["failed"], again["skipped"]) == (0, 1)


def test_a_ctrl_c_that_duckdb_reports_as_its_own_error_is_an_interruption():
    import duckdb

    from kbx.cli.app import _interrupted

    assert _interrupted(RuntimeError("Query interrupted"))
    assert _interrupted(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("cleanup failed") from None
    except ValueError as e:
        assert not _interrupted(e)  # `from None`: no cause kept, a bug like any other
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as k:
            raise RuntimeError("commit failed") from k
    except RuntimeError as e:
        assert _interrupted(e)
    assert not _interrupted(RuntimeError("disk full"))
