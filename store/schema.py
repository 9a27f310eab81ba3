"""The DuckDB schema, its version, and the migrations that bring an older file up to date."""

from __future__ import annotations

import json
from collections.abc import Callable

import duckdb

from kbx.errors import SchemaError
from kbx.store.arrays import bump
from kbx.store.transaction import transaction

SCHEMA_VERSION = 11

_V1 = """
CREATE TABLE kbx_meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE SEQUENCE doc_ids START 1;
CREATE TABLE documents (
    doc_id INTEGER PRIMARY KEY,
    path VARCHAR NOT NULL UNIQUE,   -- relative to the root, '/'-separated
    sha256 VARCHAR,                 -- of the file's bytes
    size BIGINT,
    mtime_ns BIGINT,
    format VARCHAR,
    encoding VARCHAR,
    title VARCHAR,
    doc_date VARCHAR,               -- ISO 8601 at the precision the metadata gave
    authors VARCHAR[],
    meta JSON,
    status VARCHAR NOT NULL,        -- ok | failed | skipped
    error VARCHAR,
    warnings VARCHAR[],
    n_units INTEGER,
    indexed_at TIMESTAMP
);
CREATE SEQUENCE unit_ids START 1;
CREATE TABLE units (                -- content-addressed: one row per distinct clean text
    unit_id INTEGER NOT NULL,
    unit_hash VARCHAR NOT NULL,     -- SHA-256 of heading path and text
    heading_path VARCHAR[] NOT NULL,
    text VARCHAR NOT NULL,
    n_tokens INTEGER NOT NULL,
    kind VARCHAR NOT NULL,          -- prose | code | table
    n_terms INTEGER NOT NULL        -- BM25 length: index terms, parts included
);
CREATE TABLE placements (           -- where a unit sits in a document
    doc_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    unit_id INTEGER NOT NULL,
    kind VARCHAR,
    page INTEGER,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    offsets BLOB NOT NULL           -- the offset map, see extract/textmap.pack
);
CREATE SEQUENCE term_ids START 1;
CREATE TABLE terms (term_id INTEGER NOT NULL, term VARCHAR NOT NULL);
CREATE UNIQUE INDEX terms_term ON terms (term);
CREATE TABLE postings (             -- kept sorted by term_id (see store/compact.py)
    term_id INTEGER NOT NULL,
    unit_id INTEGER NOT NULL,
    tf INTEGER NOT NULL,            -- in the body
    htf INTEGER NOT NULL            -- in the heading path: a BM25F field
);
CREATE TABLE runs (                 -- the cache key: a run that found nothing counts too
    unit_hash VARCHAR NOT NULL,
    recognizer VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    n_mentions INTEGER NOT NULL,
    error VARCHAR,                  -- the recognizer raised on this unit; retried next run
    ran_at TIMESTAMP NOT NULL
);
CREATE TABLE mentions (             -- standoff spans over a unit's clean text
    unit_hash VARCHAR NOT NULL,
    recognizer VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    start_char INTEGER NOT NULL,    -- 0-based, end exclusive
    end_char INTEGER NOT NULL,
    type VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    value VARCHAR,
    confidence DOUBLE NOT NULL
);
CREATE TABLE doc_mentions (         -- the document context layer: values that need the document
    doc_id INTEGER NOT NULL,
    unit_hash VARCHAR NOT NULL,
    recognizer VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    start_char INTEGER NOT NULL,
    doc_date VARCHAR,               -- the context it was resolved in
    value VARCHAR                   -- resolved against that date; NULL if it cannot be
);
"""

_V2 = """
ALTER TABLE mentions ADD COLUMN key VARCHAR;  -- the entity a mention names, when it knows it
CREATE TABLE recognizer_info (      -- what search needs to know of each recognizer that ran
    name VARCHAR PRIMARY KEY,
    version VARCHAR NOT NULL,
    types VARCHAR[] NOT NULL,
    filter BOOLEAN NOT NULL,
    boost_types VARCHAR[] NOT NULL, -- its types too imprecise to filter on
    names BOOLEAN NOT NULL          -- its mentions are names, linked by alias or surface
);
CREATE TABLE gazetteer (            -- the current entries; the log below keeps every change
    entry_id VARCHAR PRIMARY KEY,   -- also the entity ID its mentions link to
    name VARCHAR NOT NULL,
    type VARCHAR NOT NULL,
    aliases VARCHAR[] NOT NULL,     -- the name first
    ignore_case BOOLEAN NOT NULL,
    protected BOOLEAN NOT NULL DEFAULT false,
    added_by VARCHAR NOT NULL,
    source VARCHAR,                 -- root-relative path of the document it came from
    note VARCHAR,
    added_at TIMESTAMP NOT NULL,
    retracted_at TIMESTAMP,
    retracted_by VARCHAR,
    why VARCHAR
);
CREATE SEQUENCE gazetteer_seq START 1;
CREATE TABLE gazetteer_log (        -- append-only: who changed what, when, from which document
    seq INTEGER NOT NULL,
    entry_id VARCHAR NOT NULL,
    action VARCHAR NOT NULL,        -- add | alias | retract | restore | protect
    actor VARCHAR NOT NULL,         -- who: a person or agent:NAME
    source VARCHAR,
    note VARCHAR,
    data JSON,
    logged_at TIMESTAMP NOT NULL
);
CREATE TABLE entities (             -- derived: rebuilt from gazetteer, mentions and metadata
    entity_id VARCHAR PRIMARY KEY,
    type VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    source VARCHAR NOT NULL,        -- gazetteer | identifier | byline | author | name | crossref
    meta JSON                       -- a resolved work's year, venue, authors, OpenAlex ID
);
CREATE TABLE resolutions (          -- answers from Crossref and OpenAlex, kept until --refresh
    entity_id VARCHAR NOT NULL,     -- doi:… or orcid:…, or ref:<sha> for a reference string
    service VARCHAR NOT NULL,       -- crossref | openalex | crossref-bibliographic
    status VARCHAR NOT NULL,        -- ok | not_found | failed
    fetched_at TIMESTAMP NOT NULL,
    data JSON,
    error VARCHAR,
    PRIMARY KEY (entity_id, service)
);
CREATE TABLE aliases (entity_id VARCHAR NOT NULL, alias VARCHAR NOT NULL);
CREATE TABLE links (                -- derived: a passage (or a whole document) names an entity
    doc_id INTEGER NOT NULL,
    unit_id INTEGER,                -- NULL: the whole document (its author)
    entity_id VARCHAR NOT NULL,
    filter BOOLEAN NOT NULL         -- from a recognizer precise enough to filter on
);
CREATE TABLE passage_dates (        -- derived: the dates of a passage, as [lo, hi) intervals
    doc_id INTEGER NOT NULL,
    unit_id INTEGER,                -- NULL: the document's own date
    lo DATE NOT NULL,
    hi DATE NOT NULL
);
"""


_V3 = """
CREATE TABLE doc_context (          -- what a recognizer found of a whole document, by version
    doc_id INTEGER NOT NULL,
    recognizer VARCHAR NOT NULL,    -- e.g. dates: the date written at the document's top
    version VARCHAR NOT NULL,
    data JSON
);
INSERT INTO kbx_meta VALUES ('entities_dirty', '1') ON CONFLICT DO NOTHING;
"""


_V4 = """
ALTER TABLE units ADD COLUMN code_spans INTEGER[][];  -- inline code, [start, end); NULL: none
ALTER TABLE units ADD COLUMN breaks INTEGER[];        -- table cell and row separators; NULL: none
"""


_V5 = """
CREATE TABLE IF NOT EXISTS vectors (  -- dense vectors; the cache key: (unit, model, version)
    unit_hash VARCHAR NOT NULL,     -- by content: a unit moved or in two files keeps its vector
    model VARCHAR NOT NULL,
    version VARCHAR NOT NULL,       -- a digest of the model file, tokenizer and recipe
    vector FLOAT[] NOT NULL,        -- unit length: the inner product is the cosine
    embedded_at TIMESTAMP NOT NULL
);
"""


_V6 = """
CREATE TABLE IF NOT EXISTS passage_quantities (  -- derived: a passage's quantities, in SI
    unit_id INTEGER NOT NULL,       -- a unit's quantities are its own, whatever its document
    dimension VARCHAR NOT NULL,     -- mass, data, money, … (recognizers/quantity_filter.py)
    unit VARCHAR NOT NULL,          -- the SI unit as stored (kg, B, K, m / s, %), or a currency
    lo DOUBLE NOT NULL,             -- the interval [lo, hi]; lo = hi for a single value
    hi DOUBLE NOT NULL
);
INSERT INTO kbx_meta VALUES ('entities_dirty', '1') ON CONFLICT DO NOTHING;
"""


_V7 = """
CREATE TABLE units_v7 (
    unit_id INTEGER NOT NULL,
    unit_hash VARCHAR NOT NULL,
    heading_path VARCHAR[] NOT NULL,
    text VARCHAR NOT NULL USING COMPRESSION uncompressed,  -- read by id: see _to_v7
    n_tokens INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    n_terms INTEGER NOT NULL,
    code_spans INTEGER[][],
    breaks INTEGER[]
);
INSERT INTO units_v7 SELECT * FROM units ORDER BY unit_id;
DROP TABLE units;
ALTER TABLE units_v7 RENAME TO units;
CREATE TABLE placements_v7 (
    doc_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    unit_id INTEGER NOT NULL,
    kind VARCHAR,
    page INTEGER,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    offsets BLOB NOT NULL USING COMPRESSION uncompressed
);
INSERT INTO placements_v7 SELECT * FROM placements ORDER BY doc_id, ordinal;
DROP TABLE placements;
ALTER TABLE placements_v7 RENAME TO placements;
"""


def _to_v2(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_V2)


def _to_v3(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_V3)


def _to_v4(con: duckdb.DuckDBPyConnection) -> None:
    """Units stored before v4 did not record their inline code and table cells, and only the
    files know them: an index with documents asks its next ``kbx index`` to extract every
    file again (``REEXTRACT``). Their units then get the new columns, and those with inline
    code or cells a new hash (see ``Unit.hash``); until then they read as having none."""
    con.execute(_V4)
    con.execute(
        "INSERT INTO kbx_meta SELECT ?, '1' WHERE EXISTS (SELECT 1 FROM documents)", [REEXTRACT]
    )


def _to_v5(con: duckdb.DuckDBPyConnection) -> None:
    """Dense vectors (issue 17): a new, empty table; the next pass of the vectors stage
    fills it where the dense model is installed, and nothing else changes. ``IF NOT
    EXISTS``: a test that dresses a fresh file as an older one may leave it there."""
    con.execute(_V5)


def _to_v6(con: duckdb.DuckDBPyConnection) -> None:
    """Quantity filters (issue 18): a new derived table, filled from the stored mentions by
    the entity layer's rebuild, which the migration asks for (nothing is read again)."""
    con.execute(_V6)


def _to_v7(con: duckdb.DuckDBPyConnection) -> None:
    """A unit's text and a placement's offset map stored uncompressed: search reads them
    for a few hits by id, and DuckDB decompresses a whole vector of compressed strings to
    give one (8 hits' texts cost 35 ms on the Node.js index compressed, 2.4 uncompressed).
    The tables are copied row for row; nothing is read from the files again."""
    con.execute(_V7)


def _to_v8(con: duckdb.DuckDBPyConnection) -> None:
    """Hits read from a mapped copy of the units and placements (store/passages_file.py),
    which every write of documents, units or placements must mark as old, and a search's
    NER notes remembered while the runs are of one generation: a kbx before v8 marks
    neither, so it must not write a v8 file, and what it wrote is marked old here (no
    table changes)."""
    bump(con, "passages_generation")
    bump(con, "runs_generation")  # what a search remembers of the runs starts here too


_V9 = """
CREATE TABLE IF NOT EXISTS authored (  -- derived: who wrote a passage (or a whole document)
    doc_id INTEGER NOT NULL,
    unit_id INTEGER,                -- NULL: the whole document (its metadata's authors)
    entity_id VARCHAR NOT NULL
);
INSERT INTO kbx_meta VALUES ('entities_dirty', '1') ON CONFLICT DO NOTHING;
"""


def _to_v9(con: duckdb.DuckDBPyConnection) -> None:
    """Authorship apart from naming (issue 40): a new derived table, filled when the
    entity layer is rebuilt (marked stale here); a signed passage needs the bylines
    recognizer, which the next ``kbx index`` runs as any new recognizer. The plain-text,
    LaTeX and PDF extractors changed with it (a changelog's entries are sections; text the
    LaTeX and PDF parsers lost is kept), so that run reads those files again
    (``REEXTRACT`` naming their formats; an earlier migration's ``1``, every file, stays)."""
    con.execute(_V9)
    con.execute(
        "INSERT INTO kbx_meta SELECT ?, 'text,latex,pdf' WHERE EXISTS (SELECT 1 FROM documents) "
        "ON CONFLICT DO NOTHING",
        [REEXTRACT],
    )


_V10 = """
CREATE TABLE IF NOT EXISTS doc_names (  -- a document's names as it reads them (annotate/names.py)
    doc_id INTEGER NOT NULL,
    unit_hash VARCHAR NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    type VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    surface VARCHAR NOT NULL,       -- of the name it stands for there (its long form)
    recognizer VARCHAR NOT NULL,
    how VARCHAR NOT NULL            -- found | carried | typed | added
);
"""
_NAME_FIELDS = ("unit", "start", "end", "type", "text", "surface", "recognizer", "how")


def _to_v10(con: duckdb.DuckDBPyConnection) -> None:
    """A document's names one row each (issue 43), where they were one JSON list in its
    ``names`` row of ``doc_context``: the list of a changelog naming 12,000 people was 2.4 MB,
    and DuckDB 2.0.1 ran out of memory (about 20 GB) unnesting it. The ``names`` row stays,
    its version what it was and no data. Each list is read and written one document at a
    time, so nothing is recomputed; one that cannot be read loses its row, and the next
    ``kbx index`` carries the document's names again."""
    con.execute(_V10)
    docs = con.execute(
        "SELECT doc_id FROM doc_context WHERE recognizer = 'names' AND data IS NOT NULL"
    ).fetchall()
    for (doc_id,) in docs:
        (data,) = con.execute(
            "SELECT data FROM doc_context WHERE recognizer = 'names' AND doc_id = ?", [doc_id]
        ).fetchone()
        try:
            rows = [tuple(n[f] for f in _NAME_FIELDS) for n in json.loads(data)["names"]]
        except (TypeError, ValueError, KeyError):
            con.execute(
                "DELETE FROM doc_context WHERE recognizer = 'names' AND doc_id = ?", [doc_id]
            )
            continue
        if rows:
            columns = [list(c) for c in zip(*rows, strict=True)]
            con.execute(
                "INSERT INTO doc_names SELECT ?, unnest(?), unnest(?), unnest(?), unnest(?), "
                "unnest(?), unnest(?), unnest(?), unnest(?)",
                [doc_id, *columns],
            )
    con.execute("UPDATE doc_context SET data = NULL WHERE recognizer = 'names'")


_V11 = """
CREATE TABLE IF NOT EXISTS layer_stale (  -- documents a write touched since the layer was built
    doc_id INTEGER NOT NULL         -- their rows are recomputed alone (entities/incremental.py)
);
CREATE TABLE IF NOT EXISTS layer_basis (  -- derived: the corpus-wide decisions the layer made
    part VARCHAR NOT NULL,          -- person | author | cited (entities/incremental.py)
    k VARCHAR NOT NULL,
    v VARCHAR
);
INSERT INTO kbx_meta VALUES ('entities_dirty', '1') ON CONFLICT DO NOTHING;
"""


def _to_v11(con: duckdb.DuckDBPyConnection) -> None:
    """An incremental entity layer (issue 43): which documents each write touched, and the
    decisions a rebuild made for the whole corpus, so the next one can tell whether only
    those documents' rows change. Empty here; the rebuild the migration asks for fills
    the basis."""
    con.execute(_V11)


REEXTRACT = "reextract"  # kbx_meta key: the next `kbx index` reads files again: every one
# ("1") or those of the formats it lists ("text,latex,pdf")

# Each entry upgrades a file from version ``n`` to ``n + 1``.
MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {
    1: _to_v2,
    2: _to_v3,
    3: _to_v4,
    4: _to_v5,
    5: _to_v6,
    6: _to_v7,
    7: _to_v8,
    8: _to_v9,
    9: _to_v10,
    10: _to_v11,
}


def schema_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The schema version a file records, or None for a file kbx did not create."""
    try:  # the common case in one cheap query; the catalog only when it fails
        row = con.execute("SELECT value FROM kbx_meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        tables = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchone()[0]
        return None if tables else 0
    if row is None:
        return None
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise SchemaError(
            f"this index records schema version {str(row[0])[:40]!r}, which no kbx writes; "
            "it was not made by kbx or was edited by hand"
        ) from None


def ensure_schema(con: duckdb.DuckDBPyConnection, root: str) -> None:
    """Create the schema in an empty file, or migrate an older one; refuse anything else."""
    version = schema_version(con)
    if version is None:
        raise SchemaError("this file is not a kbx index (no kbx_meta table)")
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"this index has schema version {version}, newer than this kbx understands "
            f"({SCHEMA_VERSION}); upgrade kbx"
        )
    if version == SCHEMA_VERSION:
        return  # the common case: no transaction to open and commit empty
    with transaction(con):
        if version == 0:
            con.execute(_V1)
            con.execute(
                "INSERT INTO kbx_meta VALUES ('schema_version', ?), ('root', ?)",
                ["1", root],
            )
            version = 1
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](con)
            version += 1
        con.execute("UPDATE kbx_meta SET value = ? WHERE key = 'schema_version'", [str(version)])


def check_readable(con: duckdb.DuckDBPyConnection) -> None:
    """A reader's check: the file is a kbx index this version can read as it is."""
    version = schema_version(con)
    if version is None or version == 0:
        raise SchemaError("this file is not a kbx index; run `kbx index PATH` first")
    if version != SCHEMA_VERSION:
        raise SchemaError(
            f"this index has schema version {version}, this kbx reads {SCHEMA_VERSION}; "
            + ("run `kbx index` to migrate it" if version < SCHEMA_VERSION else "upgrade kbx")
        )
