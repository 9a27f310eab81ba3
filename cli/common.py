"""What every command shares: the consoles, --db and --json, JSON output. The options of
each command are generated from its definition (``cli/define.py``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kbx import api

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


class _Console:
    """A rich Console made on first use: rich costs tens of milliseconds at every start,
    and ``kbx search`` and the JSON of every command print without it."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._made: Console | None = None

    @property
    def console(self) -> Console:
        if self._made is None:
            from rich.console import Console

            self._made = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return self._made

    def __getattr__(self, name: str):
        return getattr(self.console, name)


out = _Console()
err = _Console(stderr=True)


def escape(text: str) -> str:
    """``text`` with rich markup escaped (rich.markup imported only when a line needs it)."""
    from rich.markup import escape as escaped

    return escaped(text)


DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Index file to use (default: the nearest .kbx/index.duckdb).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object for machines.")]


class _ToStderr(logging.Handler):
    """A line the library logs for the user (a wait for another process), on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        err.print(f"kbx: {record.getMessage()}", markup=False)


def say_waits() -> None:
    """Show on stderr when a command waits for another process's lock or file. The store
    logs the wait (``kbx.store``) instead of printing it: a library never prints, and a
    program that uses it, or the server, keeps such lines in its own log; every writing
    command gets them without a callback threaded through each API function."""
    log = logging.getLogger("kbx.store")
    if not any(isinstance(h, _ToStderr) for h in log.handlers):
        log.addHandler(_ToStderr())
        log.setLevel(logging.INFO)
        log.propagate = False


def emit_json(obj) -> None:
    sys.stdout.write(api.json_text(obj) + "\n")


def progress_bar(title: str, quiet: bool, detail: bool = False) -> Progress:
    """A bar on stderr for long work: ``title`` (markup; ``{task.description}`` allowed),
    done of total, time left, and with ``detail`` each task's description after it.
    Silent for ``--json`` and when stderr is not a terminal. (rich.progress is imported
    here: a third of the CLI's import time, and only long commands draw a bar.)"""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn(title),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        *([TextColumn("{task.description}")] if detail else []),
        console=err.console,
        transient=True,
        disable=quiet or not err.is_terminal,
    )
