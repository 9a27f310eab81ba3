"""``kbx gazetteer …`` and ``kbx entities`` / ``kbx entity``: the names people and agents
add, and the entities the index knows."""

from __future__ import annotations

import dataclasses
import sys

import typer

from kbx import api
from kbx.cli.common import emit_json, out, progress_bar
from kbx.cli.define import command
from kbx.errors import BadArgument

app = typer.Typer(
    help="Names that general models miss, grown by people and agents, with provenance.\n\n"
    "Every change records who made it, when, and from which document; a retraction is "
    "recorded, not erased. An edit re-runs the gazetteer only on the units that can "
    "contain the names it changed.",
    no_args_is_help=True,
)

shown = api.present.shown  # control characters as escapes: a name cannot rewrite the screen


def _all(values) -> str:
    return " | ".join(shown(v) for v in values)


def _edit_summary(r: api.EditReport, verb: str) -> None:
    for line in api.present.edit(api.to_json("gazetteer add", r), verb):
        out.print(line, markup=False)


@app.command()
@command(api.COMMANDS["gazetteer add"])
def add(o: api.GazetteerAddOptions, *, db=None, as_json: bool = False) -> None:
    """Add a name (or aliases to an existing entry) and find it at once.

    Examples:

      kbx gazetteer add "Project Cedar" -t PROJECT -a Cedar --by agent:planner
        --source notes/cedar.md

      kbx gazetteer add Apple --id Q312 --type ORG --alias "Apple Inc."

      kbx gazetteer add Apple --id Q312 --type ORG --pin --by agent:planner
        (two imported entries share "Apple": here it is Q312)
    """
    r = api.perform(api.Index.find(db), o)
    if as_json:
        emit_json(api.to_json("gazetteer add", r))
        return
    _edit_summary(r, "added")


@app.command()
@command(api.COMMANDS["gazetteer retract"])
def retract(o: api.GazetteerRetractOptions, *, db=None, as_json: bool = False) -> None:
    """Retract an entry: its mentions leave search; the entry and its history stay.

    Example:

      kbx gazetteer retract gz:project-cedar --by ann --why "merged into Q312"
    """
    r = api.perform(api.Index.find(db), o)
    if as_json:
        emit_json(api.to_json("gazetteer retract", r))
        return
    _edit_summary(r, "retracted")


@app.command("list")
@command(api.COMMANDS["gazetteer list"])
def list_(o: api.GazetteerListOptions, *, db=None, as_json: bool = False) -> None:
    """List the entries with their aliases and who added them."""
    rows = api.gazetteer_list(api.Index.find(db), o.retracted)
    if as_json:
        emit_json({"entries": rows})
        return
    if not rows:
        out.print("the gazetteer is empty; add a name with `kbx gazetteer add NAME --type T`")
    for r in rows:
        gone = (
            f"  RETRACTED by {shown(r['retracted_by'])}: {shown(r['why'])}"
            if r["retracted_at"]
            else ""
        )
        out.print(
            f"{shown(r['entry_id'])}  {shown(r['type'])}  {_all(r['aliases'])}"
            f"{'  (any case)' if r['ignore_case'] else ''}  by {shown(r['added_by'])}"
            f"{'  from ' + shown(r['source']) if r['source'] else ''}{gone}",
            markup=False,
        )


@app.command()
@command(api.COMMANDS["gazetteer show"])
def show(o: api.GazetteerShowOptions, *, db=None, as_json: bool = False) -> None:
    """Show one entry and its full history."""
    e = api.gazetteer_show(api.Index.find(db), o.id)
    if as_json:
        emit_json(e)
        return
    out.print(f"{shown(e['entry_id'])}  {shown(e['type'])}  {shown(e['name'])}", markup=False)
    out.print(f"  aliases: {_all(e['aliases'])}", markup=False)
    for x in e["log"]:
        where = f" from {shown(x['source'])}" if x["source"] else ""
        note = f": {shown(x['note'])}" if x["note"] else ""
        out.print(f"  {x['at']}  {x['action']} by {shown(x['by'])}{where}{note}", markup=False)


@app.command("import")
@command(api.COMMANDS["gazetteer import"])
def import_(o: api.GazetteerImportOptions, *, db=None, as_json: bool = False) -> None:
    """Add every entry of a file in one transaction: one bad entry and nothing is added
    (unless --skip-bad).

    Wikidata's own JSON, streamed (a whole dump, .bz2 or .gz read as they are): the QID is
    the entry ID, labels and aliases come in the --lang languages, the type from P31
    (instance of) through the README's table, and the file and dump date are recorded.
    An alias two imported entries share links to neither until one is pinned
    (`kbx gazetteer add NAME --id QID --type T --pin`).

    Examples:

      kbx gazetteer import Q312.json --format wikidata

      kbx gazetteer import latest-all.json.bz2 -f wikidata --only-type ORG --qids wanted.txt

      kbx gazetteer import query.csv --format csv --type ORG
    """
    file, fmt, lang, type_, qid, qids = o.file, o.format, o.lang, o.type, o.qid, o.qids
    only_type, map_, dump_date, skip_bad, by = o.only_type, o.map, o.dump_date, o.skip_bad, o.by
    wikidata_only = {"--lang": lang, "--type": type_, "--qid": qid, "--qids": qids}
    wikidata_only |= {"--only-type": only_type, "--map": map_, "--dump-date": dump_date}
    if fmt is None:
        given = [k for k, v in wikidata_only.items() if v] + (["--skip-bad"] if skip_bad else [])
        if given:
            raise BadArgument(f"{given[0]} is for --format wikidata or csv")
        r = api.gazetteer_import(api.Index.find(db), file, by)
        if as_json:
            emit_json(dataclasses.asdict(r))
            return
        _edit_summary(r, f"imported {len(r.entry_ids)} entries:")
        return
    idx = api.Index.find(db)
    with progress_bar("[bold]{task.description}", as_json) as bar:
        tasks: dict[str, int] = {}

        def tick(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total or None)
            bar.update(tasks[stage], completed=done, total=total or None)  # a pipe: no size

        r = api.gazetteer_import_file(
            idx, file, fmt, lang or ["en"], type_, qid or [], qids, only_type or [], map_ or [],
            dump_date, skip_bad, by, tick,
        )  # fmt: skip
    if as_json:
        emit_json(dataclasses.asdict(r))
        return
    _import_summary(r)


def _import_summary(r: api.ImportReport) -> None:
    what = "Wikidata" if r.format == "wikidata" else "SPARQL CSV"
    out.print(
        f"imported {shown(r.file)} ({what}, dump of {r.dump_date}): {r.added} added, "
        f"{r.merged} gained aliases, {r.unchanged} unchanged, of {r.read} read",
        markup=False,
    )
    out.print(
        f"  left out: {r.unmapped} with no mapped P31 type (--type or --map takes them), "
        f"{r.filtered} filtered, {r.not_items} not items, {r.retracted} retracted, "
        f"{r.bad} bad, {r.aliases_dropped} unusable aliases",
        markup=False,
    )
    for b in r.bad_lines:
        qid = f" {b['qid']}" if b["qid"] else ""
        out.print(f"  skipped line {b['line']}{shown(qid)}: {shown(b['why'])}", markup=False)
    if r.shared_aliases:
        first = r.shared[0]
        out.print(
            f"  {r.shared_aliases} aliases name several entries and link to none, e.g. "
            f"{shown(first['alias'])!r} ({_all(first['entries'])}); pin one with `kbx gazetteer "
            "add NAME --id QID --type T --pin`",
            markup=False,
        )
    out.print(
        f"  gazetteer {r.version}: {r.units_rerun} units re-run, {r.units_carried} carried "
        f"over, {r.mentions} mentions ({r.seconds:.2f} s)",
        markup=False,
    )


@app.command()
@command(api.COMMANDS["gazetteer export"])
def export(o: api.GazetteerExportOptions, *, db=None) -> None:
    """Write every entry, retracted ones included, to standard output."""
    sys.stdout.write(api.gazetteer_export(api.Index.find(db), o.format))


@app.command()
@command(api.COMMANDS["gazetteer check"])
def check(o: api.GazetteerCheckOptions, *, db=None, as_json: bool = False) -> None:
    """Find names the analysis chain splits or over-stems, and protect them.

    `io.js` is split into io and js, which match everywhere; `Wells` stems to the
    frequent `well`. A protected word is indexed and searched whole (like Lucene's
    keyword_marker); the postings of the units holding it are rebuilt.
    """
    found = api.gazetteer_check(api.Index.find(db), protect=not o.dry_run)
    if as_json:
        emit_json({"found": found})
        return
    if not found:
        out.print("every name passes through the analysis chain whole")
    for f in found:
        out.print(
            f"{shown(f['entry_id'])}  {shown(f['name'])}: {shown(f['word'])} {f['why']}",
            markup=False,
        )
    if found and not o.dry_run:
        out.print(f"protected {len({f['word'] for f in found})} words; postings rebuilt")


@command(api.COMMANDS["entities"])
def entities(o: api.EntitiesOptions, *, db=None, as_json: bool = False) -> None:
    """List entities, most widely mentioned first, with passage and document counts.

    Entities come from identifiers (doi:…, orcid:…, cve:…), e-mail addresses and the
    people who sign with them, gazetteer entries, document authors and names a model found.
    Those that filter come first; a model's name that nothing confirms is marked
    "unconfirmed" and cannot filter. Pass an ID or a name to `kbx search --entity`.

    Example:

      kbx entities --type PERSON --q dahl
    """
    rows = api.to_json("entities", api.perform(api.Index.find(db), o))
    if as_json:
        emit_json(rows)
        return
    for line in api.present.entities(rows):
        out.print(line, markup=False)


@command(api.COMMANDS["entity"])
def entity(o: api.EntityOptions, *, db=None, as_json: bool = False) -> None:
    """Show one entity: its aliases, provenance, and where it is mentioned (path:line),
    most recent documents first.

    Examples:

      kbx entity doi:10.1145/1629575.1629596

      kbx entity "Ann Lee" --json
    """
    e = api.to_json("entity", api.perform(api.Index.find(db), o))
    if as_json:
        emit_json(e)
        return
    for line in api.present.entity(e):
        out.print(line, markup=False)
