"""Wikidata entities as gazetteer entries, read offline and streamed: no database here.

Three JSON layouts, told apart by how the file begins: the JSON dumps (``[``, then one
entity per line ending in ``,``, then ``]``), one entity per line (JSON lines, as filtered
dumps are often kept), and one object ``{"entities": {"Q312": {...}}}`` (what
``Special:EntityData/Q312.json`` and the ``wbgetentities`` API answer). A CSV of columns
``qid, label, aliases, type`` (a SPARQL query's result, see the README) is the fourth.

Everything is a generator that reads a line at a time (``.bz2`` and ``.gz`` decompressed
as they are read), so a whole dump goes through in flat memory; what is kept is one
``Record`` per wanted entity, and the caller writes them out in batches.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kbx.errors import BadArgument
from kbx.gazetteer.entries import TYPES, check_name

FORMATS = ("wikidata", "csv")

# "instance of" (P31) classes → kbx's types: direct classes only (offline, there is no
# class tree to climb), so a company typed only as "technology company" needs
# ``--map Q18388277=ORG`` or ``--type ORG``. The README shows this table.
P31_TYPES: dict[str, str] = {
    "Q5": "PERSON",  # human
    "Q15632617": "PERSON",  # fictional human
    "Q43229": "ORG",  # organization
    "Q4830453": "ORG",  # business
    "Q783794": "ORG",  # company
    "Q6881511": "ORG",  # enterprise
    "Q891723": "ORG",  # public company
    "Q163740": "ORG",  # nonprofit organization
    "Q3918": "ORG",  # university
    "Q31855": "ORG",  # research institute
    "Q7278": "ORG",  # political party
    "Q327333": "ORG",  # government agency
    "Q2085381": "ORG",  # publisher
    "Q484652": "ORG",  # international organization
    "Q215380": "ORG",  # musical group
    "Q476028": "ORG",  # association football club
    "Q6256": "GPE",  # country
    "Q3624078": "GPE",  # sovereign state
    "Q515": "GPE",  # city
    "Q1549591": "GPE",  # big city
    "Q1637706": "GPE",  # city with millions of inhabitants
    "Q5119": "GPE",  # capital
    "Q3957": "GPE",  # town
    "Q532": "GPE",  # village
    "Q486972": "GPE",  # human settlement
    "Q107390": "GPE",  # federated state
    "Q35657": "GPE",  # state of the United States
    "Q34876": "GPE",  # province
    "Q5107": "LOC",  # continent
    "Q8502": "LOC",  # mountain
    "Q46831": "LOC",  # mountain range
    "Q4022": "LOC",  # river
    "Q23397": "LOC",  # lake
    "Q165": "LOC",  # sea
    "Q9430": "LOC",  # ocean
    "Q23442": "LOC",  # island
    "Q8514": "LOC",  # desert
    "Q82794": "LOC",  # geographic region
    "Q41176": "FAC",  # building
    "Q12280": "FAC",  # bridge
    "Q1248784": "FAC",  # airport
    "Q55488": "FAC",  # railway station
    "Q483110": "FAC",  # stadium
    "Q41710": "NORP",  # ethnic group
    "Q1656682": "EVENT",  # event
    "Q1190554": "EVENT",  # occurrence
    "Q7748": "LAW",  # law
    "Q820655": "LAW",  # statute
    "Q2424752": "PRODUCT",  # product
    "Q7889": "PRODUCT",  # video game
    "Q571": "WORK_OF_ART",  # book
    "Q7725634": "WORK_OF_ART",  # literary work
    "Q11424": "WORK_OF_ART",  # film
    "Q482994": "WORK_OF_ART",  # album
    "Q134556": "WORK_OF_ART",  # single
    "Q34770": "LANGUAGE",  # language
    "Q7397": "SOFTWARE",  # software
    "Q341": "SOFTWARE",  # free software
    "Q166142": "SOFTWARE",  # application
    "Q9143": "SOFTWARE",  # programming language
    "Q1172284": "DATASET",  # dataset
    "Q317623": "STANDARD",  # technical standard
}
assert set(P31_TYPES.values()) <= set(TYPES)

_QID = re.compile(r"^Q[1-9]\d{0,11}$")
_ID_AT_START = re.compile(r'"id"\s*:\s*"([^"]+)"')
_URI = "http://www.wikidata.org/entity/"


@dataclass(frozen=True)
class Record:
    """One wanted entity, ready to be an entry: the label first among its names."""

    qid: str
    label: str
    aliases: tuple[str, ...]
    type: str
    line: int


@dataclass(frozen=True)
class Bad:
    """A line or entity that cannot be an entry, with where and why."""

    line: int
    why: str
    qid: str | None = None


@dataclass
class Counts:
    """What the reader passed over, by reason (the caller counts what it imports)."""

    read: int = 0  # entities (or CSV rows) read
    not_items: int = 0  # properties, lexemes: not things documents name
    filtered: int = 0  # left out by --qid/--qids or --only-type
    unmapped: int = 0  # no mapped P31 class and no --type
    aliases_dropped: int = 0  # names with no letter or digit, or over 200 characters


@dataclass(frozen=True)
class Options:
    """What to take from each entity, checked once at the edge (``options``)."""

    langs: tuple[str, ...] = ("en",)
    default_type: str | None = None
    qids: frozenset[str] = frozenset()
    only_types: frozenset[str] = frozenset()
    classes: dict[str, str] = field(default_factory=lambda: dict(P31_TYPES))


def check_qid(value: str, where: str = "") -> str:
    """``Q312`` (or its entity URI) → ``Q312``; anything else is a BadArgument."""
    v = value.strip().removeprefix(_URI)
    if not _QID.match(v):
        raise BadArgument(f"{where}{value!r} is not a Wikidata item ID (Q followed by digits)")
    return v


def options(
    langs: Iterable[str] = ("en",),
    default_type: str | None = None,
    qids: Iterable[str] = (),
    only_types: Iterable[str] = (),
    mapping: Iterable[str] = (),
) -> Options:
    """Validated options: types are kbx's, QIDs are items, ``--map`` is ``QID=TYPE``."""
    from kbx.gazetteer.entries import check_type

    classes = dict(P31_TYPES)
    for m in mapping:
        qid, eq, type_ = m.partition("=")
        if not eq:
            raise BadArgument(f"--map {m!r}: write it as QID=TYPE, e.g. Q18388277=ORG")
        classes[check_qid(qid, "--map: ")] = check_type(type_)
    langs = tuple(dict.fromkeys(x.strip() for x in langs if x.strip())) or ("en",)
    return Options(
        langs=langs,
        default_type=check_type(default_type) if default_type else None,
        qids=frozenset(check_qid(q, "--qid: ") for q in qids),
        only_types=frozenset(check_type(t) for t in only_types),
        classes=classes,
    )


def read_qids(path: Path) -> list[str]:
    """A ``--qids`` file: one QID (or entity URI) a line; blank lines and ``#`` comments."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BadArgument(f"--qids {path}: cannot read it ({e.__class__.__name__})") from None
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(check_qid(line, f"--qids {path.name}, line {n}: "))
    return out


class Source:
    """A file (or ``-``, standard input: a dump piped from ``lbzip2 -dc`` decompresses on
    every core) opened for reading, decompressed as it is read; ``done()`` is how far
    through the file (compressed bytes) reading has got, for a progress bar."""

    def __init__(self, path: Path):
        self.piped = str(path) == "-"
        if self.piped:
            raw = sys.stdin.buffer
            self.size = 0
        else:
            try:
                raw = open(path, "rb")  # noqa: SIM115 (closed by close())
            except FileNotFoundError:
                raise BadArgument(f"no such file: {path}") from None
            except OSError as e:
                raise BadArgument(f"cannot open {path}: {e.strerror}") from None
            self.size = path.stat().st_size
        self.raw = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
        magic = self.raw.peek(3)[:3]
        self.stream: IO[bytes] = self.raw
        if magic[:2] == b"\x1f\x8b":
            self.stream = gzip.GzipFile(fileobj=self.raw)
        elif magic == b"BZh":
            self.stream = bz2.BZ2File(self.raw)

    def done(self) -> int:
        return 0 if self.piped else self.raw.tell()

    def lines(self, name: str) -> Iterator[tuple[int, str]]:
        """(line number, line) one at a time, decoded line by line so that a byte that is
        not UTF-8, or a failure to decompress, is one BadArgument naming its line."""
        n = 0
        try:
            for n, data in enumerate(self.stream, start=1):  # noqa: B007 (n is read below)
                yield n, data.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError:
            raise BadArgument(f"{name}, line {n}: not UTF-8; save it as UTF-8") from None
        except (OSError, EOFError, ValueError) as e:  # a truncated or corrupt .bz2/.gz
            raise BadArgument(f"{name}, line {n + 1}: cannot decompress ({e})") from None

    def close(self) -> None:
        if not self.piped:  # standard input stays the process's
            self.stream.close()
            self.raw.close()


def read(
    source: Source, name: str, fmt: str, opts: Options, counts: Counts
) -> Iterator[Record | Bad]:
    """The records (and bad lines) of a file in the given format."""
    if fmt == "wikidata":
        return read_json(source.lines(name), name, opts, counts)
    if fmt == "csv":
        return read_csv(source.lines(name), name, opts, counts)
    raise BadArgument(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def read_json(
    lines: Iterator[tuple[int, str]], name: str, opts: Options, counts: Counts
) -> Iterator[Record | Bad]:
    """Entities of any of the three JSON layouts, told apart by the first line."""
    first = next(((n, x) for n, x in lines if x.strip()), None)
    if first is None:
        raise BadArgument(f"{name}: the file is empty")
    n, line = first
    head = line.strip()
    if head == "[":  # a dump: one entity per line, each but the last followed by a comma
        yield from _entity_lines(lines, name, opts, counts)
        return
    if not head.startswith("{"):
        raise BadArgument(f"{name}, line {n}: not Wikidata JSON (it starts with {head[:20]!r})")
    if head == "{" or head.startswith('{"entities"') and not head.endswith("}"):
        yield from _entity_map(_whole(line, lines, name), name, n, opts, counts)
        return  # one object over many lines: an EntityData answer, pretty-printed
    try:
        obj = json.loads(head)
    except ValueError:
        obj = None  # a bad first entity line: counted as such below
    if isinstance(obj, dict) and "entities" in obj:
        yield from _entity_map(obj, name, n, opts, counts)
        return
    yield from _entity_lines(_again(first, lines), name, opts, counts)


_WHOLE_LIMIT = 64 << 20  # characters: an API answer, not a dump (dumps go line by line)


def _whole(line: str, lines: Iterator[tuple[int, str]], name: str) -> object:
    """A multi-line JSON object, read whole (up to ``_WHOLE_LIMIT``)."""
    parts, size = [line], len(line)
    for _, x in lines:
        parts.append(x)
        size += len(x)
        if size > _WHOLE_LIMIT:
            raise BadArgument(
                f"{name}: one JSON object over 64 MB; a dump has one entity per line "
                "(as Wikidata's JSON dumps do)"
            )
    try:
        return json.loads("".join(parts))
    except RecursionError:
        raise BadArgument(f"{name}: JSON nested too deep") from None
    except ValueError as e:
        raise BadArgument(f"{name}: not JSON ({e})") from None


def _again(first: tuple[int, str], lines: Iterator[tuple[int, str]]):
    yield first
    yield from lines


def _entity_map(
    obj: object, name: str, line: int, opts: Options, counts: Counts
) -> Iterator[Record | Bad]:
    """The entities of ``{"entities": {QID: entity}}``."""
    found = obj.get("entities") if isinstance(obj, dict) else None
    if not isinstance(found, dict):
        raise BadArgument(f'{name}: no "entities" object (as Special:EntityData answers)')
    for key, entity in found.items():
        counts.read += 1
        if (r := _record(entity, line, opts, counts, key)) is not None:
            yield r


def _entity_lines(
    lines: Iterator[tuple[int, str]], name: str, opts: Options, counts: Counts
) -> Iterator[Record | Bad]:
    """One entity per line (the dump's layout, or JSON lines); with a QID filter, a line
    whose ``id`` is not wanted is passed over without being parsed."""
    for n, line in lines:
        text = line.strip()
        if not text or text in ("[", "]"):
            continue
        counts.read += 1
        if opts.qids:
            m = _ID_AT_START.search(text, 0, 400)
            if m and m.group(1) not in opts.qids:
                counts.filtered += 1
                continue
        try:
            entity = json.loads(text.removesuffix(","))
        except RecursionError:
            yield Bad(n, "JSON nested too deep")
            continue
        except ValueError as e:
            yield Bad(n, f"not JSON ({getattr(e, 'msg', e)})")
            continue
        if (r := _record(entity, n, opts, counts)) is not None:
            yield r


def _record(
    entity: object, line: int, opts: Options, counts: Counts, key: str | None = None
) -> Record | Bad | None:
    """The entry an entity makes, why it cannot make one, or None: passed over, counted."""
    if not isinstance(entity, dict):
        return Bad(line, "not an entity object")
    qid = entity.get("id") if isinstance(entity.get("id"), str) else key
    if "missing" in entity:
        return Bad(line, "no such entity (the answer says it is missing)", qid)
    if entity.get("type") not in (None, "item") or not (qid and _QID.match(qid)):
        counts.not_items += 1
        return None
    if opts.qids and qid not in opts.qids:
        counts.filtered += 1
        return None
    type_ = _type_of(entity.get("claims"), opts.classes) or opts.default_type
    if not _wanted(type_, opts, counts):
        return None
    names = _names(entity, opts.langs)
    if not names:
        return Bad(line, f"no label in {'/'.join(opts.langs)}", qid)
    return _entry(qid, names, type_, line, counts)


def _wanted(type_: str | None, opts: Options, counts: Counts) -> bool:
    """Whether an entity of ``type_`` is imported: one without a type is counted unmapped,
    one outside ``--only-type`` filtered."""
    if type_ is None:
        counts.unmapped += 1
        return False
    if opts.only_types and type_ not in opts.only_types:
        counts.filtered += 1
        return False
    return True


def _entry(qid: str, names: list[str], type_: str, line: int, counts: Counts) -> Record | Bad:
    """The label and the usable aliases; a label kbx cannot use is a bad entity."""
    try:
        label = check_name(names[0], "label")
    except BadArgument as e:
        return Bad(line, str(e), qid)
    kept = [label]
    for a in names[1:]:
        try:
            kept.append(check_name(a, "alias"))
        except BadArgument:
            counts.aliases_dropped += 1
    return Record(qid, label, tuple(dict.fromkeys(kept)), type_, line)


def _text_of(x: object) -> str | None:
    v = x.get("value") if isinstance(x, dict) else None
    return v if isinstance(v, str) and v.strip() else None


def _names(entity: dict, langs: tuple[str, ...]) -> list[str]:
    """The label in the first language that has one, then the other languages' labels,
    then the aliases, language by language."""
    labels = entity.get("labels") if isinstance(entity.get("labels"), dict) else {}
    aliases = entity.get("aliases") if isinstance(entity.get("aliases"), dict) else {}
    out = [t for lang in langs if (t := _text_of(labels.get(lang)))]
    if not out:
        return []
    for lang in langs:
        given = aliases.get(lang)
        for a in given if isinstance(given, list) else []:
            if t := _text_of(a):
                out.append(t)
    return out


def _type_of(claims: object, classes: dict[str, str]) -> str | None:
    """The type of the first mapped P31 class, preferred statements first; deprecated
    ones never count."""
    statements = claims.get("P31") if isinstance(claims, dict) else None
    if not isinstance(statements, list):
        return None
    kept = [s for s in statements if isinstance(s, dict) and s.get("rank") != "deprecated"]
    if any(s.get("rank") == "preferred" for s in kept):
        kept.sort(key=lambda s: s.get("rank") != "preferred")
    for s in kept:
        snak = s.get("mainsnak")
        value = snak.get("datavalue", {}).get("value") if isinstance(snak, dict) else None
        cls = value.get("id") if isinstance(value, dict) else None
        if isinstance(cls, str) and cls in classes:
            return classes[cls]
    return None


def read_csv(
    lines: Iterator[tuple[int, str]], name: str, opts: Options, counts: Counts
) -> Iterator[Record | Bad]:
    """Rows of ``qid, label, aliases, type``: aliases split at ``|``; the type a kbx type,
    or a class QID mapped like P31, or empty for ``--type``."""
    at = 0

    def texts() -> Iterator[str]:
        nonlocal at
        for n, line in lines:
            at = n
            yield line

    reader = csv.DictReader(texts())
    try:
        header = [h.strip().lower() for h in reader.fieldnames or []]
    except csv.Error as e:
        raise BadArgument(f"{name}, line {at}: not CSV ({e})") from None
    if not {"qid", "label"} <= set(header):
        raise BadArgument(
            f"{name}: the header must name qid and label (and aliases, type); it has "
            f"{', '.join(header) or 'nothing'}"
        )
    reader.fieldnames = header
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            yield Bad(at, f"not CSV ({e})")
            continue
        counts.read += 1
        if (r := _csv_record(row, at, opts, counts)) is not None:
            yield r


def _csv_record(row: dict, line: int, opts: Options, counts: Counts) -> Record | Bad | None:
    try:
        qid = check_qid(row.get("qid") or "")
    except BadArgument as e:
        return Bad(line, str(e))
    if opts.qids and qid not in opts.qids:
        counts.filtered += 1
        return None
    written = (row.get("type") or "").strip()
    if not written:
        type_ = opts.default_type
    elif _QID.match(w := written.removeprefix(_URI)):
        type_ = opts.classes.get(w) or opts.default_type
    elif written.upper().replace("-", "_") in TYPES:
        type_ = written.upper().replace("-", "_")
    else:
        return Bad(line, f"unknown type {written!r}; choose from {', '.join(TYPES)}", qid)
    if not _wanted(type_, opts, counts):
        return None
    label = (row.get("label") or "").strip()
    if not label:
        return Bad(line, "no label", qid)
    aliases = [a for a in (row.get("aliases") or "").split("|") if a.strip()]
    return _entry(qid, [label, *aliases], type_, line, counts)


def display_name(path: Path) -> str:
    """How messages name the file: its name, or standard input."""
    return "standard input" if str(path) == "-" else path.name


def records(
    path: Path,
    fmt: str,
    opts: Options,
    counts: Counts,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[Record | Bad]:
    """The records and bad lines of the file at ``path``, streamed; ``progress(done,
    total)`` in bytes of the file as it stands on disk."""
    if fmt not in FORMATS:
        raise BadArgument(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    source = Source(path)
    try:
        last = 0
        for r in read(source, display_name(path), fmt, opts, counts):
            if progress and counts.read - last >= 1000:
                last = counts.read
                progress(source.done(), source.size)
            yield r
        if progress:
            progress(source.size, source.size)
    finally:
        source.close()
