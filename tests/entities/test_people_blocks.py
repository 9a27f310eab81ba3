"""A Debian entry of many hands: each ``[ Name ]`` block credited to its writer, the
writer one person with their signed name, and the names a user types for them (an
address, a name without its accents) finding that person."""

from __future__ import annotations

import re

import pytest
from helpers import attached

from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.bylines import BylineRecognizer
from kbx.recognizers.dates import DateRecognizer
from kbx.recognizers.registry import Registry
from kbx.search.filters import Filters
from kbx.search.grep import grep
from kbx.store.db import Index

CHANGELOG = """pkg (2.0) unstable; urgency=medium

  [ Johannes Schauer Marin Rodrigues ]
  * Add an mmdebstrap test.

  [ Pino Toscano ]
  * Fix the build on hurd.

 -- Timo Röhling <roehling@debian.org>  Mon, 02 Jan 2023 10:00:00 +0100

pkg (1.9) unstable; urgency=medium

  * Remove Andreas Henriksson from Uploaders. Thanks to Jeremy Bícha and Drop Timo Röhling
    (see bugs@example.org).

 -- Johannes Schauer Marin Rodrigues <josch@debian.org>  Sun, 01 Jan 2023 10:00:00 +0100

pkg (1.8) unstable; urgency=medium

  [ Andreas Henriksson ]
  * Tidy the rules.

 -- Jeremy Bicha <jbicha@debian.org>  Sat, 31 Dec 2022 10:00:00 +0100
"""

# What a news model makes of it: a block's head cut in two and typed as a place, a name
# typed as a building, accents dropped or kept, a line's opening verb glued to a name.
MODEL = {
    "Johannes": "GPE",
    "Schauer Marin Rodrigues": "PERSON",
    "Pino Toscano": "FAC",
    "Jeremy Bícha": "PERSON",
    "Remove Andreas Henriksson": "PERSON",
    "Drop Timo Röhling": "PERSON",
}


class Names:
    """A model's names, as they arrive: no key, ``names``."""

    info = RecognizerInfo(name="names", version="1", types=("PERSON", "GPE", "FAC"), names=True)

    def recognize(self, texts):
        pattern = re.compile("|".join(sorted(map(re.escape, MODEL), key=len, reverse=True)))
        return [[Mention(*m.span(), MODEL[m.group()], m.group()) for m in pattern.finditer(t)]
                for t in texts]  # fmt: skip


@pytest.fixture(scope="module")
def idx(tmp_path_factory) -> Index:
    root = tmp_path_factory.mktemp("blocks")
    (root / "changelog.txt").write_text(CHANGELOG)
    index(root, registry=Registry([BylineRecognizer(), DateRecognizer(), Names()]))
    return Index.for_root(root)


def _lines(idx: Index, **asked) -> set[int]:
    got = grep(idx, r"<\S+@\S+>", filters=Filters(**asked))
    return {m.start_line for m in got.matches}


def test_a_block_is_credited_to_the_name_that_heads_it(idx):
    # the 2.0 entry's blocks, and the 1.9 entry he signed; not the 1.8 entry after it
    assert _lines(idx, authors=["Johannes Schauer Marin Rodrigues"]) == {9, 16}
    assert _lines(idx, authors=["Pino Toscano"]) == {9}
    assert _lines(idx, authors=["Andreas Henriksson"]) == {23}
    assert _lines(idx, entities=["Pino Toscano"]) == {9}
    with attached(idx.db) as con:
        people = {
            e for (e,) in con.execute(
                "SELECT entity_id FROM entities WHERE type = 'PERSON'").fetchall()
        }  # fmt: skip
        places = con.execute("SELECT entity_id FROM entities WHERE type <> 'PERSON' "
                             "AND type <> 'EMAIL' AND type <> 'DATE'").fetchall()  # fmt: skip
    assert "person:johannes-schauer-marin-rodrigues" in people
    assert not {e for e in people if e.startswith("name:") and ("schauer" in e or "pino" in e)}
    assert places == []  # "Johannes", "Pino Toscano": the person, not a place


def test_an_address_given_to_author_is_the_person_who_signs_with_it(idx):
    assert _lines(idx, authors=["josch@debian.org"]) == {9, 16}
    assert _lines(idx, authors=["JOSCH@debian.org"]) == {9, 16}
    with pytest.raises(BadArgument, match="no one signs with 'bugs@example.org'"):
        _lines(idx, authors=["bugs@example.org"])
    assert _lines(idx, entities=["bugs@example.org"]) == {16}


def test_a_name_is_found_whatever_its_accents(idx):
    assert _lines(idx, authors=["Timo Rohling"]) == {9}
    assert _lines(idx, authors=["timo röhling"]) == {9}
    # the model's "Jeremy Bícha" is the signer Jeremy Bicha, one entity
    assert _lines(idx, entities=["Jeremy Bícha"]) == _lines(idx, entities=["Jeremy Bicha"])
    assert _lines(idx, entities=["Jeremy Bicha"]) == {16, 23}


def test_a_verb_glued_to_a_signers_name_is_no_name_of_its_own(idx):
    assert _lines(idx, entities=["Andreas Henriksson"]) == {16, 23}
    assert _lines(idx, entities=["Timo Röhling"]) == {9, 16}
    with attached(idx.db) as con:
        names = {
            e
            for (e,) in con.execute(
                "SELECT entity_id FROM entities WHERE starts_with(entity_id, 'name:')"
            ).fetchall()
        }
    assert names == set()  # no "Remove Andreas Henriksson", "Drop Timo Röhling", "Jeremy Bícha"
