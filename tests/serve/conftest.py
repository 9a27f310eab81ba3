"""A small indexed folder, and the real server (uvicorn in a thread) on a free loopback
port: what an agent or a script would call, with no part of it stood in for."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from serving import serving

from kbx import api

RULES_ONLY = '[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n'
CEDAR = """\
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
"""
RUNBOOK = "Runbook\n\nBack up the database nightly.\nSupplier approval again in 2022.\n"


def write_docs(root: Path) -> Path:
    (root / "notes").mkdir(parents=True)
    (root / "kbx.toml").write_text(RULES_ONLY)
    (root / "notes" / "cedar.md").write_text(CEDAR)
    (root / "runbook.txt").write_text(RUNBOOK)
    (root.parent / "secret.md").write_text("# Secret\n\nnot to be served\n")
    (root / "notes" / "link.md").symlink_to(root.parent / "secret.md")
    api.index(root)
    return root


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    return write_docs(tmp_path_factory.mktemp("serve") / "docs")


@pytest.fixture(scope="module")
def url(docs):
    with serving(docs) as base:
        yield base


@pytest.fixture
def http(url):
    with httpx.Client(base_url=url, timeout=60) as client:
        yield client


@pytest.fixture
def start():
    """``start(root, token=None)``: a context manager serving ``root``, for tests that need
    a server of their own."""
    return serving
