"""Gazetteer entries: what one is, what makes it valid, and the version a set of them has."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from kbx.errors import BadArgument

# spaCy's OntoNotes name types, and the kinds of names documents about work add to them.
TYPES = (
    "PERSON",
    "ORG",
    "GPE",
    "LOC",
    "NORP",
    "FAC",
    "EVENT",
    "LAW",
    "PRODUCT",
    "WORK_OF_ART",
    "LANGUAGE",
    "PROJECT",
    "SOFTWARE",
    "DATASET",
    "STANDARD",
    "TOPIC",
)
_ID = re.compile(r"^[A-Za-z][\w:.\-/]{0,120}$")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit of any script


@dataclass(frozen=True)
class Entry:
    """One named thing: its entity ID, type, and every way it is written (name first)."""

    entry_id: str
    name: str
    type: str
    aliases: tuple[str, ...]
    ignore_case: bool = False
    protected: bool = False
    pinned: tuple[str, ...] = ()  # aliases it shares with other entries and wins (a pin)


def check_name(name: str, what: str = "name") -> str:
    """A usable name: not empty, one line, not absurdly long."""
    clean = " ".join(name.split())
    if not clean:
        raise BadArgument(f"the {what} is empty; give the name as it is written")
    if len(clean) > 200:
        raise BadArgument(f"the {what} {clean[:40]!r}… is over 200 characters")
    if not _ALNUM.search(clean):
        raise BadArgument(f"the {what} {clean!r} has no letters or digits")
    return clean


def check_type(type_: str) -> str:
    t = type_.strip().upper().replace("-", "_")
    if t not in TYPES:
        raise BadArgument(f"unknown type {type_!r}; choose from {', '.join(TYPES)}")
    return t


def check_id(entry_id: str) -> str:
    if not _ID.match(entry_id):
        raise BadArgument(
            f"entity ID {entry_id!r}: start with a letter; letters, digits and _ : . - / only"
        )
    return entry_id


def slug(name: str) -> str:
    """``Project Cedar`` → ``project-cedar``, ``Иван Петров`` → ``иван-петров``: accents
    dropped, letters of any script kept. SQL calls this very function (``entities.build``)."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "-", bare.lower()).strip("-") or "name"


def version_of(entries: list[Entry]) -> str:
    """The gazetteer recognizer's version: a digest of everything that changes what it
    finds, so any edit makes a new version and nothing else does."""
    h = hashlib.sha256()
    for e in sorted(entries, key=lambda e: e.entry_id):
        h.update(f"{e.entry_id}\x1f{e.type}\x1f{e.ignore_case}\x1f".encode())
        h.update("\x1e".join(sorted(e.aliases)).encode() + b"\x1d")
        if e.pinned:  # only then: digests of gazetteers without pins stay as they were
            h.update(b"\x1c" + "\x1e".join(sorted(e.pinned)).encode())
    return "g" + h.hexdigest()[:12]
