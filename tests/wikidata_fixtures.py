"""Wikidata entities in Wikidata's documented JSON layout (the JSON dumps, one entity per
line; ``Special:EntityData/QID.json`` and ``wbgetentities``: ``{"entities": {...}}``),
written here for the tests."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path


def claim(cls: str, rank: str = "normal") -> dict:
    """One P31 (instance of) statement naming the class ``cls``."""
    numeric = int(cls[1:])
    return {
        "mainsnak": {
            "snaktype": "value",
            "property": "P31",
            "datavalue": {
                "value": {"entity-type": "item", "numeric-id": numeric, "id": cls},
                "type": "wikibase-entityid",
            },
            "datatype": "wikibase-item",
        },
        "type": "statement",
        "id": f"{cls}$5E0C2B5D-0000-4000-8000-000000000000",
        "rank": rank,
    }


def entity(
    qid: str,
    labels: dict[str, str],
    aliases: dict[str, list[str]] | None = None,
    classes: list[str] | tuple = (),
    ranks: dict[str, str] | None = None,
    kind: str = "item",
) -> dict:
    """An entity as Wikidata writes it: labels and aliases per language, P31 claims."""
    return {
        "type": kind,
        "id": qid,
        "labels": {k: {"language": k, "value": v} for k, v in labels.items()},
        "descriptions": {},
        "aliases": {
            k: [{"language": k, "value": a} for a in vs] for k, vs in (aliases or {}).items()
        },
        "claims": {"P31": [claim(c, (ranks or {}).get(c, "normal")) for c in classes]},
        "sitelinks": {},
        "lastrevid": 2000000000,
        "modified": "2024-05-01T00:00:00Z",
    }


APPLE = entity(
    "Q312",
    {"en": "Apple Inc.", "de": "Apple"},
    {"en": ["Apple", "Apple Computer"], "de": ["Apple Computer Inc."]},
    ["Q4830453", "Q891723"],
)
APPLE_CORPS = entity("Q213710", {"en": "Apple Corps"}, {"en": ["Apple"]}, ["Q783794"])
FRUIT = entity("Q89", {"en": "apple"}, {"en": ["apples"]}, ["Q1364"])  # fruit: not mapped
ADA = entity("Q7259", {"en": "Ada Lovelace"}, {"en": ["Augusta Ada King"]}, ["Q5"])


def dump_text(entities: list[dict | str]) -> str:
    """The layout of the JSON dumps: ``[``, one entity per line followed by a comma but the
    last, ``]``. A string is written as the line itself (for malformed lines)."""
    lines = [e if isinstance(e, str) else json.dumps(e) for e in entities]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def write_dump(path: Path, entities: list[dict | str]) -> Path:
    """A dump file, bz2- or gzip-compressed when the name ends so (bz2 in blocks of 100 kB,
    not Wikidata's 900 kB, so that a small file has several: bz2 reads a block whole)."""
    data = dump_text(entities).encode()
    if path.suffix == ".bz2":
        data = bz2.compress(data, compresslevel=1)
    elif path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def write_entity_data(path: Path, entities: list[dict]) -> Path:
    """What Special:EntityData/QID.json and wbgetentities answer (pretty-printed)."""
    path.write_text(json.dumps({"entities": {e["id"]: e for e in entities}}, indent=1))
    return path
