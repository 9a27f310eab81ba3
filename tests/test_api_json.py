"""``plain`` gives what ``dataclasses.asdict`` gives, for the shapes results have."""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from datetime import date
from pathlib import Path

from kbx.api_json import plain

Pair = namedtuple("Pair", "a b")


@dataclasses.dataclass
class Inner:
    name: str
    lines: tuple[int, int]
    ranks: dict[str, int | None] | None = None


@dataclasses.dataclass
class Outer:
    hits: list[Inner]
    counts: dict[str, list[tuple[str, int]]]
    pair: Pair
    when: date
    where: Path
    nothing: None = None
    flags: list[bool] = dataclasses.field(default_factory=list)


def test_plain_is_asdict_without_the_copies():
    shared = ["a", "b"]
    value = Outer(
        hits=[Inner("x", (1, 2), {"bm25": 1, "dense": None}), Inner("y", (3, 3))],
        counts={"types": [("PERSON", 2)], "years": []},
        pair=Pair(Inner("z", (0, 0)), shared),
        when=date(2021, 5, 1),
        where=Path("notes/a.md"),
        flags=[True, False],
    )
    got = plain(value)
    assert got == dataclasses.asdict(value)
    assert isinstance(got["pair"], Pair) and got["pair"].a == {
        "name": "z",
        "lines": (0, 0),
        "ranks": None,
    }
    assert got["hits"] is not value.hits and got["pair"].b is not shared  # containers anew
