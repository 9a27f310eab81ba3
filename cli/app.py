"""The ``kbx`` command: a thin typer layer; each command calls one library function."""

from __future__ import annotations

import os
import sys
from contextlib import suppress

import typer
from typer._click.exceptions import ClickException  # typer 0.28 carries its own click

from kbx import __version__, api
from kbx.cli import export as export_cli
from kbx.cli import gazetteer as gazetteer_cli
from kbx.cli import reading
from kbx.cli import serve as serve_cli
from kbx.cli.common import (
    emit_json,
    err,
    escape,
    out,
    progress_bar,
    say_waits,
)
from kbx.cli.define import command
from kbx.errors import INTERNAL_ERROR, INTERRUPTED, BadArgument, KbxError

SETTINGS = dict(
    help=(
        "Search a folder of documents the way agents and careful people need: "
        "exact, cited, fast.\n\n"
        "  kbx index ~/notes                 build or refresh the index\n\n"
        '  kbx search "supplier approval"    ranked passages, cited by file:lines\n\n'
        '  kbx grep "ERR_\\d+" --rank crash    a regex over clean text, best files first\n\n'
        "  kbx status                        what the index holds, what failed\n\n"
        "  kbx read notes/cedar.md:40-58     print the lines a result cites\n\n"
        "Exit codes: 0 done, 1 error, 2 bad argument, 3 no index found, 4 index busy "
        "(try again), 5 index from another kbx version, 6 index folder not writable, "
        "70 a bug in kbx (the index is unchanged), 130 interrupted. With --json an error is "
        "one JSON object: error, code, message, hint.\n\n"
        "kbx --version prints the version."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**SETTINGS)


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


@app.command()
@command(api.COMMANDS["index"])
def index(o: api.IndexOptions, *, db=None, as_json: bool = False) -> None:
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
    path, cap = o.path, _size(o.max_size) if o.max_size is not None else None
    with progress_bar("[bold]indexing", as_json, detail=True) as bar:
        task = bar.add_task("", total=None)
        stages: dict[str, int] = {}

        def tick(done: int, total: int, rel: str) -> None:
            bar.update(task, completed=done, total=total, description=rel[-50:])

        def tick_recognizer(name: str, done: int, total: int) -> None:
            if name not in stages:
                label = name if name == api.VECTORS_STAGE else f"recognizer {name}"
                stages[name] = bar.add_task(label, total=total)
            bar.update(stages[name], completed=done)

        def searchable(r: api.IndexReport, slow: list[str]) -> None:
            if slow and not as_json:
                bar.update(task, visible=False)
                err.print(
                    f"Searchable now ({r.searchable_s:.1f} s); {', '.join(slow)} next, "
                    "search works meanwhile (interrupted, `kbx index` carries on)",
                    markup=False,
                )

        report = api.index(
            path,
            db,
            max_size=cap,
            workers=o.workers or None,
            hidden=o.hidden,
            stemmer=o.stemmer,
            progress=tick,
            recognizer_progress=tick_recognizer,
            searchable=searchable,
        )
    resolved = None
    if o.then_resolve:
        idx = api.Index.for_root(path, db)
        resolved = api.resolve(idx, settings=_resolve_settings(idx))
    if as_json:
        emit_json(api.to_json("index", (report, resolved)))
        return
    out.print(f"Indexed {report.root} in {report.seconds:.1f} s  ({report.db})", markup=False)
    out.print(
        f"  {report.new} new, {report.updated} updated, {report.unchanged} unchanged, "
        f"{report.removed} removed, {report.failed} failed, {report.skipped} skipped"
    )
    out.print(f"  {report.units_added} units added, {report.units_swept} swept")
    _lines(api.present.passed_over(report.passed_over, " "))
    for r in report.recognizers:
        if r.units:
            out.print(
                f"  {r.name} {r.version}: {r.units} units, {r.mentions} mentions", markup=False
            )
        if r.superseded:
            out.print(f"  {r.name} stopped: {r.superseded}", markup=False)
    _lines([api.present.file_line(f) for f in report.failures])
    _lines(api.present.unit_failures(report.unit_failures, "tried again by the next `kbx index`"))
    for name, why in report.unavailable:
        out.print(f"  recognizer {name} not run: {why}", markup=False)
    if report.vectors and report.vectors.off:
        out.print(f"  new passages not embedded: {report.vectors.off}", markup=False)
    elif report.vectors:
        v = report.vectors
        out.print(f"  vectors: {v.units} passages embedded with {v.model}", markup=False)
    if resolved:
        out.print(f"  resolved: {_resolved_line(resolved)}", markup=False)
        if resolved.offline:
            out.print(f"  offline: {resolved.offline}", markup=False)


@app.command()
@command(api.COMMANDS["status"])
def status(o: api.StatusOptions, *, db=None, as_json: bool = False) -> None:
    """Show what the index holds: documents, units, failures, schema version, size.

    Examples:

      kbx status --json

      kbx status ~/notes
    """
    s = api.to_json("status", api.perform(api.Index.find(db, start=o.folder.expanduser()), o))
    if as_json:
        emit_json(s)
        return
    _lines(api.present.status(s))


def _lines(lines: list[str]) -> None:
    for line in lines:
        out.print(line, markup=False)


for _read in (reading.read, reading.search, reading.grep, reading.mentions):
    app.command()(_read)


@app.command()
@command(api.COMMANDS["recognizers"])
def recognizers(o: api.RecognizersOptions, *, db=None, as_json: bool = False) -> None:
    """List the installed recognizers: version, types, filter or boost, and their work.

    Recognizers come from the entry-point group `kbx.recognizers` (built-ins too);
    `kbx index` runs each on every unit that lacks a run of its current version. One
    that was uninstalled or turned off is listed as not installed while its mentions
    remain; --purge drops them.

    Examples:

      kbx recognizers --json

      kbx recognizers --purge acronyms
    """
    idx = api.Index.find(db)
    registry = api.registry_for(idx)
    if o.purge:
        removed = api.purge(idx, o.purge, registry)
        if as_json:
            emit_json(api.to_json("recognizers purge", removed))
        else:
            for name, n in removed.items():
                out.print(f"purged {name}: {n} mentions removed", markup=False)
        return
    rows = api.recognizers(idx, registry)
    if as_json:
        emit_json(api.to_json("recognizers", (rows, registry.broken)))
        return
    for name, why in registry.broken:
        err.print(f"[yellow]warning:[/] recognizer {name} could not be loaded: {escape(why)}")
    for name, why in registry.off:
        out.print(f"{name}  off: {why}", markup=False)
    for r in rows:
        if not r.installed:
            out.print(
                f"{r.name} {r.version}  not installed: {r.mentions} mentions on {r.units} units "
                f"remain (`kbx recognizers --purge {r.name}` drops them)",
                markup=False,
            )
            continue
        use = "filter" if r.filter else "boost"
        out.print(
            f"{r.name} {r.version}  [{', '.join(r.types)}]  {use}  "
            f"{r.units}/{r.units_total} units, {r.mentions} mentions"
            + (f", {r.failed} failed" if r.failed else ""),
            markup=False,
        )


def _resolve_settings(idx: api.Index) -> api.ResolveSettings:
    """How politely to ask, from the index's kbx.toml and the environment: read here, at
    the command's start (a bad value stops it before any request), and passed down."""
    return api.ResolveSettings.load(api.load_config(idx.root).resolve)


def _resolved_line(r) -> str:
    return (
        f"{r.found} found, {r.not_found} not found, {len(r.failures)} failed, "
        f"{r.cached} cached; {r.retried} retries ({r.seconds:.1f} s)"
    )


@app.command()
@command(api.COMMANDS["resolve"])
def resolve(o: api.ResolveOptions, *, db=None, as_json: bool = False) -> None:
    """Fetch metadata for identifiers: DOIs from Crossref and OpenAlex, ORCIDs from OpenAlex.

    Titles, years, venues and authors (by ORCID when given) become entities and facets;
    a passage citing a DOI names its authors too. Answers are cached in the index: a work
    found is not asked for again unless --refresh; a 404 is recorded as not found. Polite
    by default: set `mailto` in kbx.toml [resolve] (or KBX_MAILTO); 5 requests/s
    (`rate`), timeouts, retries with backoff on 429 and 5xx honouring Retry-After. Base
    URLs: KBX_CROSSREF_URL, KBX_OPENALEX_URL. Offline, it says so and changes nothing.

    Examples:

      kbx resolve --only doi --limit 50

      KBX_MAILTO=you@example.org kbx resolve --json
    """
    idx = api.Index.find(db)
    settings = _resolve_settings(idx)
    with progress_bar("[bold]resolving", as_json) as bar:
        task = bar.add_task("", total=None)
        r = api.resolve(
            idx,
            o.only or None,
            o.limit,
            o.refresh,
            settings=settings,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if as_json:
        emit_json(api.to_json("resolve", r))
        return
    if r.offline:
        out.print(
            f"offline: {r.offline}; nothing more fetched. Indexing and search work as before."
        )
    out.print(_resolved_line(r), markup=False)
    for entity_id, service, why in r.failures[:10]:
        out.print(f"  [yellow]![/] {entity_id} ({service}): {why}", markup=False)
    if len(r.failures) > 10:
        out.print(f"  … and {len(r.failures) - 10} more; run again to retry them")


@app.command()
@command(api.COMMANDS["embed"])
def embed(o: api.EmbedOptions, *, db=None, as_json: bool = False) -> None:
    """Give every passage a vector, so that `kbx search` ranks by meaning too.

    Runs the dense model (the dense extra: all-MiniLM-L6-v2 on ONNX Runtime,
    or the model folder that kbx.toml names) over the passages that lack a
    vector of it, in batches that commit as they go: interrupted, the next
    run goes on from there. A few passages a second on a laptop's CPU, so a
    large folder takes a while; search by words works meanwhile. A model that
    keeps several windows of a long passage gives every passage its first before
    any its later ones, so search ranks them all by meaning well before the pass
    ends. Once it has
    run, `kbx search` is hybrid by default (`--mode bm25` for words alone) and
    `kbx index` embeds the passages it adds.

    Examples:

      kbx embed

      kbx search "how do I stop a stream early"

      kbx search "how do I stop a stream early" --mode dense
    """
    index = api.Index.find(db)
    with progress_bar("[bold]embedding", as_json) as bar:
        task = bar.add_task("", total=None)
        r = api.embed(
            index, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    if as_json:
        emit_json(api.to_json("embed", r))
    elif r.off:
        err.print(f"kbx embed: {r.off}", markup=False)
    else:
        out.print(
            f"{r.units} passages embedded with {r.model} ({r.windows} windows) in "
            f"{r.seconds:.1f} s"
            + (
                f", all searchable by meaning after {r.first_seconds:.1f} s"
                if r.units and r.windows > r.first_windows  # later windows came after
                else ""
            )
            + (f"; {r.removed} old vectors removed" if r.removed else "")
            + (f"; {r.pending} later windows to come: run it again" if r.pending else ""),
            markup=False,
        )


@app.command()
@command(api.COMMANDS["reprocess"])
def reprocess(o: api.ReprocessOptions, *, db=None, as_json: bool = False) -> None:
    """Redo recognizer runs that are stale after an upgrade, without re-reading files.

    A run is kept per (unit, recognizer, version). After a recognizer's version,
    model or configuration changes, its runs are stale: this plans the work
    (stale, missing and failed units per recognizer, with an estimate), then redoes
    it in batches across worker processes. Other recognizers are not touched. Each
    batch swaps its units' mentions in one transaction, so search sees the old
    mentions or the new, never a mix; interrupted, it continues where it stopped.

    With --engine dask the batches go to the workers of a running Dask cluster,
    each loading the recognizers once; this process still commits every batch, so
    the result is the local engine's, and a worker that dies costs only its batch.

    Examples:

      kbx reprocess --dry-run

      kbx reprocess -r dates --workers 2 --json

      kbx reprocess -r spacy --engine dask --address tcp://10.0.0.5:8786

      kbx reprocess -r spacy --address tcp://10.0.0.5:8786 --spool /shared/kbx
    """
    idx = api.Index.find(db)
    registry = api.registry_for(idx)
    for name, why in registry.broken:
        err.print(f"[yellow]warning:[/] recognizer {name} could not be loaded: {escape(why)}")
    workers = o.workers or os.cpu_count() or 1
    with progress_bar("[bold]{task.description}", as_json) as bar:
        tasks: dict[str, int] = {}

        def tick(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done)

        report = api.reprocess(
            idx, registry, o.recognizer or None, o.redo_all, workers, o.dry_run, tick,
            o.engine, o.address, o.spool,
        )  # fmt: skip
    if as_json:
        emit_json(api.to_json("reprocess", report))
        return
    if not any(p.todo for p in report.plan):
        out.print("Nothing to reprocess: every recognizer's runs are current.")
        return
    for p in (p for p in report.plan if p.todo):
        eta = "" if p.estimate_s is None else f", about {p.estimate_s:.1f} s"
        out.print(
            f"{p.name} {p.version}: {p.todo} to do of {p.units} units "
            f"({p.stale} stale, {p.missing} missing, {p.failed} failed"
            + (f", {p.forced} forced" if p.forced else "")
            + f"{eta})",
            markup=False,
        )
    if o.dry_run:
        return
    for d in report.done:
        out.print(
            f"  {d.name}: {d.units} units in {d.seconds:.1f} s, "
            f"{d.mentions} mentions added, {d.removed} removed"
            + (f", {len(d.failures)} failed (retried next run)" if d.failures else ""),
            markup=False,
        )
    _lines(api.present.unit_failures(report.failures, "tried again by the next `kbx reprocess`"))
    out.print(f"Reprocessed in {report.seconds:.1f} s")


app.add_typer(gazetteer_cli.app, name="gazetteer")
app.command()(gazetteer_cli.entities)
app.command()(gazetteer_cli.entity)
app.command()(export_cli.export)
app.command()(serve_cli.mcp)
app.command()(serve_cli.serve)


@app.command()
def version() -> None:
    """Print kbx's version."""
    out.print(__version__)


def main() -> None:
    """Entry point: run the app, turning every failure into one line and its exit code
    (see kbx.errors). No traceback reaches a user: an unexpected exception is a bug in kbx,
    said as such, with its details saved to a file for the report. With --json, a usage
    error (an unknown option, a value of the wrong kind) is the JSON error object too."""
    args = sys.argv[1:]
    as_json = "--json" in args
    name = args[0] if args else ""
    if name == "gazetteer" and len(args) > 1 and not args[1].startswith("-"):
        name = f"gazetteer {args[1]}"
    say_waits()
    try:
        if args[:1] in (["--version"], ["-V"]):
            return version()
        try:
            if as_json:  # typer's own handling would print a usage error as a box
                code = typer.main.get_command(only(args[0] if args else "")).main(
                    args, standalone_mode=False
                )
                if isinstance(code, int) and code:
                    sys.exit(code)
            else:
                only(args[0] if args else "")()
        except SystemExit as e:  # typer turns Ctrl-C into a quiet exit 130
            if e.code == INTERRUPTED:
                raise KeyboardInterrupt from None
            raise
    except ClickException as e:  # only with --json: typer shows it otherwise
        known = name in api.COMMANDS or name in ("gazetteer", "version")
        hint = f"`kbx {name} --help` lists what it takes" if known else "`kbx --help` lists them"
        _fail("BadArgument", e.exit_code, e.format_message(), hint, as_json)
    except typer.Abort:
        _fail("Aborted", 1, "aborted", None, as_json)
    except KbxError as e:
        _fail(type(e).__name__, e.exit_code, str(e), _HINTS.get(e.exit_code), as_json)
    except KeyboardInterrupt:
        said, go_on = api.interrupted(name)
        _fail("Interrupted", INTERRUPTED, said, go_on, as_json)
    except Exception as e:  # a bug: say so, keep the details, never advise deleting .kbx
        if _interrupted(e):
            said, go_on = api.interrupted(name)
            _fail("Interrupted", INTERRUPTED, said, go_on, as_json)
        report = _save_traceback()
        _fail(
            "InternalError",
            INTERNAL_ERROR,
            f"kbx hit a bug ({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''})"
            "; the index is unchanged, since every write is one transaction",
            f"please report it with the command you ran, `kbx version` and {report}",
            as_json,
        )


def _interrupted(e: BaseException | None) -> bool:
    """Whether a Ctrl-C caused ``e``: DuckDB ends a query it interrupts with an error of
    its own ("Query interrupted", ``InterruptException``), not KeyboardInterrupt."""
    for _ in range(8):  # the chain of causes, shortly
        if e is None:
            return False
        if isinstance(e, KeyboardInterrupt) or type(e).__name__ == "InterruptException":
            return True
        if "Query interrupted" in str(e):
            return True
        e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    return False


READS_ONLY = {"search", "grep", "read", "status", "mentions", "version"}


def run() -> None:
    """The ``kbx`` program: ``main``, then, after a command that only reads, an exit that
    skips Python's teardown of every loaded module (about 50 ms of a search's CPU): such a
    command has closed its index and has nothing left to write; its output is flushed
    first. A command that writes, or starts workers, ends the ordinary way."""
    reads = len(sys.argv) > 1 and sys.argv[1] in READS_ONLY
    try:
        main()
        code = 0
    except SystemExit as e:
        if not reads or not isinstance(e.code, int | None):
            raise
        code = e.code or 0
    if reads:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError):  # a reader that went away (`| head`) is not an error
                stream.flush()
        os._exit(code)


def only(name: str) -> typer.Typer:
    """The app with only the command ``name`` when it has one by that name, else the whole
    app. A process runs one command, and typer turns every command it holds into a click
    command before it parses the line: 30-45 ms of CPU for the 17 commands, 3-5 for one."""
    chosen = [c for c in app.registered_commands if _name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not chosen and not groups:
        return app
    slim = typer.Typer(**SETTINGS)
    slim.registered_commands, slim.registered_groups = chosen, groups
    slim.callback()(_group)  # a group of one, so its usage still reads `kbx NAME ...`
    return slim


def _name(c: typer.models.CommandInfo) -> str:
    return typer.main.get_command_name(c.name or c.callback.__name__)


def _group() -> None:
    """kbx."""


_HINTS = {
    4: "only one kbx command writes an index at a time; readers are never blocked for long",
}


def _fail(error: str, code: int, message: str, hint: str | None, as_json: bool) -> None:
    if as_json:
        emit_json({"error": error, "code": code, "message": message, "hint": hint})
    else:
        err.print(f"[red]error:[/] {escape(message)}")
        if hint:
            err.print(f"  {escape(hint)}", style="dim")
    sys.exit(code)


def _save_traceback() -> str:
    """Write the current exception's traceback to a temporary file; returns its path."""
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile(
        "w", prefix="kbx-bug-", suffix=".txt", delete=False, encoding="utf-8"
    ) as f:
        f.write(f"kbx {__version__}\nargv: {sys.argv!r}\n\n{traceback.format_exc()}")
    return f.name
