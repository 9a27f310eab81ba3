"""Small documents of every format, written here, and helpers the tests share."""

from __future__ import annotations

import importlib
import itertools
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb
import pytest
from fpdf import FPDF

from kbx.annotate.setup import registry_for
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

MARKDOWN = """\
---
title: Cedar supplier approval
date: 2021-03-04
author: Ann Lee
category: process
---
# Project Cedar

Supplier approval is **required** for every vendor; see
[the policy](https://example.org/policy) and AT&amp;T's note.

## Steps

- Collect the *ISO 9001* certificate.
- Run `cedar-check --strict` on the vendor file.

```python
def approve(vendor):
    return vendor.score > 0.8
```

| Vendor | Score |
|--------|-------|
| Acme   | 0.91  |
"""

HTML = """\
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Release notes v18.2.0</title>
<meta name="author" content="Bo Chen"><meta name="date" content="2022-06-14">
<style>body { color: red }</style><script>var hidden = "scriptword";</script></head>
<body><nav>Home | Docs | navword</nav>
<h1>Release notes</h1>
<p>The fix for <b>ERR_4021</b> landed in v18.2.0 &mdash; see
<a href="https://example.org/x">the tracker</a>.</p>
<h2>Changes</h2>
<ul><li>Faster startup</li><li>Smaller heap</li></ul>
<pre><code>npm install cedar@18.2.0
cedar --verify</code></pre>
<table><tr><th>Metric</th><th>Value</th></tr><tr><td>latency</td><td>250 ms</td></tr></table>
<p>Unclosed paragraph <i>with italics
</body></html>
"""

LATEX = r"""\documentclass{article}
\title{Evaluating seL4}
\author{Ann Lee \and Bo Chen}
\date{4 March 2021}
\begin{document}
\maketitle
\begin{abstract}
We evaluate the verified microkernel.
\end{abstract}
\section{Introduction}\label{sec:intro}
The seL4 kernel~\cite{klein2009} is \emph{formally verified}. % a comment to drop
\begin{itemize}
\item proofs of functional correctness
\item integrity and confidentiality
\end{itemize}
\subsection{Method}
\begin{verbatim}
make sel4 --proofs
\end{verbatim}
\input{../outside}
\input{methods}
\end{document}
"""

TEXT = (
    "Runbook\r\n\r\nBack up the database nightly.\r\nKeep 3.5 GB free.\r\n\f\r\n"
    "Restore drill every quarter.\r\n"
)


def make_pdf(path: Path, pages: list[str | None], title: str = "Report", author: str = "Ann Lee"):
    """A PDF whose pages hold the given text; None makes a page with only a drawing."""
    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_author(author)
    for text in pages:
        pdf.add_page()
        if text is None:
            pdf.rect(20, 20, 100, 60)
        else:
            pdf.set_font("Helvetica", size=11)
            pdf.multi_cell(0, 6, text)
    pdf.output(str(path))
    return path


def write_corpus(root: Path) -> Path:
    """One document of each format, an ignored draft and a hidden folder, under ``root``."""
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


@contextmanager
def unchanged(idx: Index):
    """For an index built once and shared by tests that only read it: fails (at the fixture's
    teardown) if any of them changed a table."""
    from kbx.store.consistency import contents

    with idx.reader() as con:
        before = contents(con)
    yield idx
    with idx.reader() as con:
        assert contents(con) == before, f"a test wrote to the shared index {idx.db}"


_SCRATCH: list[duckdb.DuckDBPyConnection] = []  # one in-memory instance per run
_NAMES = itertools.count()


@contextmanager
def attached(db: Path, read_only: bool = True):
    """A connection to the database file ``db``, for a test's own queries: the file is
    attached to one in-memory instance kept for the run, and detached after, so nothing holds
    it. A new instance (``duckdb.connect(db)``) costs 20-30 ms of CPU for its catalog, an
    ATTACH about 3."""
    if not _SCRATCH:
        _SCRATCH.append(duckdb.connect(":memory:"))
    con = _SCRATCH[0].cursor()
    name = f"db{next(_NAMES)}"
    mode = " (READ_ONLY)" if read_only else ""
    path = str(db).replace("'", "''")
    con.execute(f"ATTACH '{path}' AS {name}{mode}")
    try:
        con.execute(f"USE {name}")
        yield con
    finally:
        con.execute("USE memory")
        con.execute(f"DETACH {name}")
        con.close()


def copy_index(template: Path, root: Path) -> Index:
    """A copy of the folder ``template`` and the index built in it, at ``root``: what
    building there would leave, for a copy (milliseconds) where a build takes a second. The
    files keep their times (``copytree``), so the copy finds them unchanged as the template
    would; the index records its root, which the copy is told."""
    shutil.copytree(template, root)
    idx = Index.for_root(root)
    with attached(idx.db, read_only=False) as con:
        con.execute("UPDATE kbx_meta SET value = ? WHERE key = 'root'", [str(idx.root)])
    return idx


def with_mapped_files(idx: Index) -> Index:
    """``idx`` with its mapped files made, as a server's first write makes them (a cold
    ``kbx index`` of a small folder writes none)."""
    from kbx.indexing.ingest import refresh_mapped

    with idx.writer() as con:
        refresh_mapped(con, idx.db)
    return idx


def run_kbx(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real command line in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "kbx", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


class Words:
    """Counts calls; finds the word 'cedar' (any case) as boost-only mentions."""

    def __init__(self, version: str = "1", fail_on: str | None = None, delay: float = 0.0):
        self.info = RecognizerInfo(name="words", version=version, types=("WORD",), filter=False)
        self.calls = 0
        self.fail_on = fail_on
        self.delay = delay  # seconds per batch, to leave time to interrupt a pass

    def recognize(self, texts):
        self.calls += len(texts)
        time.sleep(self.delay)
        out = []
        for t in texts:
            if self.fail_on and self.fail_on in t:
                raise RuntimeError("cannot read this one")
            found = re.finditer("cedar", t, re.IGNORECASE)
            out.append([Mention(m.start(), m.end(), "WORD", m.group()) for m in found])
        return out


POSTS = {
    "posts/2021-openssl.md": """---
title: OpenSSL fixes
date: 2021-05-01
author: Ann Lee
category: vulnerability
---
# OpenSSL fixes

OpenSSL 1.1.1k fixes CVE-2021-3449. Project Cedar depends on OpenSSL.
""",
    "posts/2023-openssl.md": """---
title: OpenSSL 3 update
date: 2023-02-01
author: Bo Chen
category: vulnerability
---
# OpenSSL 3 update

The OpenSSL 3.0.8 update fixes CVE-2023-0286. We first met about OpenSSL on 4 March 2019.
""",
    "posts/2023-release.md": """---
title: Release notes
date: 2023-06-01
author: Ann Lee
category: release
---
# Release notes

Cedar ships in this release; see doi:10.1145/1629575.1629596 for the kernel it runs on.
""",
    "posts/apple.md": """---
title: Orchard visit
date: 2020-01-01
author: Apple Fan
category: news
tags: [fruit, tech]
---
# Orchard visit

Apple Inc. sponsored the apple orchard trip. In 2022 we went back.

## The bus

Apple paid for the bus; Dahl drove it.
""",
    "notes/io.md": "# io\n\nio.js merged back into node.js in 2015.\n\n"
    "The io library reads files.\n",
}


def registry_with_gazetteer(idx: Index) -> Registry:
    """Identifiers, dates and the index's gazetteer (no plugins, whatever is installed)."""
    return registry_for(idx, Registry([IdentifierRecognizer(), DateRecognizer()]))


def make_tiny_gliner(folder: Path) -> Path:
    """A GLiNER model of a 2-layer, 32-wide BERT with a tiny vocabulary, built and saved
    here (about 0.3 MB): its predictions are random, its plumbing is the real one."""
    from gliner import GLiNER, GLiNERConfig
    from transformers import BertConfig, BertModel, BertTokenizer

    bert = folder / "bert"
    bert.mkdir(parents=True)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters, *".,;:!?'\"()-"]
    vocab += [f"##{c}" for c in letters] + ["the", "kernel", "dataset", "software"]
    (bert / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(str(bert / "vocab.txt"), do_lower_case=True).save_pretrained(bert)
    BertModel(
        BertConfig(
            vocab_size=len(vocab),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
        )
    ).save_pretrained(bert)
    model = GLiNER.from_config(
        GLiNERConfig(model_name=str(bert), hidden_size=32, max_width=8),
        backbone_from_pretrained=True,
        local_files_only=True,
    )
    model.save_pretrained(folder / "model")
    return folder / "model"


class Loopback:
    """A loopback HTTP server standing in for Crossref and OpenAlex: each path prefix
    answers from a list of canned replies (the last one repeats) or a function of the
    request path, and every request is recorded. A reply is ``(status, body, headers)``;
    a body of ``"HANG"`` waits first."""

    def __init__(self, routes: dict[str, list[tuple[int, object, dict]]], hang: float = 2.0):
        import http.server
        import json as _json
        import threading

        self.routes, self.requests, self.hang = routes, [], hang
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server API
                from urllib.parse import unquote

                path = unquote(self.path)
                server.requests.append((path, dict(self.headers)))
                key = max((k for k in server.routes if path.startswith(k)), key=len, default=None)
                replies = server.routes.get(key) or [(404, {"message": "not found"}, {})]
                if callable(replies):  # an answer computed from the request
                    replies = [replies(path)]
                status, body, headers = replies.pop(0) if len(replies) > 1 else replies[0]
                if body == "HANG":
                    time.sleep(server.hang)
                    status, body = 200, {}
                data = body if isinstance(body, bytes) else _json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # a short poll: close() waits for the loop to see it (0.5 s by default, per server)
        serve = {"poll_interval": 0.02}
        threading.Thread(target=self.httpd.serve_forever, kwargs=serve, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def crossref_work(doi: str, title: str, year: int, authors: list[tuple], venue: str) -> dict:
    """A Crossref /works/DOI answer with the fields kbx reads."""
    return {
        "status": "ok",
        "message-type": "work",
        "message": {
            "DOI": doi,
            "title": [title],
            "issued": {"date-parts": [[year]]},
            "container-title": [venue],
            "author": [
                {"given": g, "family": f, **({"ORCID": f"https://orcid.org/{o}"} if o else {})}
                for g, f, o in authors
            ],
        },
    }


def need_dense(module: str) -> None:
    """The dense extra is part of the test install (``make install-test``): a missing one
    fails the test with what to install; it never skips."""
    try:
        importlib.import_module(module)
    except ImportError:
        pytest.fail(f"{module} is missing: pip install -e '.[dense]' (make install-test does)")


def die_at(point: str, fn, *args) -> int:
    """Run ``fn(*args)`` in a forked child that exits at the named kill point, as a
    ``kill -9`` there would; returns its exit code."""

    def child():
        os.environ["KBX_KILL_AT"] = point
        fn(*args)

    p = multiprocessing.get_context("fork").Process(target=child)
    p.start()
    p.join(120)
    return p.exitcode


def ctrl_c_reaches() -> None:
    """``preexec_fn`` of a child a test sends SIGINT: its default disposition, as a terminal's
    foreground process has it, even when the suite itself runs as a background job (which
    the shell starts with SIGINT ignored, and a child would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def own_group(args: list[str], **popen):
    """A child in a process group of its own that a test sends Ctrl-C as a terminal would
    (``os.killpg``; ``ctrl_c_reaches``), its stderr piped as text; the group killed and
    the child reaped on leaving, whatever the test found."""
    child = subprocess.Popen(
        args,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_reaches,
        **popen,
    )
    try:
        yield child
    finally:
        with suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def indexed_files(folder: Path, files: dict[str, str]) -> Index:
    """``files`` written under ``folder`` and indexed with no recognizers, one worker, the
    index beside the folder: the fixture of the ranking tests."""
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    db = folder.with_suffix(".duckdb")
    index(folder, db=db, workers=1, registry=Registry([]))
    return Index.for_root(folder, db)
