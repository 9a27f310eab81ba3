"""The command line run in this process, through ``kbx.cli.app.main`` itself: the same
argument parsing, error lines, JSON error objects and exit codes as the ``kbx`` a user
runs, without starting Python, importing kbx and loading models again for every call.
``helpers.run_kbx`` starts a real process, for the few tests that need one."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kbx.cli import app as cli

HANG = 120  # seconds: what run_kbx allows a child before its test fails


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``kbx ARGS`` in ``cwd``, with ``env`` added to the environment, read like ``run_kbx``'s
    result (``returncode``, ``stdout``, ``stderr``). ``main()`` runs with ``sys.argv`` as a
    shell sets it, its output captured by typer's test isolation. A call that hangs past
    ``HANG`` seconds ends the test run with every thread's traceback, as a child's timeout
    fails its test: it never passes."""
    argv, code = sys.argv, 0
    faulthandler.dump_traceback_later(HANG, exit=True)
    try:
        with (
            contextlib.chdir(cwd or os.getcwd()),
            CliRunner().isolation(env=env) as (stdout, stderr, _),
        ):
            sys.argv = ["kbx", *args]
            try:
                cli.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                out, err = stdout.getvalue().decode(), stderr.getvalue().decode()
    finally:
        sys.argv = argv
        faulthandler.cancel_dump_traceback_later()
    return subprocess.CompletedProcess(["kbx", *args], code, out, err)
