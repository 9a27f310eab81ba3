"""``kbx gazetteer …`` and ``kbx entities`` / ``kbx entity``: the names people and agents
add, and the entities the index knows."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from kbx import api
from kbx.cli.common import DbOption, JsonOption, emit_json, out

app = typer.Typer(
    help="Names that general models miss, grown by people and agents, with provenance.\n\n"
    "Every change records who made it, when, and from which document; a retraction is "
    "recorded, not erased. An edit re-runs the gazetteer only on the units that can "
    "contain the names it changed.",
    no_args_is_help=True,
)

# C0 and C1 controls (ESC, BEL, CR, …), line and paragraph separators, bidi overrides and
# isolates, and lone surrogates: what can recolour, move or reorder a terminal's text.
_HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def shown(value: object) -> str:
    """Text from entries and documents for a terminal, control characters written as
    escapes (``\\x1b``): a name must not recolour, move or rewrite what is printed.
    JSON output needs none of this (json escapes them)."""
    return _HIDDEN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))


def _all(values) -> str:
    return " | ".join(shown(v) for v in values)


ByOption = Annotated[
    str | None,
    typer.Option("--by", help="Who makes the change: a person, or agent:NAME."),
]


def _edit_summary(r: api.EditReport, verb: str) -> None:
    out.print(
        f"{verb} {shown(', '.join(r.entry_ids))}; gazetteer {r.version}: {r.units_rerun} units "
        f"re-run, {r.units_carried} carried over, {r.mentions} mentions, "
        f"{r.removed} replaced ({r.seconds:.2f} s)",
        markup=False,
    )


@app.command()
def add(
    name: Annotated[str, typer.Argument(help="The name as it is written.")],
    type_: Annotated[
        str, typer.Option("--type", "-t", help=f"One of: {', '.join(api.GAZETTEER_TYPES)}.")
    ],
    alias: Annotated[
        list[str] | None, typer.Option("--alias", "-a", help="Another way it is written.")
    ] = None,
    entry_id: Annotated[
        str | None,
        typer.Option(
            "--id", help="Its entity ID (e.g. a Wikidata Q312); an existing ID gains the aliases."
        ),
    ] = None,
    by: ByOption = None,
    source: Annotated[
        str | None, typer.Option("--source", help="The indexed document it came from.")
    ] = None,
    note: Annotated[str | None, typer.Option("--note", help="Why, in a few words.")] = None,
    ignore_case: Annotated[
        bool,
        typer.Option("--ignore-case", "-i", help="Match in any case (default: as written)."),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add a name (or aliases to an existing entry) and find it at once.

    Examples:

      kbx gazetteer add "Project Cedar" -t PROJECT -a Cedar --by agent:planner
        --source notes/cedar.md

      kbx gazetteer add Apple --id Q312 --type ORG --alias "Apple Inc."
    """
    r = api.gazetteer_add(
        api.Index.find(db), name, type_, alias, entry_id, by, source, note, ignore_case
    )
    if as_json:
        emit_json(api.to_json("gazetteer add", r))
        return
    _edit_summary(r, "added")


@app.command()
def retract(
    entry_id: Annotated[str, typer.Argument(help="The entry's ID (see `kbx gazetteer list`).")],
    by: Annotated[str, typer.Option("--by", help="Who retracts it.")],
    why: Annotated[str, typer.Option("--why", help="The reason, kept in the log.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Retract an entry: its mentions leave search; the entry and its history stay.

    Example:

      kbx gazetteer retract gz:project-cedar --by ann --why "merged into Q312"
    """
    r = api.gazetteer_retract(api.Index.find(db), entry_id, by, why)
    if as_json:
        emit_json(api.to_json("gazetteer retract", r))
        return
    _edit_summary(r, "retracted")


@app.command("list")
def list_(
    retracted: Annotated[bool, typer.Option(help="Include retracted entries.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the entries with their aliases and who added them."""
    rows = api.gazetteer_list(api.Index.find(db), retracted)
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
def show(
    entry_id: Annotated[str, typer.Argument(help="The entry's ID.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one entry and its full history."""
    e = api.gazetteer_show(api.Index.find(db), entry_id)
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
def import_(
    file: Annotated[Path, typer.Argument(help="A .jsonl or .csv file, as `export` writes.")],
    by: ByOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add every entry of a file in one transaction: one bad entry and nothing is added."""
    r = api.gazetteer_import(api.Index.find(db), file, by)
    if as_json:
        emit_json(dataclasses.asdict(r))
        return
    _edit_summary(r, f"imported {len(r.entry_ids)} entries:")


@app.command()
def export(
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl or csv.")] = "jsonl",
    db: DbOption = None,
) -> None:
    """Write every entry, retracted ones included, to standard output."""
    sys.stdout.write(api.gazetteer_export(api.Index.find(db), fmt))


@app.command()
def check(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report only; protect nothing.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Find names the analysis chain splits or over-stems, and protect them.

    `io.js` is split into io and js, which match everywhere; `Wells` stems to the
    frequent `well`. A protected word is indexed and searched whole (like Lucene's
    keyword_marker); the postings of the units holding it are rebuilt.
    """
    found = api.gazetteer_check(api.Index.find(db), protect=not dry_run)
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
    if found and not dry_run:
        out.print(f"protected {len({f['word'] for f in found})} words; postings rebuilt")


def entities(
    type_: Annotated[str | None, typer.Option("--type", "-t", help="Only this type.")] = None,
    q: Annotated[
        str | None, typer.Option("--q", help="Only entities whose label, alias or ID has this.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n")] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List entities, most widely mentioned first, with passage and document counts.

    Entities come from identifiers (doi:…, orcid:…, cve:…), gazetteer entries and
    document authors. Pass an ID or a name to `kbx search --entity`.

    Example:

      kbx entities --type PERSON --q dahl
    """
    rows = api.entities(api.Index.find(db), type_, q, limit)
    if as_json:
        emit_json(api.to_json("entities", rows))
        return
    if not rows:
        out.print("no entity matches")
    for r in rows:
        out.print(
            f"{shown(r.entity_id)}  {shown(r.type)}  {shown(r.label)}  "
            f"({r.passages} passages, {r.documents} docs)",
            markup=False,
        )


def entity(
    name: Annotated[str, typer.Argument(help="An entity ID, label or alias.")],
    limit: Annotated[int, typer.Option("--limit", "-n", help="Mentions to list.")] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one entity: its aliases, provenance, and where it is mentioned (path:line),
    most recent documents first.

    Examples:

      kbx entity doi:10.1145/1629575.1629596

      kbx entity "Ann Lee" --json
    """
    e = api.entity(api.Index.find(db), name, limit)
    if as_json:
        emit_json(api.to_json("entity", e))
        return
    out.print(
        f"{shown(e.entity_id)}  {shown(e.type)}  {shown(e.label)}  (from {shown(e.source)})",
        markup=False,
    )
    if e.aliases:
        out.print(f"  aliases: {_all(e.aliases)}", markup=False)
    for p in e.provenance:
        out.print(f"  {p['at']}  {shown(p['action'])} by {shown(p['by'])}", markup=False)
    for m in e.mentions:
        what = shown(m["text"]) if m["as"] == "text" else f"({shown(m['as'])})"
        out.print(f"  {shown(m['path'])}:{m['line']}  {m['doc_date'] or ''}  {what}", markup=False)
