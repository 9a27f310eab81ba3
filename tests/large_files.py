"""A changelog of thousands of signers, as large as asked, and a cheap model of names: the
large-file tests' and ``benchmarks/large_file.py``'s inputs."""

from __future__ import annotations

import random
import re

from kbx.recognizers.base import Mention, RecognizerInfo

# fmt: off
FIRST = (
    "Ada", "Alan", "Anna", "Arne", "Aziz", "Bela", "Boris", "Carla", "Chen", "Dana", "Dario",
    "Edith", "Elif", "Emre", "Ewa", "Farah", "Femi", "Gita", "Goran", "Hana", "Hugo", "Ines",
    "Ivan", "Jana", "Jonas", "Kai", "Kenji", "Lara", "Leon", "Lina", "Luca", "Mara", "Marek",
    "Mei", "Nadia", "Nils", "Noor", "Olga", "Omar", "Pavel", "Petra", "Quinn", "Rafael", "Rosa",
    "Sami", "Sara", "Tariq", "Tomas", "Uma", "Vera", "Viktor", "Wanda", "Xavier", "Yara", "Yusuf",
    "Zane", "Zofia",
)
SYLLABLES = (
    "ba", "ber", "ca", "dal", "den", "fa", "gor", "ha", "ka", "kel", "la", "lin", "ma", "mor",
    "na", "nov", "pa", "pe", "ra", "ros", "sa", "sen", "ta", "tor", "va", "ven", "wa", "za",
    "zel", "ko",
)
# fmt: on


def people(n: int) -> list[tuple[str, str]]:
    """``n`` distinct people, each of a surname of their own: name and address."""
    surnames = ((a + b + c).capitalize() for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES)
    out = []
    for i, surname in zip(range(n), surnames, strict=False):
        first = FIRST[i % len(FIRST)]
        out.append((f"{first} {surname}", f"{first.lower()}.{surname.lower()}@example.org"))
    return out


def changelog(size: int, n_people: int, seed: int = 0) -> str:
    """A Debian changelog of about ``size`` characters: entries newest first, each signed by
    one of ``n_people`` people in turn (``-- Name <mail>  date``) and naming two others."""
    rng = random.Random(seed)
    who = people(n_people)
    out, total, i = [], 0, 0
    while total < size:
        name, mail = who[i % len(who)]
        other, thanks = rng.choice(who)[0], rng.choice(who)[0]
        day = 1 + i % 28
        entry = (
            f"pkg ({100_000 - i}.0-1) unstable; urgency=medium\n\n"
            f"  * Fix a crash in the parser, reported by {other} (Closes: #{500_000 + i}).\n"
            f"  * Thanks to {thanks} for the patch; {other.split()[1]} tested it.\n\n"
            f" -- {name} <{mail}>  Mon, {day:02d} Jan 2024 12:00:00 +0000\n\n"
        )
        out.append(entry)
        total += len(entry)
        i += 1
    return "".join(out)


NAME = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b|\b(?<=, )[A-Z][a-z]+(?= tested)")


class Names:
    """A model's names at a regex's cost: capitalized pairs (and the surname before
    "tested") as PERSON, with no key, as spaCy's arrive."""

    info = RecognizerInfo(name="names", version="1", types=("PERSON",), names=True)

    def recognize(self, texts):
        return [[Mention(*m.span(), "PERSON", m.group()) for m in NAME.finditer(t)] for t in texts]
