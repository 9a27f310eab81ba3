"""``read``: cited lines, changed-file warnings, and the root as a boundary."""

from __future__ import annotations

import pytest
from helpers import unchanged, write_corpus

from kbx.errors import BadArgument, OutsideRoot
from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.read import read
from kbx.store.db import Index


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The corpus, indexed once, with a file beside its root; the tests only read it."""
    corpus = write_corpus(tmp_path_factory.mktemp("read") / "docs")
    (corpus.parent / "outside.md").write_text("secret\n")
    index(corpus)
    with unchanged(Index.for_root(corpus)) as idx:
        yield idx


def test_read_returns_the_cited_lines(indexed):
    x = read(indexed, "notes/cedar.md:9-10")
    assert x.lines[0].startswith("Supplier approval is **required**")
    assert (x.start_line, x.end_line, x.changed) == (9, 10, False)
    assert x.hash == x.indexed_hash


def test_read_flags_a_file_changed_since_indexing(corpus):
    index(corpus)
    idx = Index.for_root(corpus)
    old = read(idx, "runbook.txt:1").hash
    assert read(idx, "runbook.txt:1", old[:12]).changed is False
    (corpus / "runbook.txt").write_text("new first line\n")
    x = read(idx, "runbook.txt:1", old[:12])
    assert x.changed and x.lines == ["new first line"]
    assert read(idx, "runbook.txt:1").changed  # against the indexed hash too


def test_read_pdf_lines_are_the_extracted_text(indexed):
    x = read(indexed, "report.pdf")
    assert "First page about kernels." in x.lines and "\f" in x.lines


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("../outside.md:1", OutsideRoot, "outside the indexed root"),
        ("/etc/hostname:1", OutsideRoot, "outside the indexed root"),
        ("missing.md:1", BadArgument, "no such file"),
        ("notes/cedar.md:9-3", BadArgument, "START <= END"),
        ("notes/cedar.md:500", BadArgument, "has 24 lines"),
    ],
)
def test_bad_read_requests_say_why(indexed, spec, error, message):
    with pytest.raises(error, match=message):
        read(indexed, spec)


def test_a_changed_file_says_so_before_the_missing_lines(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\n" + "line\n" * 40)
    idx = Index.for_root(root)
    index(root, registry=Registry([]))
    sha = read(idx, "a.md:1-2").hash
    (root / "a.md").write_text("# A\n\nshort now\n")
    with pytest.raises(BadArgument, match=r"^a.md has changed since it was indexed; a.md has 3"):
        read(idx, "a.md:30-35", expect_hash=sha[:12])


def test_a_newline_ends_the_last_line_and_opens_none(tmp_path):
    """A file that ends with a newline has as many lines as newlines (``wc -l``)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "two.txt").write_text("first\nsecond\n")
    (root / "open.txt").write_text("first\nsecond")
    (root / "crlf.txt").write_bytes(b"first\r\nsecond\r\n")
    (root / "empty.txt").write_text("")
    idx = Index.for_root(root)
    index(root, registry=Registry([]))
    for name in ("two.txt", "open.txt", "crlf.txt"):
        x = read(idx, name)
        assert (x.start_line, x.end_line, x.lines) == (1, 2, ["first", "second"])
        with pytest.raises(BadArgument, match=f"{name} has 2 lines; line 3 does not exist"):
            read(idx, f"{name}:3")
    assert read(idx, "two.txt:2-4").lines == ["second"]
    assert read(idx, "empty.txt").lines == []
