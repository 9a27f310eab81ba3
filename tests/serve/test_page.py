"""The web page of ``kbx serve`` in a real headless Chromium (Debian's package, driven by
Playwright through ``executable_path``) against the real server: what a person types and
clicks, what the page then shows, and what the store holds after an edit through the form.
Documents are hostile input, so one of them tries to run script in every field it has."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from helpers import ctrl_c_reaches
from playwright.sync_api import Browser, Page, expect, sync_playwright
from serving import serving

from kbx import api
from kbx.errors import BadArgument

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
DOCS = {
    "notes/cedar.md": """\
---
title: Cedar supplier approval
date: 2021-03-04
author: Ann Lee
category: process
---
# Project Cedar

Supplier approval is required for every vendor; see doi:10.1000/xyz123.

## Steps

Collect the ISO 9001 certificate from Bluefin Labs.
""",
    "notes/review-2019.md": """\
---
title: Vendor review
date: 2019-05-02
author: Ben Ortiz
category: review
---
# Vendor review

The supplier approval board met twice; Northwind Traders passed.
""",
    "notes/audit-2022.md": """\
---
title: Supplier audit
date: 2022-09-12
author: Ann Lee
category: audit
---
# Supplier audit

Every supplier approval from 2021 was checked again; NWT was late.
""",
    "notes/hostile.md": """\
---
title: <script>alert("title")</script>
date: 2020-01-15
author: <img src=x onerror=alert(1)>
category: "\\"><b>bold</b>"
---
# <img src=y onerror=alert(2)> Heading

A supplier approval note: <script>alert(3)</script> and a **fake** marker.
""",
    "notes/hostile.txt": "Raw notes\n\nA supplier approval note: <script>alert(3)</script>, "
    "<img src=z onerror=alert(4)> and a **fake** marker.\n",
    "runbook.txt": "Runbook\n\nBack up the database nightly.\nSupplier approval again in 2022.\n",
}
CHROMIUM_MISSING = (
    "the page tests drive a real Chromium, and none was found: apt-get install chromium "
    "(Debian's package; or set KBX_CHROMIUM to a Chromium binary)"
)


def write_docs(root: Path) -> Path:
    """The folder, indexed with the rule-based recognizers, and one gazetteer entry."""
    root.mkdir(parents=True)
    (root / "kbx.toml").write_text(RULES_ONLY)
    for rel, text in DOCS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    api.index(root)
    index = api.Index.for_root(root)
    api.gazetteer_add(index, "Northwind Traders", "ORG", ["NWT"], actor="setup")
    return root


def chromium() -> str:
    """Debian's Chromium (or KBX_CHROMIUM); its absence fails the tests, never skips them."""
    found = os.environ.get("KBX_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.fail(CHROMIUM_MISSING, pytrace=False)
    return found


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    return write_docs(tmp_path_factory.mktemp("page") / "docs")


@pytest.fixture(scope="module")
def url(docs):
    with serving(docs, page=True) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, url: str):
    """A fresh page whose script errors and dialogs (a document's script running) fail it."""
    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    p = context.new_page()
    troubles: list[str] = []
    p.on("dialog", lambda d: (troubles.append(f"dialog: {d.message}"), d.dismiss()))
    p.on("pageerror", lambda e: troubles.append(f"script error: {e}"))
    p.on(
        "console",
        lambda m: "Content Security Policy" in m.text and troubles.append(f"refused: {m.text}"),
    )  # the page's own script or style refused by its policy
    yield p
    context.close()
    assert troubles == []


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def cites(page: Page) -> list[str]:
    return page.locator(".hits .cite .loc").all_inner_texts()


def history(page: Page) -> list[list[str]]:
    """The provenance table's rows, without their times."""
    rows = page.locator(".history tbody tr")
    expect(rows.first).to_be_visible()
    return [[c.strip() for c in r.locator("td").all_inner_texts()[1:]] for r in rows.all()]


def library_cites(docs: Path, q: str, **filters) -> list[str]:
    r = api.search(api.Index.for_root(docs), q, k=8, filters=api.Filters(**filters))
    return [f"{h.path}:{h.start_line}-{h.end_line}" for h in r.hits]


def test_slash_focuses_the_box_and_enter_searches(page: Page, docs):
    page.goto("/gazetteer")
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("supplier approval")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/\?q=supplier"))
    assert query(page) == {"q": ["supplier approval"]}  # the empty filters stay out of it
    assert cites(page) == library_cites(docs, "supplier approval")
    first = page.locator(".hit").first
    (hit,) = api.search(api.Index.for_root(docs), "supplier approval", k=1).hits
    expect(first.locator(".hash")).to_have_text(f"#{hit.hash[:12]}")
    expect(first.locator("mark").first).to_have_text(re.compile("supplier", re.I))
    expect(page.locator(".exact li").first).to_contain_text("Supplier approval")
    page.keyboard.press("Escape")  # out of the box: j and k walk the citations
    page.keyboard.press("j")
    expect(page.locator(".hits .loc").first).to_be_focused()
    page.keyboard.press("j")
    expect(page.locator(".hits .loc").nth(1)).to_be_focused()
    page.keyboard.press("k")
    expect(page.locator(".hits .loc").first).to_be_focused()


def test_a_facet_narrows_and_its_chip_widens_again(page: Page, docs):
    page.goto("/?q=supplier+approval")
    ann = page.locator(".facets .entities li", has_text="Ann Lee")
    r = api.search(api.Index.for_root(docs), "supplier approval", facets=True)
    (count,) = [e["count"] for e in r.facets.entities.values if e["label"] == "Ann Lee"]
    expect(ann.locator(".n")).to_have_text(str(count))
    ann.locator("a.name").click()
    page.wait_for_url(re.compile("entity=person"))
    assert query(page)["entity"] == ["person:ann-lee"]
    narrowed = library_cites(docs, "supplier approval", entities=["person:ann-lee"])
    assert cites(page) == narrowed and len(narrowed) < len(library_cites(docs, "supplier approval"))
    assert {c.split(":")[0] for c in narrowed} == {"notes/cedar.md", "notes/audit-2022.md"}
    expect(page.locator(".facets .entities li.on", has_text="Ann Lee")).to_be_visible()
    page.locator(".chip", has_text="Ann Lee").click()
    page.wait_for_url(re.compile(r"q=supplier\+approval$"))
    assert "entity" not in query(page)


def test_more_passages_shows_the_next_ones_in_rank_order(page: Page, docs):
    page.goto("/?q=supplier&k=2")
    expect(page.locator(".summary")).to_contain_text("best 2 shown")
    page.locator("a.more").click()
    page.wait_for_url(re.compile("k=12"))
    index = api.Index.for_root(docs)
    ranked = api.search(index, "supplier", k=12).hits
    assert cites(page) == [f"{h.path}:{h.start_line}-{h.end_line}" for h in ranked]
    expect(page.locator("a.more")).to_have_count(0)  # all of them are shown


def test_a_histogram_bar_narrows_the_dates_to_its_year(page: Page, docs):
    page.goto("/?q=supplier+approval")
    bars = page.locator(".histogram .bar")
    assert [b.get_attribute("title").split(":")[0] for b in bars.all()] == [
        "2019", "2020", "2021", "2022"
    ]  # fmt: skip
    page.locator(".histogram a.bar[data-year='2022']").click()
    page.wait_for_url(re.compile("after=2022"))
    assert (query(page)["after"], query(page)["before"]) == (["2022"], ["2022"])  # inclusive
    expect(page.locator("input[name=after]")).to_have_value("2022")
    expect(page.locator("input[name=before]")).to_have_value("2022")
    narrowed = library_cites(docs, "supplier approval", after="2022", before="2022")
    assert cites(page) == narrowed
    assert {c.split(":")[0] for c in narrowed} == {"notes/audit-2022.md", "runbook.txt"}
    expect(page.locator(".histogram .bar.on")).to_have_attribute("data-year", "2022")


def test_typing_an_entity_suggests_names_and_aliases(page: Page, docs):
    page.goto("/?q=supplier")
    box = page.locator("#entity-input")
    box.press_sequentially("NWT", delay=30)  # an alias only
    option = page.locator("#entity-names option[value='gz:northwind-traders']")
    expect(option).to_be_attached()
    assert "Northwind Traders (NWT) · ORG" in option.get_attribute("label")
    box.fill("gz:northwind-traders")
    box.press("Enter")
    page.wait_for_url(re.compile("entity=gz"))
    assert cites(page) == library_cites(docs, "supplier", entities=["gz:northwind-traders"])
    assert {c.split(":")[0] for c in cites(page)} == {"notes/review-2019.md", "notes/audit-2022.md"}


def test_a_cited_passage_opens_the_document_at_its_lines(page: Page, docs):
    page.goto("/?q=certificate")
    page.locator(".hits .loc", has_text="notes/cedar.md:11-13").click()
    page.wait_for_url(re.compile(r"/doc\?path=notes%2Fcedar.md&lines=11-13"))
    marked = page.locator(".doc .line.hl")
    expect(marked).to_have_count(3)
    assert [x.get_attribute("id") for x in marked.all()] == ["L11", "L12", "L13"]
    expect(marked.nth(2)).to_contain_text("Collect the ISO 9001 certificate from Bluefin Labs.")
    expect(marked.first).to_be_in_viewport()
    excerpt = api.read(api.Index.for_root(docs), "notes/cedar.md")
    expect(page.locator(".doc .line")).to_have_count(len(excerpt.lines))
    expect(page.locator(".dochead .hash")).to_have_text(f"#{excerpt.hash[:12]}")
    expect(page.locator(".changed")).to_have_count(0)


def test_an_entity_page_shows_aliases_history_and_mentions_newest_first(page: Page, docs):
    page.goto("/?q=supplier+approval")
    page.locator(".facets .entities li", has_text="Ann Lee").locator("a.go").click()
    page.wait_for_url(re.compile("/entity/person:ann-lee"))
    expect(page.locator("h1")).to_contain_text("Ann Lee")
    detail = api.entity(api.Index.for_root(docs), "person:ann-lee")
    expect(page.locator(".aliases li")).to_have_text(detail.aliases)
    dates = page.locator(".mentions td.at").all_inner_texts()
    assert dates == [str(m["doc_date"]) for m in detail.mentions]
    assert dates == sorted(dates, reverse=True) and len(set(dates)) == 2

    page.goto("/entity/gz:northwind-traders")
    expect(page.locator(".aliases li")).to_have_text(["NWT", "Northwind Traders"])
    assert history(page) == [["add", "setup", "", ""]]


def test_an_entry_added_and_retracted_through_the_form(page: Page, docs):
    page.goto("/gazetteer")
    form = page.locator("form.add")
    form.locator("input[name=name]").fill("Bluefin Labs")
    form.locator("select[name=type]").select_option("ORG")
    form.locator("textarea[name=alias]").fill("Bluefin\nBFL")
    form.locator("input[name=by]").fill("person:tester")
    form.locator("input[name=source]").fill("notes/cedar.md")
    form.locator("input[name=note]").fill("seen in the steps")
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile("/entity/gz:bluefin-labs$"))
    expect(page.locator("h1")).to_contain_text("Bluefin Labs")
    expect(page.locator(".aliases li")).to_have_text(["BFL", "Bluefin", "Bluefin Labs"])
    assert history(page) == [["add", "person:tester", "notes/cedar.md", "seen in the steps"]]
    expect(page.locator(".mentions .loc")).to_have_text(["notes/cedar.md:13"])
    index = api.Index.for_root(docs)
    entry = next(x for x in api.gazetteer_list(index) if x["entry_id"] == "gz:bluefin-labs")
    assert (entry["added_by"], entry["source"], entry["note"]) == (
        "person:tester", "notes/cedar.md", "seen in the steps"
    )  # fmt: skip
    assert sorted(entry["aliases"]) == ["BFL", "Bluefin", "Bluefin Labs"]

    retract = page.locator("form[data-edit=retract]")
    retract.locator("input[name=why]").fill("a test entry")
    expect(retract.locator("input[name=by]")).to_have_value("person:tester")  # remembered
    retract.locator("button[type=submit]").click()
    expect(page.locator(".badge", has_text="retracted")).to_be_visible()
    assert page.url.endswith("/entity/gz:bluefin-labs")
    expect(page.locator(".meta")).to_contain_text("by person:tester: a test entry")
    entry = next(
        x for x in api.gazetteer_list(index, retracted=True) if x["entry_id"] == "gz:bluefin-labs"
    )
    assert (entry["retracted_by"], entry["why"]) == ("person:tester", "a test entry")
    with pytest.raises(BadArgument, match="no entity named"):
        api.search(index, "certificate", filters=api.Filters(entities=["gz:bluefin-labs"]))
    page.goto("/gazetteer")
    expect(page.locator("details.gone li")).to_contain_text(["Bluefin Labs"])


def test_a_refused_edit_says_why_under_the_form_and_changes_nothing(page: Page, docs):
    before = api.gazetteer_list(api.Index.for_root(docs), retracted=True)
    page.goto("/gazetteer")
    form = page.locator("form.add")
    form.locator("input[name=name]").fill("Northwind Traders")  # already an entry
    form.locator("select[name=type]").select_option("ORG")
    form.locator("input[name=by]").fill("person:tester")
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_contain_text("Northwind Traders")
    assert page.url.endswith("/gazetteer")
    assert api.gazetteer_list(api.Index.for_root(docs), retracted=True) == before


FOREIGN = """<!doctype html><title>another site</title>
<form id="f" method="post" action="{url}/gazetteer">
  <input name="action" value="add"><input name="name" value="Evil Corp">
  <input name="type" value="ORG"><input name="by" value="evil"><button>go</button>
</form>
<script>
  window.fetched = fetch("{url}/gazetteer", {{method: "POST", headers: {{"Content-Type":
    "application/json"}}, body: JSON.stringify({{action: "add", name: "Evil Corp",
    type: "ORG", by: "evil"}})}}).then(r => r.status, e => "refused: " + e);
</script>"""


def test_another_sites_page_cannot_edit(browser: Browser, url, docs):
    before = api.gazetteer_list(api.Index.for_root(docs), retracted=True)
    context = browser.new_context()
    try:
        p = context.new_page()
        p.route("http://evil.test/", lambda r: r.fulfill(body=FOREIGN.format(url=url),
                                                          content_type="text/html"))  # fmt: skip
        p.goto("http://evil.test/")
        assert str(p.evaluate("window.fetched")).startswith("refused")  # no CORS, no answer
        with p.expect_response(f"{url}/gazetteer") as posted:
            p.locator("#f button").click()
        assert posted.value.status == 403
        assert posted.value.json()["error"] == "ForeignOrigin"
    finally:
        context.close()
    r = httpx.post(f"{url}/gazetteer", json={"action": "add", "name": "Evil Corp", "type": "ORG",
                   "by": "evil"}, headers={"Origin": "http://evil.test"})  # fmt: skip
    assert r.status_code == 403
    assert api.gazetteer_list(api.Index.for_root(docs), retracted=True) == before


def test_a_shared_link_renders_results_without_javascript(browser: Browser, url, docs):
    context = browser.new_context(base_url=url, java_script_enabled=False)
    try:
        p = context.new_page()
        p.goto("/?q=supplier+approval&entity=person%3Aann-lee&after=2021&before=2023")
        expected = library_cites(
            docs, "supplier approval", entities=["person:ann-lee"], after="2021", before="2023"
        )
        assert expected and cites(p) == expected
        expect(p.locator(".chip")).to_have_count(3)
        expect(p.locator(".facets .histogram a.bar")).not_to_have_count(0)
        expect(p.locator("#q")).to_have_value("supplier approval")
        p.locator(".hits .loc").first.click()  # the document view needs no script either
        expect(p.locator(".doc .line.hl").first).to_be_visible()
    finally:
        context.close()


def test_hostile_documents_are_shown_as_text(page: Page):
    page.goto("/?q=supplier+approval+note")
    raw = page.locator(".hit", has_text="notes/hostile.txt").locator(".snippet")
    expect(raw).to_contain_text("<script>alert(3)</script>, <img src=z onerror=alert(4)>")
    titled = page.locator(".hit", has_text="notes/hostile.md").locator(".crumbs")
    expect(titled).to_have_text('<script>alert("title")</script> › Heading')
    assert page.locator("main img, main script, main b").count() == 0
    page.goto("/doc?path=notes/hostile.md&lines=1-5")
    expect(page.locator(".doc")).to_contain_text("author: <img src=x onerror=alert(1)>")
    assert page.locator("main img, main script, main b").count() == 0
    page.goto("/?q=supplier")
    author = page.locator(".facets .entities li", has_text="<img src=x onerror=alert(1)>")
    author.locator("a.go").click()
    expect(page.locator("h1")).to_contain_text("<img src=x onerror=alert(1)>")
    assert page.locator("main img, main script, main b").count() == 0


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/?q=supplier&after=someday", 400, "give a date as YYYY, YYYY-MM or YYYY-MM-DD"),
        ("/?q=supplier&entity=Nobody", 400, "no entity named 'Nobody'"),
        ("/?q=supplier&colour=red", 400, "takes no colour"),
        ("/doc?path=../secret.md", 403, "paths are relative to the indexed root"),
        ("/doc?path=notes/cedar.md&lines=9-2", 400, "lines is START or START-END"),
        ("/doc?path=notes/cedar.md&lines=400", 400, "has 13 lines; line 400 does not exist"),
        ("/doc?path=nothere.md", 400, "no such file"),
        ("/entity/nobody", 400, "no entity named 'nobody'"),
    ],
)
def test_a_bad_request_is_a_page_with_one_clear_message(page: Page, path, status, words):
    answered = page.goto(path)
    assert answered.status == status
    expect(page.locator(".problem .message")).to_contain_text(words)
    assert "Traceback" not in page.content()


def test_kbx_serve_prints_the_pages_address_and_serves_it_there(docs):
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbx", "serve", "--port", "0", "--no-watch"],
        cwd=docs,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_reaches,
    )
    try:
        said = [proc.stderr.readline() for _ in range(2)]
        m = re.fullmatch(r"kbx serve: the page at (http://127\.0\.0\.1:\d+/)\n", said[1])
        assert m, said
        r = httpx.get(m.group(1), params={"q": "certificate"}, timeout=60)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "notes/cedar.md:11-13" in r.text
        assert "default-src 'none'" in r.headers["content-security-policy"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.stderr.close()
