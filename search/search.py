"""``kbx search``: ranked, cited passages, and the exact matches of the query's phrase."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from kbx.analysis import LANG_TERM, WORD, Analyzer, has_cjk
from kbx.errors import BadArgument, ModelMissing
from kbx.extract.textmap import unpack
from kbx.languages import NAMES as language_names
from kbx.languages import of_query
from kbx.search import proximity
from kbx.search.allowed import Allowed, allowed
from kbx.search.bm25 import DEFAULT_PARAMS, BM25Params, coverage, mapped, rank, term_ids
from kbx.search.facets import Facets, facet_counts
from kbx.search.filters import DocFilter, Filters, compile_filters
from kbx.search.grep import grep, phrase_terms
from kbx.search.passages import each, focus, line_span, mark, matches, snippet_window
from kbx.search.state import NAMES, facet_layer, index_state, mapped_passages
from kbx.store import arrays
from kbx.store.db import ENTITIES_DIRTY, RUNS, VECTORS, Index
from kbx.store.passages_file import GENERATION as PASSAGES
from kbx.store.passages_file import PassagesFile
from kbx.store.postings import GENERATION as POSTINGS
from kbx.store.postings import LANGUAGES, analyzer_from

if TYPE_CHECKING:
    import numpy as np

    from kbx.vectors.model import Encoder


@dataclass
class Hit:
    """One passage: where it is, how well it matched, and its text with matches marked."""

    path: str
    start_line: int
    end_line: int
    hash: str
    score: float
    heading_path: list[str]
    snippet: str
    snippet_lines: tuple[int, int]
    focus_lines: tuple[int, int]  # the passage's best lines: its densest matches (``focus``)
    covered: int
    query_terms: int
    text: str
    unit: str
    page: int | None = None
    also_in: list[str] = field(default_factory=list)
    file: str = "indexed"  # or changed, deleted: the file on disk since it was indexed
    ranks: dict[str, int | None] | None = None  # hybrid: its rank in each list (None: absent)


@dataclass
class SearchResult:
    """Ranked hits, how many more matched, and exact matches of the literal query."""

    query: str
    terms: list[list[str]]
    hits: list[Hit]
    total: int
    left_out: int
    exact: list = field(default_factory=list)
    exact_total: int = 0
    facets: Facets | None = None
    notes: list[str] = field(default_factory=list)  # e.g. NER that has not run everywhere
    mode: str = "bm25"  # or dense, hybrid (see ``search``)


def hits_for(
    con: duckdb.DuckDBPyConnection,
    ranked: list[tuple],
    groups: list[list[str]],
    an: Analyzer,
    doc_filter: DocFilter | None = None,
) -> list[Hit]:
    """Materialize ranked units as cited passages, each at its first allowed placement."""
    return _hits(con, ranked, groups, an, doc_filter)[0]


def _hits(
    con: duckdb.DuckDBPyConnection,
    ranked: list[tuple],
    groups: list[list[str]],
    an: Analyzer,
    doc_filter: DocFilter | None = None,
    keep: Allowed | None = None,
    passages: PassagesFile | None = None,
) -> tuple[list[Hit], dict[str, tuple[int, int]]]:
    """``hits_for``, and the size and mtime each cited file had when it was indexed (for
    ``file_states``, read with the placements). ``keep``: the placements the filter allows,
    when the search found them already. ``passages``: the mapped units and placements, when
    current; read there when the filter's placements are known (or nothing is filtered),
    else in two statements (one, joining the units to the placements, cost as much: each
    key's lookup is the cost, about half a millisecond)."""
    if not ranked:
        return [], {}
    f = DocFilter() if keep is not None else doc_filter or DocFilter()
    pairs = keep.pairs_of([int(r[0]) for r in ranked]) if keep is not None else None
    if passages is not None and not f.clauses:
        first, paths, stats, rows = _mapped_rows(passages, ranked, pairs)
    else:
        first, paths, stats, rows = _sql_rows(con, ranked, f, pairs)
    if not first:  # nothing placed: only a unit no document holds any more could be here
        return [], stats
    word = {f: i for i, g in reversed(list(enumerate(groups))) for f in g}  # form -> word
    forms, hits = set(word), []
    for unit_id, score, matched, *ranks in ranked:
        if unit_id not in first:  # never cite a passage without a place in a file
            continue
        _, _, path, sha, start, end, page, blob, _, _ = first[unit_id]
        text, heading, unit_hash, kind = rows[unit_id]
        terms: list[str] = []
        spans = matches(text, forms, an, kind == "code", terms)
        words = [word[t] for t in terms]
        a, b = snippet_window(text, spans, words=words)
        segments, best = unpack(blob), focus(spans, words)
        hits.append(
            Hit(
                path=path,
                start_line=start,
                end_line=end,
                hash=sha,
                score=round(score, 4),
                heading_path=list(heading or []),
                snippet=mark(text, spans, a, b),
                snippet_lines=line_span(segments, text, a, b),
                focus_lines=line_span(segments, text, *best) if best else (start, end),
                covered=matched,
                query_terms=len(groups),
                text=text,
                unit=unit_hash,
                page=page,
                also_in=sorted(set(paths[unit_id]) - {path}),
                ranks=ranks[0] if ranks else None,
            )
        )
    return hits, stats


_Rows = tuple[dict[int, tuple], dict[int, list[str]], dict[str, tuple[int, int]], dict]


def _sql_rows(
    con: duckdb.DuckDBPyConnection, ranked: list[tuple], f: DocFilter, pairs: set | None
) -> _Rows:
    """Each hit's first allowed placement (by path, then ordinal; unit id aside: doc id,
    ordinal, path, hash, lines, page, offset map, size, mtime), every allowed path, each
    cited file's size and mtime, and each placed unit's text, heading path, hash, kind."""
    first: dict[int, tuple] = {}
    paths: dict[int, list[str]] = {}
    stats: dict[str, tuple[int, int]] = {}
    placed = each(  # the offset map with its row: read apart, it costs a lookup more
        "SELECT doc_id, ordinal, unit_id, start_line, end_line, page, offsets FROM placements "
        "WHERE unit_id = {}",
        [(int(r[0]),) for r in ranked],
    )
    for row in con.execute(
        f"""SELECT pl.unit_id, pl.doc_id, pl.ordinal, d.path, d.sha256, pl.start_line,
                  pl.end_line, pl.page, pl.offsets, d.size, d.mtime_ns
           FROM ({placed}) pl JOIN documents d USING (doc_id)
           WHERE {f.where()} ORDER BY d.path, pl.ordinal""",
        f.params,
    ).fetchall():
        if pairs is not None and (row[0], row[1]) not in pairs:
            continue
        first.setdefault(row[0], row[1:])
        paths.setdefault(row[0], []).append(row[3])
        stats[row[3]] = (row[9], row[10])
    if not first:
        return first, paths, stats, {}
    rows = {
        r[0]: r[1:]
        for r in con.execute(
            each(
                "SELECT unit_id, text, heading_path, unit_hash, kind FROM units WHERE unit_id = {}",
                [(u,) for u in first],
            )
        ).fetchall()
    }
    return first, paths, stats, rows


def _mapped_rows(passages: PassagesFile, ranked: list[tuple], pairs: set | None) -> _Rows:
    """``_sql_rows`` from the mapped file, with no statement."""
    first: dict[int, tuple] = {}
    paths: dict[int, list[str]] = {}
    stats: dict[str, tuple[int, int]] = {}
    rows = {}
    for r in ranked:
        u = int(r[0])
        for at in passages.placements(u):
            row = passages.row(at)
            if pairs is not None and (u, row[0]) not in pairs:
                continue
            first.setdefault(u, row)
            paths.setdefault(u, []).append(row[2])
            stats[row[2]] = (row[8], row[9])
        if u in first:
            rows[u] = passages.unit(u)
    return first, paths, stats, rows


MODES = ("bm25", "dense", "hybrid")
FUSION_DEPTH = 100  # passages of each list that fusion ranks from


def _chosen(
    con: duckdb.DuckDBPyConnection, index: Index, state: dict[str, str], mode: str | None
) -> tuple[str, Encoder | None, list[str]]:
    """The mode a search ranks by, its model, and a note: ``mode`` as asked, or by default
    hybrid where ``kbx embed`` gave the index vectors of the model it loads now, bm25
    elsewhere (a note then says why, where the index has vectors). (Imported here: a BM25
    search never loads numpy or the model's runtime.)"""
    if mode == "bm25" or (mode is None and VECTORS not in state):
        return "bm25", None, []
    if VECTORS not in state:
        raise BadArgument(f"--mode {mode} needs vectors, and the index has none: run `kbx embed`")
    from kbx.vectors.run import has_vectors
    from kbx.vectors.setup import encoder_or_why

    enc, why = encoder_or_why(index.root, quick=not arrays.WARM)  # a cold process: one query
    needs = "dense retrieval, which is off"
    if enc is not None and not has_vectors(con, enc):
        enc, why = None, f"no passage has a vector of {enc.name} {enc.version}: run `kbx embed`"
        needs = "vectors"
    if enc is not None:
        return mode or "hybrid", enc, []
    return "bm25", None, _words_alone(mode, needs, why)


def _vector_or_none(
    vector: Callable[[], np.ndarray] | None, mode: str | None, notes: list[str]
) -> np.ndarray | None:
    """The query's vector, or None where there is none to wait for or the model could not
    load after all (its runtime installed but broken: a note, or the error ``mode`` asks)."""
    if vector is None:
        return None
    try:
        return vector()
    except ModelMissing as e:
        notes += _words_alone(mode, "dense retrieval, which is off", str(e))
        return None


def _words_alone(mode: str | None, needs: str, why: str) -> list[str]:
    """The note of a search that ranks by words because dense retrieval cannot run, or,
    where ``mode`` asked for it, the error."""
    if mode is not None:
        raise BadArgument(f"--mode {mode} needs {needs}: {why}")
    return [f"{why}; ranked by words alone (bm25)"]


LANGUAGE_HITS = 10  # BM25's best passages whose language decides whether dense ranks too


def _unread(enc: Encoder, lang: str | None) -> bool:
    """Whether ``enc`` is known not to read ``lang`` (None: English or not told)."""
    return lang is not None and enc.languages is not None and lang not in enc.languages


def _not_read(enc: Encoder, what: str, lang: str, mode: str) -> str:
    """The note of a search whose query or best passages the dense model cannot read."""
    reads = " and ".join(language_names.get(x, x) for x in enc.languages or ())
    then = "ranked by meaning as asked" if mode == "dense" else "ranked by words alone (bm25)"
    return (
        f"{what} {'is' if what == 'the query' else 'are'} in {language_names.get(lang, lang)}, "
        f"and the dense model ({enc.name}) reads {reads} only: {then}"
    )


def hits_language(
    con: duckdb.DuckDBPyConnection, state: dict[str, str], units: list[int], pf=None
) -> str | None:
    """The language other than English that most of ``units`` are in (more than half), as
    the index told each passage's (its ``#lang=`` term, analysis.analyze_units); None
    where most are English or untold, or the index holds no other language."""
    langs = list(json.loads(state.get(LANGUAGES, "{}")))
    if not langs or not units:
        return None
    ids = term_ids(con, [LANG_TERM + x for x in langs], pf)
    if not ids:
        return None
    counts: dict[str, int] = {}
    wanted = set(units)
    if pf is not None:
        for form, t in ids.items():
            held = wanted.intersection(pf.of(t)[0].tolist())
            counts[form] = len(held)
    else:
        marks = ", ".join(str(int(t)) for t in ids.values())
        rows = con.execute(
            f"""SELECT t.term, count(*) FROM postings p JOIN terms t USING (term_id)
                WHERE p.term_id IN ({marks}) AND list_contains(?, p.unit_id) GROUP BY t.term""",
            [list(wanted)],
        ).fetchall()
        counts = dict(rows)
    form, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0))
    return form.removeprefix(LANG_TERM) if n * 2 > len(wanted) else None


def _by_meaning(
    con: duckdb.DuckDBPyConnection,
    index: Index,
    enc: Encoder,
    query: np.ndarray,
    f: DocFilter,
    keep: Allowed | None,
    bm25: list,
    matched: int,
    mode: str,
    depth: int,
    covered: float = 0.0,
) -> list:
    """The dense list (``(unit_id, cosine, 0, ranks)``) for the ``query`` vector, or it
    fused with BM25's: each list the top ``depth`` of its ranking (BM25's, of the
    ``matched`` units, was asked for as many), among the units the filter allows
    (``keep``'s, where the BM25 side found them); ``covered``: how much of the query
    BM25's best unit holds (``bm25.coverage``), which weighs BM25's list up."""
    from kbx.search.hybrid import dense_ranking, fuse

    units = keep.units if keep is not None else None
    dense = dense_ranking(con, enc, query, f, limit=depth, db=index.db, units=units)
    if mode == "dense":
        words = {r[0]: i for i, r in enumerate(bm25, 1)}
        return [(u, s, 0, {"bm25": words.get(u), "dense": i}) for i, (u, s) in enumerate(dense, 1)]
    return fuse(bm25, dense, (matched > len(bm25), len(dense) >= depth), covered=covered)


def words_ranking(
    con: duckdb.DuckDBPyConnection,
    query: str,
    an: Analyzer,
    params: BM25Params = DEFAULT_PARAMS,
    depth: int | None = None,
    f: DocFilter | None = None,
    db: Path | None = None,
    gen: int | None = None,
    ids: dict[str, int] | None = None,
    keep: Allowed | None = None,
    passages: PassagesFile | None = None,
    stopwords: bool = True,
    groups: list[list[str]] | None = None,
) -> tuple[list[tuple], int]:
    """The ranking by words: the best ``depth`` units (None: all) as ``(unit_id, score,
    words matched)``, and how many units matched. BM25 (search/bm25.py) with the file
    prior (search/prior.py) over every matching unit, then the best ``proximity.POOL``
    reranked by the query as a phrase (search/proximity.py). ``db``, ``gen``, ``ids``,
    ``keep`` and ``passages`` are what a search has read already (see ``bm25.rank``), and
    so are the query's word ``groups`` (``an.query``; ``stopwords``: drop its function
    words)."""
    f = f or DocFilter()
    if groups is None:
        groups = an.query(query, stopwords=stopwords)
    if ids is None:
        ids = term_ids(
            con, [t for g in groups for t in g], None if f.boosts else mapped(con, db, gen)
        )
    found = proximity.phrase_of(query) if params.phrase > 0 else None
    pool = depth if found is None or depth is None else max(depth, proximity.POOL)
    ranked, total = rank(con, groups, f, params, pool, db, gen, ids, keep, True, passages)
    if found is not None:
        ranked = proximity.rerank(ranked, found, lambda us: _texts(con, us, passages), params)
    return ranked[:depth], total


def _texts(
    con: duckdb.DuckDBPyConnection, units: list[int], passages: PassagesFile | None
) -> dict[int, str]:
    """The text of each of ``units``: from the mapped passages when current, else one
    statement (an IN list reads the whole column: what a small index, ranked in SQL, has)."""
    if passages is not None:
        return {u: passages.text_of(u) for u in units}
    rows = con.execute(
        "SELECT unit_id, text FROM units WHERE unit_id IN (SELECT unnest(?::BIGINT[]))", [units]
    ).fetchall()
    return dict(rows)


def phrase_parts(query: str) -> tuple[bool, str]:
    r"""The query as a literal phrase of whole words (``BCP 14`` is not found in ``BCP
    142``): whether a match must not follow a word character, and the pattern of the rest.
    grep checks the first itself (``word_start``), since a pattern opening with the
    lookbehind ``(?<!\w)`` makes ``re`` try it at every position (2.7x slower on Node.js
    units)."""
    text = " ".join(query.split())
    word = re.compile(WORD)  # a Chinese, Japanese or Korean end may run on: no boundary
    starts = bool(word.match(text)) and not has_cjk(text[:1])
    ends = bool(text) and bool(word.match(text[-1])) and not has_cjk(text[-1])
    return starts, r"\s+".join(map(re.escape, text.split(" "))) + (rf"(?!{WORD})" if ends else "")


def file_states(
    con: duckdb.DuckDBPyConnection,
    index: Index,
    hits: list[Hit],
    indexed: dict[str, tuple[int, int]] | None = None,
) -> list[str]:
    """Mark each hit whose file changed or vanished since it was indexed (a stat, no read),
    and a note saying so: its cited lines may no longer be what the index holds.
    ``indexed``: each path's size and mtime as the index holds them, when read already."""
    paths = sorted({h.path for h in hits})
    if not paths:
        return []
    stats = indexed or dict(
        (p, (size, mtime))
        for p, size, mtime in con.execute(
            "SELECT path, size, mtime_ns FROM documents WHERE list_contains(?, path)", [paths]
        ).fetchall()
    )
    state = {}
    for p in paths:
        try:
            st = os.stat(index.root / p)
            state[p] = "indexed" if (st.st_size, st.st_mtime_ns) == stats.get(p) else "changed"
        except OSError:
            state[p] = "deleted"
    for h in hits:
        h.file = state[h.path]
    off = {s: [p for p in paths if state[p] == s] for s in ("changed", "deleted")}
    return [
        f"{len(ps)} cited file{'s' * (len(ps) > 1)} {s} since indexing ({', '.join(ps[:3])}"
        f"{', …' if len(ps) > 3 else ''}); run `kbx index` to refresh"
        for s, ps in off.items()
        if ps
    ]


STALE_LAYER = (
    "the index is being written (or a write was cut short): entities, links and dates are "
    "rebuilt when it ends, so entity, type and date filters and the facets may miss "
    "passages written since; their words are found already"
)


def pending_names(con: duckdb.DuckDBPyConnection, index: Index, state: dict[str, str]) -> list[str]:
    """A line for each name recognizer (NER) that has not yet run on every unit: until it
    has, entity and type filters and facets see only part of the corpus. The rule-based
    recognizers alone give no line (a search asks only when ``index_state`` saw a name
    recognizer). Counting the runs costs a few milliseconds, so a process remembers the
    lines while the runs and the units are of the generations it counted them at."""
    key = (state.get(RUNS), state.get(PASSAGES))
    known = _PENDING.get(index.db)
    if known is not None and known[0] == key and None not in key:
        return list(known[1])
    rows = con.execute(
        """SELECT r.name, (SELECT count(*) FROM runs x WHERE x.recognizer = r.name
                           AND x.version = r.version AND x.error IS NULL),
                  (SELECT count(*) FROM units)
           FROM recognizer_info r WHERE r.names ORDER BY r.name"""
    ).fetchall()
    lines = [
        f"{name} has run on {done} of {total} passages; names in the rest are not "
        "searchable yet (run `kbx reprocess`)"
        for name, done, total in rows
        if done < total
    ]
    _PENDING[index.db] = (key, lines)
    return list(lines)


_PENDING: dict[Path, tuple[tuple, list[str]]] = {}  # index file -> (generations, lines)


def search(
    index: Index,
    query: str,
    k: int = 8,
    filters: Filters | None = None,
    params: BM25Params = DEFAULT_PARAMS,
    exact: int = 3,
    facets: bool = False,
    mode: str | None = None,
) -> SearchResult:
    """The ``k`` best passages for ``query`` among those ``filters`` allow, up to ``exact``
    literal matches of it, and (with ``facets``) the facet counts of every match. ``mode``
    ranks by words (bm25), by meaning (dense: the vectors of ``kbx embed``), or both fused
    (hybrid: ``hybrid.fuse``); by default hybrid where the index has vectors, else bm25.
    The filters narrow every list alike. grep's exact matches and ``total`` stay those of
    the words; the facets count what the words matched and the hits, so a passage found
    by meaning alone is counted once shown (the dense list's whole depth would count
    passages nobody asked for: all of a small folder)."""
    if not query.strip():
        raise BadArgument("the query is empty; give some words to search for")
    if k < 1:
        raise BadArgument("-k must be at least 1")
    if mode is not None and mode not in MODES:
        raise BadArgument(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
    with index.reader() as con:
        state = index_state(con)
        wanted = mode
        mode, enc, dense_notes = _chosen(con, index, state, mode)
        if enc is not None and _unread(enc, lang := of_query(query)):  # English-only model
            dense_notes.append(_not_read(enc, "the query", lang, mode))
            if mode != "dense":
                enc = None
        vector = enc.query_soon(query) if enc is not None else None  # while BM25 ranks
        an = analyzer_from(state, current=True)
        groups = an.query(query)
        f = compile_filters(con, filters)
        depth = k if mode == "bm25" else max(k, FUSION_DEPTH)
        gen = int(state.get(POSTINGS, 0))
        pf = mapped(con, index.db, gen)
        ids = term_ids(con, [t for g in groups for t in g], pf)
        layer = facet_layer(index, state) if facets or f.places else None
        keep = allowed(con, f, layer) if pf is not None or layer is not None else None
        passages = mapped_passages(index, state)
        ranked, total = words_ranking(
            con, query, an, params, depth, f, index.db, gen, ids, keep, passages, groups=groups
        )
        if vector is not None and mode == "hybrid":
            top = [int(r[0]) for r in ranked[:LANGUAGE_HITS]]
            if _unread(enc, lang := hits_language(con, state, top, pf)):
                dense_notes.append(_not_read(enc, "most of the best passages", lang, mode))
                vector = None
        q = _vector_or_none(vector, wanted, dense_notes)
        if q is not None:
            covered = coverage(con, groups, ids, ranked[0][0], pf) if ranked else 0.0
            ranked = _by_meaning(con, index, enc, q, f, keep, ranked, total, mode, depth, covered)
        mode, ranked = mode if q is not None else "bm25", ranked[:k]
        hits, indexed = _hits(con, ranked, groups, an, f, keep, passages)
        result = SearchResult(query, groups, hits, total, max(0, total - len(hits)), mode=mode)
        if exact and (len(query.split()) > 1 or has_cjk(query)):
            start, rest = phrase_parts(query)
            g = grep(
                index,
                re.compile(rest, re.IGNORECASE),  # kbx's own pattern: no time limit
                word_start=start,
                rank_query=query,
                max_matches=exact,
                ignore_case=True,
                filters=filters,
                con=con,
                needs=phrase_terms(an, query),
                doc_filter=f,
                state=state,
                keep=keep,
            )
            result.exact, result.exact_total = g.matches, g.total
        asked = filters or Filters()
        layered = any((asked.entities, asked.authors, asked.types, asked.quantities))
        layered = layered or bool(asked.after or asked.before)
        if facets or layered:
            result.notes = pending_names(con, index, state) if NAMES in state else []
            if ENTITIES_DIRTY in state:
                result.notes.append(STALE_LAYER)
        result.notes += dense_notes + file_states(con, index, hits, indexed)
        if facets:  # what the words matched, and the hits (some found by meaning alone)
            shown = [r[0] for r in ranked]
            result.facets = facet_counts(con, list(ids.values()), f, layer, pf, keep, shown)
    return result
