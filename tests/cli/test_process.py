"""The real ``kbx`` process, for what only a process shows: the entry point, output and exit
codes as a shell sees them, and an interrupt. Everything else runs in process (test_cli.py),
through the same ``main()``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from helpers import Loopback, ctrl_c_reaches, own_group, run_kbx, write_corpus

from kbx.indexing.ingest import index
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.search import search
from kbx.store.db import Index


def test_index_then_search_end_to_end(tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    r = run_kbx("index", str(corpus), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["new"], report["failed"], report["skipped"]) == (5, 0, 0)
    r = run_kbx("search", "supplier approval", "-k", "2", cwd=corpus / "notes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].startswith("notes/cedar.md ")  # after the legend
    assert "exact matches of 'supplier approval'" in r.stdout
    assert search(Index.for_root(corpus), "supplier approval").hits[0].path == "notes/cedar.md"


def test_an_error_is_one_line_or_one_object_and_its_exit_code(tmp_path):
    r = run_kbx("search", "x", "--json", cwd=tmp_path)
    assert r.returncode == 3 and r.stderr == ""
    assert json.loads(r.stdout) == {
        "error": "IndexNotFound",
        "code": 3,
        "message": "no kbx index here or in any parent folder; run `kbx index PATH` first "
        "or pass --db FILE",
        "hint": None,
    }
    r = run_kbx("search", "x", cwd=tmp_path)
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr == (
        "error: no kbx index here or in any parent folder; run `kbx index PATH` first "
        "or pass --db FILE\n"
    )
    r = run_kbx("search", cwd=tmp_path)  # the argument parser's own error
    assert r.returncode == 2 and "Missing argument 'query'" in r.stderr


def test_a_command_that_only_reads_flushes_all_its_output_before_its_quick_exit(tmp_path):
    """A command that only reads ends without Python's teardown (``cli.app.run``), so
    nothing flushes its output for it: it must, to the last line, into a pipe."""
    corpus = write_corpus(tmp_path / "docs")
    index(corpus, registry=Registry([IdentifierRecognizer()]))
    r = run_kbx("search", "supplier approval", cwd=corpus)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.splitlines()[-1].startswith("  notes/cedar.md:9 ")  # the exact block, last
    r = run_kbx("read", "notes/cedar.md:1-3", "--json", cwd=corpus)
    assert r.returncode == 0 and json.loads(r.stdout)["path"] == "notes/cedar.md"


def test_ctrl_c_exits_130_without_a_traceback_and_keeps_the_index(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    doi = "10.5555/hang"
    (root / "p.md").write_text(f"# P\n\nSee doi:{doi}.\n")
    index(root, registry=Registry([IdentifierRecognizer()]))
    server = Loopback({"/": [(200, "HANG", {})]}, hang=60)  # no answer comes
    env = {"KBX_CROSSREF_URL": server.url, "KBX_OPENALEX_URL": server.url}
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "kbx", "resolve"],
            cwd=root,
            env=os.environ | env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=ctrl_c_reaches,
        )
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.requests, "kbx resolve never asked"
        child.send_signal(signal.SIGINT)  # what ctrl-C sends, while it waits for an answer
        out, err = child.communicate(timeout=30)
    finally:
        server.close()
    assert child.returncode == 130, err
    assert "Traceback" not in out + err
    assert err == (  # what was kept, and how to go on (typer alone said nothing)
        "error: interrupted; the answers fetched so far are cached\n"
        "  run `kbx resolve` again: it asks only for the rest\n"
    )
    assert search(Index.for_root(root), "see").hits  # the index still answers


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux), none where it is gone."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def test_ctrl_c_while_kbx_index_reads_exits_130_and_the_next_run_works(tmp_path):
    """Ctrl-C reaches kbx and its reader workers alike (the terminal signals the whole
    process group). A worker interrupted while it sent a file's outcome left the pipe
    with a message cut short, and kbx printed its interrupted line and then waited on
    that pipe forever (and on the index's write lock every later run). Interrupted as
    its reader starts and while it reads, it exits 130 promptly; the next run completes."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    line = "version 1.{n} fixes the parser for mirror {n} (closes: #{n}) in release notes\n"
    for i in range(6):  # outcomes of hundreds of KB: past a pipe's buffer, written slowly
        (root / f"log{i}.txt").write_text("".join(line.format(n=n) for n in range(6000)))
    for after in (0.0, 0.3, 1.0):  # seconds after the first reader appears
        args = [sys.executable, "-m", "kbx", "index", ".", "--workers", "1"]
        with own_group(args, cwd=root, stdout=subprocess.DEVNULL) as child:
            deadline = time.monotonic() + 60
            while not _children(child.pid) and child.poll() is None:
                assert time.monotonic() < deadline, "kbx index started no reader"
                time.sleep(0.01)
            time.sleep(after)
            os.killpg(child.pid, signal.SIGINT)
            _, err = child.communicate(timeout=30)
        assert child.returncode == 130, err
        assert "Traceback" not in err
    done = run_kbx("index", ".", cwd=root)
    assert done.returncode == 0, done.stderr
    assert search(Index.for_root(root), "mirror").hits
