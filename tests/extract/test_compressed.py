"""Gzipped files are read as the file inside: indexed, cited by the lines inside, read
and grepped alike, their hash that of the bytes on disk; a damaged or oversized archive is
skipped with its reason and the run goes on."""

from __future__ import annotations

import gzip
import hashlib

from hypothesis import given
from hypothesis import strategies as st

from kbx.errors import ExtractError
from kbx.extract.compressed import expanded, inner_name
from kbx.indexing.ingest import index
from kbx.search.grep import grep
from kbx.search.read import read
from kbx.search.search import search
from kbx.store.db import Index

CHANGELOG = (
    "hello (2.10-3) unstable; urgency=medium\n\n"
    "  * Fix the frobnicator when the moon is full.\n\n"
    " -- Ann Lee <ann@example.org>  Mon, 02 Jan 2023 10:00:00 +0000\n"
)


def _folder(tmp_path):
    doc = tmp_path / "usr" / "share" / "doc" / "hello"
    doc.mkdir(parents=True)
    (doc / "changelog.Debian.gz").write_bytes(gzip.compress(CHANGELOG.encode()))
    (doc / "README.md.gz").write_bytes(gzip.compress(b"# Hello\n\nGreets the quokka.\n"))
    (doc / "NEWS.gz").write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    (doc / "plain.txt").write_text("A plain file beside them.\n")
    return doc


def test_a_gzipped_file_is_searched_cited_and_read_as_the_text_inside(tmp_path):
    doc = _folder(tmp_path)
    report = index(tmp_path, db=tmp_path / "i.duckdb")
    assert report.failed + report.skipped == 1  # the damaged NEWS.gz alone
    (bad,) = report.failures
    assert bad["path"].endswith("NEWS.gz") and "gzip" in bad["error"]
    idx = Index.for_root(tmp_path, tmp_path / "i.duckdb")
    (hit,) = search(idx, "frobnicator moon").hits
    rel = "usr/share/doc/hello/changelog.Debian.gz"
    assert hit.path == rel and (hit.start_line, hit.end_line) == (1, 5)
    raw = (doc / "changelog.Debian.gz").read_bytes()
    assert hashlib.sha256(raw).hexdigest().startswith(hit.hash)
    shown = read(idx, f"{rel}:3", expect_hash=hit.hash)
    assert "frobnicator" in shown.lines[0] and not shown.changed
    assert search(idx, "quokka").hits[0].path.endswith("README.md.gz")
    (m,) = grep(idx, "moon is full").matches
    assert (m.path, m.start_line) == (rel, 3)


def test_an_archive_that_expands_past_the_size_cap_is_skipped_with_its_reason(tmp_path):
    (tmp_path / "bomb.txt.gz").write_bytes(gzip.compress(b"zero " * 200_000))
    (tmp_path / "ok.txt").write_text("still indexed\n")
    report = index(tmp_path, db=tmp_path / "i.duckdb", max_size=100_000)
    assert [f["path"] for f in report.failures] == ["bomb.txt.gz"]
    assert "size cap" in report.failures[0]["error"]
    idx = Index.for_root(tmp_path, tmp_path / "i.duckdb")
    assert search(idx, "still indexed").hits


@given(st.text(max_size=40))
def test_inner_name_never_raises_and_only_strips_one_gz(path):
    inner = inner_name(path)
    assert inner is None or (path == inner + path[len(inner) :] and path.lower().endswith(".gz"))


@given(st.binary(max_size=200))
def test_any_bytes_named_gz_expand_or_fail_with_a_reason(data):
    try:
        name, out = expanded("a.txt.gz", data, limit=1000)
    except ExtractError as e:
        assert str(e)
    else:
        assert name == "a.txt" and len(out) <= 1000
