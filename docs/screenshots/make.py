"""Screenshots of ``kbx serve``'s page for the README: a copy of ``examples/`` indexed with
the rule-based recognizers and a few gazetteer entries, served on a free loopback port,
and photographed by Debian's Chromium through Playwright (``apt-get install chromium``).

    .venv/bin/python docs/screenshots/make.py     # writes docs/screenshots/*.png

Run it again after changing the page (serve/page.py, serve/web/) and look at the images.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from kbx import api
from kbx.serve.http import bound_socket, server
from kbx.serve.live import LiveIndex
from kbx.serve.page import page_routes
from kbx.serve.security import Policy

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
ENTRIES = [  # (name, type, aliases, note): what a reader of these notes would add
    ("Project Cedar", "PROJECT", ["Cedar"], "the supplier approval effort"),
    ("Elena Petrova", "PERSON", ["Elena"], "procurement lead"),
    ("Ravi Menon", "PERSON", [], None),
    ("Harbor", "PRODUCT", [], "the payments service"),
]
SIZE = {"width": 1280, "height": 900}


def folder(work: Path) -> Path:
    """``examples/`` copied (its index left behind), indexed, with the entries added."""
    root = work / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".kbx", "*.py"))
    (root / "kbx.toml").write_text(RULES_ONLY)
    api.index(root)
    index = api.Index.for_root(root)
    for name, type_, aliases, note in ENTRIES:
        source = "notes/cedar-supplier-approval.md" if type_ != "PRODUCT" else None
        api.gazetteer_add(
            index, name, type_, aliases, actor="person:maya", source=source, note=note
        )
    return root


@contextlib.contextmanager
def serving(root: Path):
    sock = bound_socket("127.0.0.1", 0)
    policy = Policy("127.0.0.1", sock.getsockname()[1])
    live = LiveIndex.of(api.Index.for_root(root))
    s = server(live, policy, routes=page_routes(live))
    thread = threading.Thread(target=s.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not s.started:
        if not thread.is_alive():
            raise SystemExit("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{policy.port}"
    finally:
        s.should_exit = True
        thread.join(30)
        sock.close()


def shoot(url: str, out: Path, chromium: str) -> list[Path]:
    made = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_context(base_url=url, viewport=SIZE).new_page()

        def save(name: str) -> None:
            page.wait_for_load_state("networkidle")
            path = out / f"{name}.png"
            page.screenshot(path=path)
            made.append(path)

        page.goto("/?q=supplier+approval&k=6")
        save("search")
        page.locator(".hits .cite .loc").first.click()
        save("document")
        page.goto("/entity/gz:project-cedar")
        save("entity")
        page.goto("/gazetteer")
        form = page.locator("form.add")
        form.locator("input[name=name]").fill("Samuel Achebe")
        form.locator("select[name=type]").select_option("PERSON")
        form.locator("textarea[name=alias]").fill("Sam Achebe")
        form.locator("input[name=by]").fill("person:maya")
        form.locator("input[name=source]").fill("postmortems/2022-06-14-err-4021.md")
        save("gazetteer")
        browser.close()
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the PNG files")
    args = parser.parse_args()
    chromium = os.environ.get("KBX_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        sys.exit("no Chromium found: apt-get install chromium (or set KBX_CHROMIUM)")
    with tempfile.TemporaryDirectory() as work:
        root = folder(Path(work))
        with serving(root) as url:
            for path in shoot(url, args.out, chromium):
                print(path)


if __name__ == "__main__":
    main()
