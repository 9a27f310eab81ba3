"""``kbx serve`` as a user starts it: a real process that says where it listens, answers,
and stops on Ctrl-C; and the refusal to open the index to other machines without a token."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx
from helpers import ctrl_c_reaches
from inprocess import run_cli


def test_kbx_serve_says_where_it_listens_and_stops_on_ctrl_c(docs):
    server = subprocess.Popen(
        [sys.executable, "-m", "kbx", "serve", "--port", "0"],
        cwd=docs,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_reaches,
    )
    try:
        said = [server.stderr.readline()]  # the first line says where, whatever may follow
        m = re.match(r"kbx serve: (http://127\.0\.0\.1:\d+)/api \(MCP at /mcp\) for (.*);", said[0])
        assert m and m.group(2) == str(docs), said
        r = httpx.get(f"{m.group(1)}/api/status", timeout=60)
        assert r.status_code == 200 and r.json()["root"] == str(docs)
        server.send_signal(signal.SIGINT)
        assert server.wait(30) == 0
    finally:
        server.kill()
        server.stderr.close()


def test_kbx_serve_on_another_address_needs_a_token(docs):
    r = run_cli("serve", "--host", "0.0.0.0", "--port", "0", cwd=docs)  # refused: no server
    assert r.returncode == 2
    assert "give a token with --token or KBX_TOKEN" in r.stderr
