"""The typed library: ``kbx.Index``, whose methods are the commands, and ``perform``, the
one function per command that every face calls with the command's options object
(``kbx.options``). Each method imports the rooms it needs when it runs, so opening an
index costs no parser, HTTP client or model.

    import kbx

    idx = kbx.Index.find()  # or kbx.Index.for_root("~/notes")
    r = idx.search("supplier approval", k=3, filters=kbx.Filters(after="2021"))
    for h in r.hits:
        print(h.path, h.start_line, h.end_line, h.hash[:12])
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Self, overload

from kbx.options import (
    EntitiesOptions,
    EntityOptions,
    ExportOptions,
    Filters,
    GazetteerAddOptions,
    GazetteerRetractOptions,
    GrepOptions,
    MentionsOptions,
    ReadOptions,
    SearchOptions,
    StatusOptions,
)
from kbx.store.db import Index as _Stored

if TYPE_CHECKING:
    from kbx.entities.gazetteer import EditReport
    from kbx.entities.lookup import EntityDetail, EntityRow
    from kbx.entities.resolve import ResolveReport
    from kbx.export.run import ExportReport
    from kbx.indexing.ingest import IndexReport
    from kbx.indexing.reprocess import ReprocessReport
    from kbx.search.grep import GrepResult
    from kbx.search.mentions import MentionRow, RecognizerRow
    from kbx.search.read import Excerpt
    from kbx.search.search import SearchResult
    from kbx.search.status import Status
    from kbx.vectors.run import VectorReport

K_JSON = 8  # passages a search returns unless told (the CLI's text shows 5)
EXACT_JSON = 3  # exact phrase matches returned unless told (the CLI's text shows 1)


class Index(_Stored):
    """An index: ``Index.find()`` from the current folder upward (or ``--db``'s file),
    ``Index.for_root(folder)``; each method is the command of its name."""

    @classmethod
    def find(cls, db: str | Path | None = None, start: str | Path = ".") -> Self:
        return super().find(db, start)  # type: ignore[return-value]

    @classmethod
    def for_root(cls, root: str | Path, db: str | Path | None = None) -> Self:
        return super().for_root(root, db)  # type: ignore[return-value]

    def search(
        self,
        query: str,
        *,
        k: int = K_JSON,
        filters: Filters | None = None,
        facets: bool = False,
        mode: str | None = None,
        exact: int = EXACT_JSON,
    ) -> SearchResult:
        """The ``k`` best passages for ``query`` among those ``filters`` allow."""
        o = SearchOptions(query=query, k=k, filters=filters or Filters(), facets=facets,
                          mode=mode, exact=exact)  # fmt: skip
        return perform(self, o)

    def grep(
        self,
        pattern: str,
        *,
        rank: str | None = None,
        context: int = 0,
        max_matches: int = 20,
        ignore_case: bool = False,
        filters: Filters | None = None,
        timeout: float = 30.0,
    ) -> GrepResult:
        """Every match of a regular expression in the clean text, best files first."""
        o = GrepOptions(
            pattern=pattern, rank=rank, context=context, max_matches=max_matches,
            ignore_case=ignore_case, filters=filters or Filters(), timeout=timeout,
        )  # fmt: skip
        return perform(self, o)

    def read(self, spec: str, hash: str | None = None) -> Excerpt:
        """The original lines ``PATH:START-END`` of an indexed file."""
        return perform(self, ReadOptions(spec=spec, hash=hash))

    def status(self) -> Status:
        """What the index holds: documents, units, recognizers, failures."""
        return perform(self, StatusOptions())

    def entities(
        self, type: str | None = None, q: str | None = None, limit: int = 50
    ) -> list[EntityRow]:
        """Entities, most widely mentioned first."""
        return perform(self, EntitiesOptions(type=type, q=q, limit=limit))

    def entity(self, id: str, limit: int = 50) -> EntityDetail:
        """One entity by ID, label or alias, and its mentions."""
        return perform(self, EntityOptions(id=id, limit=limit))

    def mentions(self, spec: str, type: str | None = None) -> list[MentionRow]:
        """What the recognizers found in a document (``PATH[:START-END]``)."""
        return perform(self, MentionsOptions(spec=spec, type=type))

    def recognizers(self) -> list[RecognizerRow]:
        """The installed recognizers and their work."""
        from kbx.annotate.setup import registry_for
        from kbx.search.mentions import recognizers

        return recognizers(self, registry_for(self))

    def gazetteer_add(self, name: str, type: str, **options: Any) -> EditReport:
        """Add a name (or aliases to an entry); ``options`` as ``GazetteerAddOptions``."""
        return perform(self, GazetteerAddOptions(name=name, type=type, **options))

    def gazetteer_retract(self, id: str, by: str, why: str) -> EditReport:
        """Retract an entry: its mentions leave search; it stays in the history."""
        return perform(self, GazetteerRetractOptions(id=id, by=by, why=why))

    def export(
        self,
        format: str,
        out: str | Path | None = None,
        *,
        filters: Filters | None = None,
        recognizers: list[str] | None = None,
        stream: IO[str] | None = None,
    ) -> ExportReport:
        """Write the chosen mentions and texts as brat, webanno, docbin, parquet or jsonl."""
        o = ExportOptions(format=format, out=Path(out) if out else None,
                          recognizer=recognizers or [], filters=filters or Filters())  # fmt: skip
        return perform(self, o, stream=stream)

    def resolve(
        self, only: list[str] | None = None, limit: int | None = None, refresh: bool = False
    ) -> ResolveReport:
        """Fetch metadata for the identifiers (Crossref, OpenAlex)."""
        from kbx.entities.resolve import resolve

        return resolve(self, only, limit, refresh)

    def embed(self) -> VectorReport:
        """Give every passage a vector, so that search ranks by meaning too."""
        from kbx.indexing.embedding import embed

        return embed(self)

    def reprocess(
        self, recognizers: list[str] | None = None, *, redo_all: bool = False, workers: int = 1
    ) -> ReprocessReport:
        """Redo the stale recognizer runs."""
        from kbx.annotate.setup import registry_for
        from kbx.indexing.reprocess import reprocess

        return reprocess(self, registry_for(self), recognizers, redo_all, workers)


def index(root: str | Path, db: str | Path | None = None, **options: Any) -> IndexReport:
    """Build or refresh the index of the folder ``root`` (``kbx index``)."""
    from kbx.indexing.ingest import index as run

    return run(root, db, **options)


@overload
def perform(index: _Stored, o: SearchOptions) -> SearchResult: ...
@overload
def perform(index: _Stored, o: GrepOptions) -> GrepResult: ...
@overload
def perform(index: _Stored, o: ReadOptions) -> Excerpt: ...
@overload
def perform(index: _Stored, o: StatusOptions) -> Status: ...
@overload
def perform(index: _Stored, o: EntitiesOptions) -> list[EntityRow]: ...
@overload
def perform(index: _Stored, o: EntityOptions) -> EntityDetail: ...
@overload
def perform(index: _Stored, o: MentionsOptions) -> list[MentionRow]: ...
@overload
def perform(index: _Stored, o: GazetteerAddOptions) -> EditReport: ...
@overload
def perform(index: _Stored, o: GazetteerRetractOptions) -> EditReport: ...
@overload
def perform(
    index: _Stored,
    o: ExportOptions,
    *,
    progress: Callable[[int, int], None] | None = None,
    stream: IO[str] | None = None,
) -> ExportReport: ...


def perform(index: _Stored, o: Any, **extra: Any) -> Any:
    """The command whose options ``o`` is, run on ``index``: the one function each face
    calls (a server's bounds are checked before, where its values are read)."""
    return _RUN[type(o)](index, o, **extra)


def _glob_matched(index: _Stored, filters: Filters) -> None:
    """After an empty answer: a ``--path`` glob that matches no file is the reason, said."""
    if filters.path:
        from kbx.search.filters import check_path

        with index.reader() as con:
            check_path(con, filters.path)


def _search(index: _Stored, o: SearchOptions) -> SearchResult:
    from kbx.search.search import search

    r = search(index, o.query, k=K_JSON if o.k is None else o.k, filters=o.filters,
               exact=EXACT_JSON if o.exact is None else o.exact, facets=bool(o.facets),
               mode=o.mode)  # fmt: skip
    if not r.hits:
        _glob_matched(index, o.filters)
        _said_excluded(index, o, r)
    return r


def _said_excluded(index: _Stored, o: SearchOptions, r: SearchResult) -> None:
    """After an empty answer to a filtered search: when the query alone matches passages,
    a note that the filters excluded them, naming each filter that does so by itself
    (a search per filter given, of one passage, on an empty answer only)."""
    from kbx.faces import params
    from kbx.present import excluded
    from kbx.search.search import search

    def total(**only: Any) -> int:
        kept = Filters(date_from=o.filters.date_from, **only)
        return search(index, o.query, k=1, filters=kept, exact=0, mode=o.mode).total

    given = {
        p.attr: (f"--{p.name}", getattr(o.filters, p.attr))
        for p in params(Filters)
        if p.attr != "date_from" and getattr(o.filters, p.attr) not in (None, [])
    }
    if not given or not (matched := total()):
        return
    flags = [flag for flag, _ in given.values()]
    culprits = (
        flags
        if len(given) == 1
        else [flag for attr, (flag, v) in given.items() if not total(**{attr: v})]
    )
    r.notes.insert(0, excluded(o.query, matched, culprits, flags))


def _grep(index: _Stored, o: GrepOptions) -> GrepResult:
    from kbx.search.grep import grep

    g = grep(index, o.pattern, rank_query=o.rank, context=o.context,
             max_matches=o.max_matches, ignore_case=o.ignore_case, filters=o.filters,
             timeout=o.timeout)  # fmt: skip
    if not g.matches:
        _glob_matched(index, o.filters)
    return g


def _read(index: _Stored, o: ReadOptions) -> Excerpt:
    from kbx.search.read import read

    return read(index, o.spec, o.hash)


def _status(index: _Stored, o: StatusOptions) -> Status:
    from kbx.annotate.setup import registry_for
    from kbx.search.status import status

    return status(index, registry_for(index))


def _entities(index: _Stored, o: EntitiesOptions) -> list[EntityRow]:
    from kbx.entities.lookup import entities

    return entities(index, o.type, o.q, o.limit)


def _entity(index: _Stored, o: EntityOptions) -> EntityDetail:
    from kbx.entities.lookup import entity

    return entity(index, o.id, o.limit)


def _mentions(index: _Stored, o: MentionsOptions) -> list[MentionRow]:
    from kbx.search.mentions import mentions

    return mentions(index, o.spec, o.type)


def _gazetteer_add(index: _Stored, o: GazetteerAddOptions) -> EditReport:
    from kbx.entities.gazetteer import add

    return add(index, o.name, o.type, o.alias, o.id, o.by, o.source, o.note, o.ignore_case,
               o.pin)  # fmt: skip


def _gazetteer_retract(index: _Stored, o: GazetteerRetractOptions) -> EditReport:
    from kbx.entities.gazetteer import retract

    return retract(index, o.id, o.by, o.why)


def _export(index: _Stored, o: ExportOptions, progress=None, stream=None) -> ExportReport:
    from kbx.export.run import export

    _glob_matched(index, o.filters)  # before anything is written
    return export(index, o.format, o.out, filters=o.filters, recognizers=o.recognizer,
                  progress=progress, stream=stream)  # fmt: skip


_RUN: dict[type, Callable[..., Any]] = {
    SearchOptions: _search,
    GrepOptions: _grep,
    ReadOptions: _read,
    StatusOptions: _status,
    EntitiesOptions: _entities,
    EntityOptions: _entity,
    MentionsOptions: _mentions,
    GazetteerAddOptions: _gazetteer_add,
    GazetteerRetractOptions: _gazetteer_retract,
    ExportOptions: _export,
}
