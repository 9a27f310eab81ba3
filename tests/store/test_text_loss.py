"""A file its parser failed on in places: the text there is read as plain text, and
``kbx index`` and ``kbx status`` say so (issue 42)."""

from __future__ import annotations

from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.search import search
from kbx.search.status import status
from kbx.store.db import Index

BROKEN = (
    "\\documentclass{article}\n\\begin{document}\n\\section{Units}\n"
    "A width of 32\\[pt] is fine.\n\n\\section{Later}\nquinceword after it.\n\\end{document}\n"
)


def test_a_latex_file_partly_read_as_text_is_searchable_and_said(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "units.tex").write_text(BROKEN)
    (root / "fine.md").write_text("# Fine\n\nplumword\n")
    r = index(root, registry=Registry([]), workers=1)
    assert (r.new, r.failed) == (2, 0)
    [note] = r.failures
    assert note["path"] == "units.tex" and note["status"] == "ok"
    assert note["error"].startswith("partly read as plain text") and "line 4" in note["error"]
    idx = Index.for_root(root)
    [hit] = search(idx, "quinceword").hits
    assert (hit.path, hit.start_line) == ("units.tex", 6)
    [listed] = status(idx).failures
    assert listed["path"] == "units.tex" and "unclosed \\[" in listed["error"]
    (root / "units.tex").write_text(BROKEN.replace("32\\[pt]", "32 pt"))
    index(root, registry=Registry([]), workers=1)
    assert status(idx).failures == []  # fixed, and no longer said


def test_a_pdf_with_pages_of_images_only_is_said_beside_the_file(tmp_path):
    """A PDF of 3 pages, one scanned, was stored as read whole: the page's warning lived
    only in the documents table, while a LaTeX file read in part was said."""
    from helpers import make_pdf

    root = tmp_path / "docs"
    root.mkdir()
    make_pdf(root / "mixed.pdf", ["Kernel proofs on page one.", None, "Heap sizes here."])
    r = index(root, registry=Registry([]), workers=1)
    [note] = r.failures
    assert note["path"] == "mixed.pdf" and note["status"] == "ok"
    assert note["error"] == "pages with no text layer (images only?): 1 of 3 (2)"
    [listed] = status(Index.for_root(root)).failures
    assert listed["path"] == "mixed.pdf" and "1 of 3" in listed["error"]
