"""What every command shares: the consoles, the common options, JSON output."""

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


PathOption = Annotated[
    str | None,
    typer.Option(
        "--path",
        help="Only files matching this glob (relative to the root; * crosses folders).",
        rich_help_panel="Filters",
    ),
]
LangOption = Annotated[
    str | None,
    typer.Option(
        "--lang",
        help="Only passages in this language (ISO 639-1: ja, zh, ru, de...; en: the rest).",
        rich_help_panel="Filters",
    ),
]
EntityOption = Annotated[
    list[str] | None,
    typer.Option(
        "--entity",
        "-e",
        help="Passages naming this entity: an ID (Q312, doi:10.…) or a name or alias. "
        "Repeatable; all must match.",
        rich_help_panel="Filters",
    ),
]
AuthorOption = Annotated[
    list[str] | None,
    typer.Option(
        "--author",
        help="Passages this person wrote: signed (a changelog entry's closing line, a "
        "Signed-off-by: trailer, an Author: byline) or in a document whose metadata names "
        "them; --entity finds passages that merely name them. Repeatable; all must match.",
        rich_help_panel="Filters",
    ),
]
TypeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--type",
        "-t",
        help="Passages with a mention of this type (DOI, DATE, PERSON, …). Repeatable.",
        rich_help_panel="Filters",
    ),
]
AfterOption = Annotated[
    str | None,
    typer.Option(
        "--after",
        help="Passages with a date starting on or after this day (YYYY[-MM[-DD]]).",
        rich_help_panel="Filters",
    ),
]
BeforeOption = Annotated[
    str | None,
    typer.Option(
        "--before",
        help="Passages with a date ending on or before this day, month or year (inclusive): "
        "--after 2021 --before 2021 means during 2021, --after 2025-06 --before 2025-06 in "
        "June 2025.",
        rich_help_panel="Filters",
    ),
]
DateFromOption = Annotated[
    str,
    typer.Option(
        "--date-from",
        help="Which dates count: any (the passage's own and its document's), mentioned, "
        "or document.",
        rich_help_panel="Filters",
    ),
]
MetaOption = Annotated[
    list[str] | None,
    typer.Option(
        "--meta",
        help="A document metadata field: KEY=VALUE or KEY!=VALUE (e.g. category=news). Repeatable.",
        rich_help_panel="Filters",
    ),
]

QuantityOption = Annotated[
    list[str] | None,
    typer.Option(
        "--quantity",
        help="Passages with a quantity: [DIMENSION] OP VALUE, compared in SI (mass>1kg, "
        "size<=4GB, temperature>=30°C, >5 mg, mass=1kg..5kg, usd>=1000); a stated range "
        "counts when it overlaps. Repeatable; all must match.",
        rich_help_panel="Filters",
    ),
]


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
