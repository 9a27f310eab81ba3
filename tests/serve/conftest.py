"""A small indexed folder, and the real server (uvicorn in a thread) on a free loopback
port: what an agent or a script would call, with no part of it stood in for."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import httpx
import pytest

from kbx import api
from kbx.serve.http import bound_socket, server
from kbx.serve.live import LiveIndex
from kbx.serve.security import Policy

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


@contextlib.contextmanager
def serving(root: Path, token: str | None = None):
    """The server on ``root``'s index at a free port: yields its base URL."""
    sock = bound_socket("127.0.0.1", 0)
    policy = Policy("127.0.0.1", sock.getsockname()[1], token)
    s = server(LiveIndex.of(api.Index.for_root(root)), policy)
    thread = threading.Thread(target=s.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not s.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{policy.port}"
    finally:
        s.should_exit = True
        thread.join(30)
        sock.close()


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
