"""Each command defined once: its options as a typed dataclass whose fields carry their
names, help, bounds and defaults, the shared ``Filters`` among them.

The faces are generated from these definitions, never written by hand (``kbx.faces``
reads them): the CLI's typer options (``cli/define.py``), the MCP tools' input schemas
(``serve/mcp.py``) and the HTTP API's parameters (``serve/http.py``);
``tests/test_faces.py`` walks every command and checks that each face accepts exactly the
options its definition has. A new filter is one field of ``Filters`` (and its SQL in
``search/filters.py``).

A field's face name is the CLI's long option without its dashes (``date-from``,
``ignore-case``): the MCP tools and the HTTP API take the same names. The server's own
bounds (a CLI user is alone with their machine; a server is not) are the ``served`` ones.
A pure leaf: no database, nothing loaded but the standard library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLI, MCP, HTTP = "cli", "mcp", "http"
EVERY = frozenset({CLI, MCP, HTTP})
SERVED = frozenset({MCP, HTTP})
DATE_FROM = ("any", "mentioned", "document")
MODES = ("bm25", "dense", "hybrid")


@dataclass(frozen=True)
class Opt:
    """What the faces need to know of one option; ``opt()`` attaches it to a field."""

    help: str  # the CLI's help
    brief: str | None = None  # the MCP tool's description of it (sent every turn): short
    name: str = ""  # the face name; default: the field's, with - for _
    flags: tuple[str, ...] = ()  # the CLI's flags, where not --NAME (and short)
    short: str | None = None  # the CLI's short flag (-e)
    argument: bool = False  # a CLI argument, not an option
    metavar: str | None = None
    low: float | None = None  # bounds on every face
    high: float | None = None
    served: tuple[float, float] | None = None  # the server's bounds, within those
    choices: tuple[str, ...] | None = None  # listed in help and schemas (checked below)
    faces: frozenset[str] = EVERY
    served_required: bool = False  # required of a server's caller though the CLI has a default
    panel: str | None = None  # the CLI help's panel
    http: str | None = None  # HTTP's name where it differs (search's q)
    negatable: bool = False  # --NAME/--no-NAME on the CLI
    envvar: str | None = None  # the CLI reads it from this variable too
    face_defaults: dict[str, Any] = field(default_factory=dict)  # where a face's differs


def opt(default: Any = dataclasses.MISSING, **meta: Any) -> Any:
    """A dataclass field with its ``Opt``; ``list`` as the default means an empty list."""
    o = {"kbx": Opt(**meta)}
    if default is list:
        return field(default_factory=list, metadata=o)
    return field(default=default, metadata=o)


def filters_field() -> Any:
    """The field holding a command's ``Filters``: its options are the filters'."""
    return field(default_factory=lambda: Filters(), metadata={"kbx_filters": True})


FILTERS = "Filters"  # the CLI help's panel of the filters


@dataclass(kw_only=True)
class Filters:
    """What the user asked to narrow by; ``search.filters.compile_filters`` checks it
    against the index. Search, grep and export take the same filters, on every face."""

    entities: list[str] = opt(
        list,
        name="entity",
        short="-e",
        help="Passages naming this entity: an ID (Q312, doi:10.…) or a name or alias. "
        "Repeatable; all must match.",
        brief="entity IDs or names (see entities); all must match",
        panel=FILTERS,
    )
    types: list[str] = opt(
        list,
        name="type",
        short="-t",
        help="Passages with a mention of this type (DOI, DATE, PERSON, …). Repeatable.",
        brief="mention types, e.g. DOI, DATE, PERSON",
        panel=FILTERS,
    )
    after: str | None = opt(
        None,
        help="Passages with a date starting on or after this day (YYYY[-MM[-DD]]).",
        brief="YYYY, YYYY-MM or YYYY-MM-DD: dates from its first day on",
        panel=FILTERS,
    )
    before: str | None = opt(
        None,
        help="Passages with a date ending on or before this day, month or year (inclusive): "
        "--after 2021 --before 2021 means during 2021, --after 2025-06 --before 2025-06 in "
        "June 2025.",
        brief="YYYY, YYYY-MM or YYYY-MM-DD: dates up to its last day (inclusive)",
        panel=FILTERS,
    )
    date_from: str = opt(
        "any",
        help="Which dates count: any (the passage's own and its document's), mentioned, "
        "or document.",
        brief="which dates count: any, mentioned or document",
        choices=DATE_FROM,
        panel=FILTERS,
    )
    meta: list[str] = opt(
        list,
        help="A document metadata field: KEY=VALUE or KEY!=VALUE (e.g. category=news). Repeatable.",
        brief="front-matter KEY=VALUE or KEY!=VALUE",
        panel=FILTERS,
    )
    path: str | None = opt(
        None,
        help="Only files matching this glob (relative to the root; * crosses folders).",
        brief="file glob relative to the root; * crosses /",
        panel=FILTERS,
    )
    quantities: list[str] = opt(
        list,
        name="quantity",
        help="Passages with a quantity: [DIMENSION] OP VALUE, compared in SI (mass>1kg, "
        "size<=4GB, temperature>=30°C, >5 mg, mass=1kg..5kg, usd>=1000); a stated range "
        "counts when it overlaps. Repeatable; all must match.",
        brief="[DIMENSION] OP VALUE in SI, e.g. mass>1kg, size<=4GB; all must match",
        panel=FILTERS,
    )
    authors: list[str] = opt(
        list,
        name="author",
        help="Passages this person wrote: signed (a changelog entry's closing line, a "
        "Signed-off-by: trailer, an Author: byline) or in a document whose metadata names "
        "them; --entity finds passages that merely name them. Repeatable; all must match.",
        brief="people (IDs or names) who wrote the passage: signed it, or authors of its "
        "document; entity finds passages that merely name them; all must match",
        panel=FILTERS,
    )
    lang: str | None = opt(
        None,
        help="Only passages in this language (ISO 639-1: ja, zh, ru, de...; en: the rest).",
        brief="ISO 639-1 language of the passage (ja, zh, de...; en: the rest)",
        panel=FILTERS,
    )

    def __post_init__(self) -> None:  # one value where a list is meant: a list of it
        for f in dataclasses.fields(self):
            if isinstance(getattr(self, f.name), str) and f.default is dataclasses.MISSING:
                setattr(self, f.name, [getattr(self, f.name)])


# -- the commands ---------------------------------------------------------------------


@dataclass(kw_only=True)
class SearchOptions:
    """``kbx search``: the passages that best match a query."""

    query: str = opt(
        help="Words to search for.", brief="words to search for", argument=True, http="q"
    )
    k: int | None = opt(
        None,
        flags=("-k",),
        help="How many passages to show (default 5, 8 with --json).",
        brief="passages to show (default 8)",
        low=1,
        served=(1, 100),
    )
    filters: Filters = filters_field()
    facets: bool | None = opt(
        None,
        help="Also count entities, types, years and quantities (a histogram per dimension) "
        "among all matches (always with --json).",
        brief="also count entities, types, years and quantities among all matches",
        face_defaults={MCP: False, HTTP: True},  # HTTP answers as --json; a model asks
    )
    snippet: int = opt(
        160,
        help="Characters of each passage's snippet, around its densest matches (0: none). "
        "--json has a 240-character snippet and the whole text.",
        low=0,
        faces=frozenset({CLI}),
    )
    exact: int | None = opt(
        None,
        help="How many exact matches of the whole query as a phrase to show (default 1, "
        "3 with --json; 0: none; `kbx grep` shows them all).",
        low=0,
        faces=frozenset({CLI}),
    )
    full: bool = opt(False, help="Print whole passages, not snippets.", faces=frozenset({CLI}))
    mode: str | None = opt(
        None,
        help="Rank by words (bm25), by meaning (dense: the vectors `kbx embed` made), or "
        "both, their scores combined (hybrid). Default: hybrid once `kbx embed` has run on "
        "the index, else bm25.",
        brief="words, meaning or both; default hybrid once the folder is embedded",
        choices=MODES,
    )


@dataclass(kw_only=True)
class GrepOptions:
    """``kbx grep``: every match of a regular expression in the clean text."""

    pattern: str = opt(help="A Python regular expression.", brief="a Python regex", argument=True)
    rank: str | None = opt(
        None,
        help="Visit files in BM25 order of these words (default: the pattern's words).",
        brief="words whose BM25 orders the files (default: the pattern's)",
    )
    context: int = opt(
        0,
        short="-C",
        help="Original lines to show around each match.",
        brief="original lines around each match",
        low=0,
        served=(0, 20),
    )
    max_matches: int = opt(
        20,
        name="max",
        help="Show at most this many.",
        brief="matches shown",
        low=1,
        served=(1, 500),
    )
    ignore_case: bool = opt(False, short="-i", help="Match in any case.")
    filters: Filters = filters_field()
    timeout: float = opt(
        30.0,
        help="Seconds the pattern may match for, over all the text it reads.",
        brief="seconds the pattern may match for (1 to 60)",
        served=(1, 60),
    )


@dataclass(kw_only=True)
class ReadOptions:
    """``kbx read``: the original lines a result cites."""

    spec: str = opt(
        help="File relative to the root, and lines.",
        brief="PATH:START-END as a result cites it",
        argument=True,
        metavar="PATH[:START[-END]]",
    )
    hash: str | None = opt(
        None,
        help="File hash a result printed; warns if the file changed since.",
        brief="the hash the result gave",
    )
    line_numbers: bool = opt(False, short="-n", help="Number the lines.", faces=frozenset({CLI}))


@dataclass(kw_only=True)
class EntitiesOptions:
    """``kbx entities``: the entities the documents name."""

    type: str | None = opt(None, short="-t", help="Only this type.")
    q: str | None = opt(None, help="Only entities whose label, alias or ID has this.")
    limit: int = opt(50, short="-n", help="How many to list.", low=1, served=(1, 500))


@dataclass(kw_only=True)
class EntityOptions:
    """``kbx entity``: one entity and its mentions."""

    id: str = opt(help="An entity ID, label or alias.", argument=True, metavar="ID")
    limit: int = opt(50, short="-n", help="Mentions to list.", low=1, served=(1, 500))


@dataclass(kw_only=True)
class StatusOptions:
    """``kbx status``: what the index holds."""

    folder: Path = opt(
        Path("."),
        help="A folder in or under the indexed one (as `kbx index FOLDER` takes it); the "
        "nearest index from it upward is shown.",
        argument=True,
        faces=frozenset({CLI}),
    )


@dataclass(kw_only=True)
class GazetteerAddOptions:
    """``kbx gazetteer add``: teach the index a name."""

    name: str = opt(help="The name as it is written.", argument=True)
    type: str = opt(
        short="-t",
        help="PERSON, ORG, PROJECT, PRODUCT, … (an unknown one is refused with the list).",
    )
    alias: list[str] = opt(list, short="-a", help="Another way it is written.")
    id: str | None = opt(
        None, help="Its entity ID (e.g. a Wikidata Q312); an existing ID gains the aliases."
    )
    by: str | None = opt(
        None,
        help="Who makes the change: a person, or agent:NAME.",
        brief="who makes the change, e.g. agent:<your client's name>",
        served_required=True,
    )
    source: str | None = opt(
        None,
        help="The indexed document it came from.",
        brief="the indexed file you saw it in",
    )
    note: str | None = opt(None, help="Why, in a few words.")
    ignore_case: bool = opt(False, short="-i", help="Match in any case (default: as written).")
    pin: bool = opt(False, help="Where another entry has these names too, they name this one.")


@dataclass(kw_only=True)
class GazetteerRetractOptions:
    """``kbx gazetteer retract``: an entry's mentions leave search."""

    id: str = opt(help="The entry's ID (see `kbx gazetteer list`).", argument=True)
    by: str = opt(
        help="Who retracts it.", brief="who makes the change, e.g. agent:<your client's name>"
    )
    why: str = opt(help="The reason, kept in the log.")


@dataclass(kw_only=True)
class ExportOptions:
    """``kbx export``: the mentions and texts the filters choose, in the field's formats."""

    format: str = opt(
        help="brat, webanno, docbin or parquet (a folder), or jsonl.",
        argument=True,
        metavar="FORMAT",
    )
    out: Path | None = opt(
        None,
        short="-o",
        help="Where to write: a new (or empty) folder for brat, docbin and parquet; a file "
        "for webanno and jsonl (default: standard output).",
    )
    recognizer: list[str] = opt(
        list,
        short="-r",
        help="Only mentions of this recognizer (repeatable).",
        panel=FILTERS,
    )
    filters: Filters = filters_field()


@dataclass(kw_only=True)
class MentionsOptions:
    """``kbx mentions``: what the recognizers found in a document."""

    spec: str = opt(
        help="An indexed file, and optionally lines.", argument=True, metavar="PATH[:START-END]"
    )
    type: str | None = opt(None, help="Only this mention type.")


@dataclass(kw_only=True)
class IndexOptions:
    """``kbx index``: build or refresh the index of a folder."""

    path: Path = opt(Path("."), help="Folder to index.", argument=True)
    max_size: str | None = opt(
        None, help="Skip files larger than this (default 50MB; remembered by the index)."
    )
    workers: int = opt(0, help="Extraction processes (0: one per core).", low=0)
    hidden: bool | None = opt(
        None,
        help="Also index hidden files and folders (remembered by the index: a later run "
        "keeps them until --no-hidden).",
        negatable=True,
    )
    stemmer: str | None = opt(
        None,
        help="Prose stemmer: snowball (default), plural or none. Changing it rebuilds the "
        "postings from stored text.",
    )
    then_resolve: bool = opt(
        False, name="resolve", help="Then fetch identifier metadata (see `kbx resolve`)."
    )


@dataclass(kw_only=True)
class RecognizersOptions:
    """``kbx recognizers``: the installed recognizers and their work."""

    purge: list[str] = opt(
        list,
        help="Drop the runs and mentions of this recognizer, no longer installed or turned "
        "off in kbx.toml, so search stops serving them. Repeatable.",
    )


@dataclass(kw_only=True)
class ResolveOptions:
    """``kbx resolve``: metadata for identifiers from Crossref and OpenAlex."""

    only: list[str] = opt(list, help="Only this kind: doi or orcid.")
    limit: int | None = opt(None, help="Ask at most N.", low=1)
    refresh: bool = opt(False, help="Ask again for answers already cached.")


@dataclass(kw_only=True)
class EmbedOptions:
    """``kbx embed``: a vector for every passage."""


@dataclass(kw_only=True)
class ReprocessOptions:
    """``kbx reprocess``: redo stale recognizer runs."""

    recognizer: list[str] = opt(
        list, short="-r", help="Only this recognizer (repeatable; default: all)."
    )
    redo_all: bool = opt(
        False, name="all", help="Redo every unit of the chosen recognizers, current runs included."
    )
    workers: int = opt(0, help="Worker processes (0: one per core).", low=0)
    dry_run: bool = opt(False, help="Print the plan; change nothing.")
    engine: str | None = opt(
        None,
        help="Where batches are recognized: local (worker processes) or dask (a running Dask "
        "cluster; pip install 'kbx\\[cluster]'). Default: kbx.toml's \\[engine], else local.",
    )
    address: str | None = opt(
        None, help="The Dask scheduler, tcp://HOST:PORT (implies --engine dask)."
    )
    spool: str | None = opt(
        None,
        help="With dask: send batches as files through this folder (an absolute path every "
        "worker mounts), not through the scheduler. Default: kbx.toml's spool.",
    )


@dataclass(kw_only=True)
class GazetteerListOptions:
    """``kbx gazetteer list``: the entries and who added them."""

    retracted: bool = opt(False, help="Include retracted entries.")


@dataclass(kw_only=True)
class GazetteerShowOptions:
    """``kbx gazetteer show``: one entry and its history."""

    id: str = opt(help="The entry's ID.", argument=True, metavar="ID")


@dataclass(kw_only=True)
class GazetteerExportOptions:
    """``kbx gazetteer export``: every entry on standard output."""

    format: str = opt("jsonl", short="-f", help="jsonl or csv.")


@dataclass(kw_only=True)
class GazetteerCheckOptions:
    """``kbx gazetteer check``: names the analysis chain damages, protected."""

    dry_run: bool = opt(False, help="Report only; protect nothing.")


@dataclass(kw_only=True)
class McpOptions:
    """``kbx mcp``: the index served to an agent over standard input and output."""

    watch: bool = opt(
        True,
        help="Re-index files as they change in the indexed folder while serving.",
        negatable=True,
    )


@dataclass(kw_only=True)
class ServeOptions:
    """``kbx serve``: the page, the HTTP API and MCP over HTTP."""

    port: int = opt(8765, help="Port to listen on (0: any free one).", low=0, high=65535)
    host: str = opt("127.0.0.1", help="Address to bind. Any but loopback needs a token.")
    token: str | None = opt(
        None,
        help="Required on every request as 'Authorization: Bearer TOKEN'.",
        envvar="KBX_TOKEN",
    )
    watch: bool = opt(
        True,
        help="Re-index files as they change in the indexed folder while serving.",
        negatable=True,
    )


@dataclass(kw_only=True)
class GazetteerImportOptions:
    """``kbx gazetteer import``: every entry of a file, in one transaction."""

    file: Path = opt(
        help="The file: .json, .json.bz2, .json.gz, .csv, …; - reads standard input (e.g. "
        "from lbzip2 -dc, which decompresses on every core).",
        argument=True,
    )
    format: str | None = opt(
        None,
        short="-f",
        help="wikidata (entity JSON: a dump, JSON lines, Special:EntityData or wbgetentities) "
        "or csv (qid,label,aliases,type, as the README's SPARQL query gives). Without it: "
        "kbx's own export, .jsonl or .csv.",
    )
    lang: list[str] = opt(list, help="Label and alias languages, in order (default en).")
    type: str | None = opt(None, short="-t", help="The type of entities whose P31 the table lacks.")
    qid: list[str] = opt(list, help="Only this entity (repeatable).")
    qids: Path | None = opt(None, help="Only the QIDs in this file, one a line.")
    only_type: list[str] = opt(list, help="Only entities of this type.")
    map: list[str] = opt(list, help="Map another P31 class: QID=TYPE (repeatable).")
    dump_date: str | None = opt(None, help="YYYY-MM-DD for the provenance (default: file mtime).")
    skip_bad: bool = opt(False, help="Skip bad lines (counted, the first listed).")
    by: str | None = opt(None, help="Who makes the change: a person, or agent:NAME.")


@dataclass(frozen=True)
class Command:
    """One command: its name on every face, its options, and on which faces it is."""

    name: str  # as the CLI spells it ("gazetteer add"); the MCP tool is gazetteer_add
    options: type
    faces: frozenset[str] = frozenset({CLI})
    brief: str = ""  # the MCP tool's description
    json: bool = True  # the CLI's --json (gazetteer export writes its own format)
    # what an interrupted run kept, and how to go on (a command that only reads: nothing)
    interrupted: str = "interrupted; nothing was changed"
    go_on: str | None = None

    @property
    def tool(self) -> str:
        return self.name.replace(" ", "_")


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command(
            "search",
            SearchOptions,
            EVERY,
            "Ranked passages for the query's words (and its meaning, once the folder is "
            "embedded), each cited as path:start-end #hash with a snippet: read only those "
            "lines. Below them, exact matches of the query as a phrase (grep finds every one, "
            "or a regex). Filters narrow to passages naming an entity, with a mention type, "
            "written by an author, dated after/before, with a quantity (mass>1kg), by "
            "front-matter field, path or language; facets counts entities, types, years and "
            "quantities among all matches. A list filter takes one value or several.",
        ),
        Command(
            "grep",
            GrepOptions,
            EVERY,
            "Every match of a Python regex in the documents' clean text (markup stripped, so "
            "a phrase split by bold or a line break still matches), cited at original lines, "
            "best files first (BM25 of rank, default the pattern's words). Prefer it to "
            "search for exact strings, identifiers, error codes, or when you need every "
            "occurrence. A pattern stops with an error after timeout seconds of matching.",
        ),
        Command(
            "read",
            ReadOptions,
            EVERY,
            "The original lines a result cites, numbered. With the result's hash, it says "
            "whether the file changed since it was indexed (its lines may have moved).",
        ),
        Command(
            "entities",
            EntitiesOptions,
            EVERY,
            "Entities the documents name (people, projects, DOIs, …), most mentioned first, "
            "with passage counts; q matches label, alias or ID. Use an ID as search's entity.",
        ),
        Command(
            "entity",
            EntityOptions,
            EVERY,
            "One entity by ID, label or alias: aliases, provenance, and its mentions at "
            "path:line, newest documents first.",
        ),
        Command(
            "status",
            StatusOptions,
            EVERY,
            "What the index holds: documents, units, recognizers, failures.",
        ),
        Command(
            "gazetteer add",
            GazetteerAddOptions,
            EVERY,
            "Teach the index a name it misses (a project, product, person…) so search can "
            "filter on it; recorded with who added it and from which document. type: PERSON, "
            "ORG, PROJECT, PRODUCT, … (an unknown one is refused with the list). pin: make an "
            "alias two entries share (see `entity`'s candidates) link to this one.",
            interrupted="interrupted; the edit is one transaction: made whole or not at all",
        ),
        Command(
            "gazetteer retract",
            GazetteerRetractOptions,
            EVERY,
            "Retract a gazetteer entry: its mentions leave search; it stays in the history.",
            interrupted="interrupted; the edit is one transaction: made whole or not at all",
        ),
        Command(
            "export",
            ExportOptions,
            interrupted="interrupted; nothing was written under --out (an export is whole "
            "or absent)",
            go_on="run the export again",
        ),
        Command("mentions", MentionsOptions),
        Command("mcp", McpOptions, json=False),
        Command("serve", ServeOptions, json=False),
        Command(
            "gazetteer import",
            GazetteerImportOptions,
            interrupted="interrupted; an import is one transaction: nothing was added",
        ),
        Command("gazetteer list", GazetteerListOptions),
        Command("gazetteer show", GazetteerShowOptions),
        Command("gazetteer export", GazetteerExportOptions, json=False),
        Command(
            "gazetteer check",
            GazetteerCheckOptions,
            interrupted="interrupted; the check is one transaction: made whole or not at all",
        ),
        Command(
            "index",
            IndexOptions,
            interrupted="interrupted; the files indexed so far are committed, each batch whole",
            go_on="run `kbx index` again: it carries on with the files not yet in",
        ),
        Command("recognizers", RecognizersOptions),
        Command(
            "resolve",
            ResolveOptions,
            interrupted="interrupted; the answers fetched so far are cached",
            go_on="run `kbx resolve` again: it asks only for the rest",
        ),
        Command(
            "embed",
            EmbedOptions,
            interrupted="interrupted; the passages embedded so far keep their vectors",
            go_on="run `kbx embed` again: it goes on from there",
        ),
        Command(
            "reprocess",
            ReprocessOptions,
            interrupted="interrupted; the batches done are committed (search sees old or new "
            "mentions, never a mix)",
            go_on="run `kbx reprocess` again: it continues where it stopped",
        ),
    )
}


def interrupted(command: str) -> tuple[str, str | None]:
    """What an interrupted ``command`` kept, and how to go on."""
    if command in COMMANDS:
        c = COMMANDS[command]
        return c.interrupted, c.go_on
    return "interrupted; what was committed is kept", None
