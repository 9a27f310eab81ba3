"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import HTML, LATEX, MARKDOWN, TEXT, make_pdf


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder with one document of each format, an ignored draft and a hidden folder."""
    root = tmp_path / "docs"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "cedar.md").write_text(MARKDOWN)
    (root / "web.html").write_text(HTML)
    (root / "paper.tex").write_text(LATEX)
    (root / "runbook.txt").write_bytes(TEXT.encode())
    make_pdf(root / "report.pdf", ["First page about kernels.", None, "Third page: seL4 proofs."])
    (root / "drafts").mkdir()
    (root / "drafts" / "scratch.md").write_text("# Draft\n\nzebraquince draft text\n")
    (root / ".kbxignore").write_text("drafts/\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.md").write_text("# Secret\n\nhiddenword\n")
    return root
