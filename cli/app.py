"""The ``kbx`` command: a thin typer layer; each command calls one library function."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from kbx import __version__
from kbx.errors import BadArgument, KbxError
from kbx.store import ingest
from kbx.store.db import Index
from kbx.store.read import read as read_lines
from kbx.store.status import status as index_status
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

app = typer.Typer(
    help=(
        "Search a folder of documents the way agents and careful people need: "
        "exact, cited, fast.\n\n"
        "  kbx index ~/notes                 build or refresh the index\n\n"
        "  kbx status                        what the index holds, what failed\n\n"
        "  kbx read notes/cedar.md:40-58     print the lines a result cites"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Index file to use (default: the nearest .kbx/index.duckdb).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object for machines.")]


def _emit_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")


def _size(text: str) -> int:
    units = {
        "": 1,
        "B": 1,
        "K": 1024,
        "KB": 1024,
        "M": 1024**2,
        "MB": 1024**2,
        "G": 1024**3,
        "GB": 1024**3,
    }
    t = text.strip().upper()
    num = t.rstrip("KMGB")
    try:
        return int(float(num) * units[t[len(num) :]])
    except (ValueError, KeyError):
        raise BadArgument(f"--max-size: expected a size like 50MB or 200K, got {text!r}") from None


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@app.command()
def index(
    path: Annotated[Path, typer.Argument(help="Folder to index.")] = Path("."),
    db: DbOption = None,
    max_size: Annotated[str, typer.Option(help="Skip files larger than this.")] = "50MB",
    workers: Annotated[int, typer.Option(help="Extraction processes (0: one per core).")] = 0,
    hidden: Annotated[bool, typer.Option(help="Also index hidden files and folders.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Build or refresh the index of a folder.

    The index lives in PATH/.kbx/ (like git) unless --db says otherwise; later
    commands find it from the current folder upward. A second run re-reads only
    files whose size or modification time changed and re-extracts only those whose
    content changed. Files listed in .kbxignore (gitignore syntax) and hidden
    folders are skipped. A file that cannot be read is recorded with its reason;
    the run goes on.

    Examples:

      kbx index ~/notes

      kbx index . --max-size 10MB --json
    """
    cap = _size(max_size)
    with Progress(
        TextColumn("[bold]indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
        disable=as_json or not err.is_terminal,
    ) as bar:
        task = bar.add_task("", total=None)

        def tick(done: int, total: int, rel: str) -> None:
            bar.update(task, completed=done, total=total, description=rel[-50:])

        report = ingest.index(
            path, db, max_size=cap, workers=workers or None, hidden=hidden, progress=tick
        )
    if as_json:
        _emit_json(dataclasses.asdict(report))
        return
    out.print(f"Indexed {report.root} in {report.seconds:.1f} s  ({report.db})")
    out.print(
        f"  {report.new} new, {report.updated} updated, {report.unchanged} unchanged, "
        f"{report.removed} removed, {report.failed} failed, {report.skipped} skipped"
    )
    out.print(f"  {report.units_added} units added, {report.units_swept} swept")
    for rel, why in report.failures:
        out.print(f"  [yellow]![/] {rel}: {why}")


@app.command()
def status(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show what the index holds: documents, units, failures, schema version, size.

    Example:

      kbx status --json
    """
    s = index_status(Index.find(db))
    if as_json:
        _emit_json(dataclasses.asdict(s))
        return
    docs = s.documents
    total = sum(docs.values())
    parts = ", ".join(f"{n} {k}" for k, n in sorted(docs.items()))
    out.print(f"index      {s.db}  ({_human(s.size_bytes)}, schema {s.schema_version})")
    out.print(f"root       {s.root}")
    out.print(f"documents  {total} ({parts or 'none'})")
    out.print(f"formats    {', '.join(f'{n} {k}' for k, n in s.formats.items()) or 'none'}")
    out.print(f"units      {s.units} ({s.placements} placements)")
    out.print(f"indexed    {s.indexed_at or 'never'}")
    for f in s.failures:
        out.print(f"  [yellow]![/] {f['path']} ({f['status']}): {f['error']}")


@app.command()
def read(
    spec: Annotated[
        str,
        typer.Argument(metavar="PATH[:START[-END]]", help="File relative to the root, and lines."),
    ],
    hash: Annotated[
        str | None,
        typer.Option("--hash", help="File hash a result printed; warns if the file changed since."),
    ] = None,
    numbers: Annotated[
        bool, typer.Option("-n", "--line-numbers", help="Number the lines.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print original lines of an indexed file, as a search result cites them.

    With --hash, warn when the file has changed since it was indexed (its lines may
    have moved). For a PDF, lines are those of its extracted text, pages separated
    by a form-feed line. Paths outside the indexed root are refused.

    Examples:

      kbx read notes/cedar.md:40-58 --hash 3f9a1c0b2d4e

      kbx read papers/report.pdf:1-20 -n
    """
    x = read_lines(Index.find(db), spec, hash)
    if x.changed:
        err.print(
            f"[yellow]warning:[/] {x.path} has changed since it was indexed "
            f"(now {x.hash[:12]}); the cited lines may have moved. Run `kbx index` to refresh."
        )
    if as_json:
        _emit_json(dataclasses.asdict(x))
        return
    width = len(str(x.end_line))
    for i, line in enumerate(x.lines, start=x.start_line):
        sys.stdout.write(f"{i:>{width}}  {line}\n" if numbers else f"{line}\n")


@app.command()
def version() -> None:
    """Print kbx's version."""
    out.print(__version__)


def main() -> None:
    """Entry point: run the app, turning kbx's named errors into one line and exit 2/1."""
    try:
        app()
    except BadArgument as e:
        err.print(f"[red]error:[/] {e}")
        sys.exit(2)
    except KbxError as e:
        err.print(f"[red]error:[/] {e}")
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("interrupted; what was committed is kept, run the command again to continue")
        sys.exit(130)
