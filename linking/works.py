"""What a resolved work is, from a service's JSON, and whether it is the one a reference
string names. No database and no HTTP here: pure functions over answers."""

from __future__ import annotations

import re

_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")


def summary(crossref: object, openalex: object) -> dict:
    """A resolved work's title, year, venue, authors and OpenAlex ID, Crossref first. Each
    field is read only where it has the type expected, so an odd answer cached by an older
    kbx (which did not check them) leaves that field empty rather than failing the rebuild."""

    def at(v: object, *path: str | int) -> object:  # None where the answer is shaped otherwise
        for k in path:
            if isinstance(k, int):
                v = v[k] if isinstance(v, list) and len(v) > k else None
            else:
                v = v.get(k) if isinstance(v, dict) else None
        return v

    def text(v: object) -> str | None:  # a string, or the first of a list (Crossref's titles)
        v = at(v, 0) if isinstance(v, list) else v
        return v if isinstance(v, str) and v.strip() else None

    def items(v: object, key: str) -> list[dict]:
        found = at(v, key)
        return [x for x in found if isinstance(x, dict)] if isinstance(found, list) else []

    def tail(v: object) -> str | None:  # an ID from its URL (https://orcid.org/…)
        return (text(v) or "").rsplit("/", 1)[-1] or None

    c, o = crossref, openalex
    years = [at(c, "issued", "date-parts", 0, 0), at(o, "publication_year")]
    year = next((y for y in years if type(y) is int and 0 < y < 10000), None)  # not a bool
    authors = [
        {
            "name": " ".join(x for x in (text(a.get("given")), text(a.get("family"))) if x)
            or text(a.get("name")),
            "orcid": tail(a.get("ORCID")),
        }
        for a in items(c, "author")
    ] or [
        {"name": text(at(a, "author", "display_name")), "orcid": tail(at(a, "author", "orcid"))}
        for a in items(o, "authorships")
    ]
    return {
        "title": text(at(c, "title")) or text(at(o, "title")),
        "year": year,
        "venue": text(at(c, "container-title"))
        or text(at(o, "primary_location", "source", "display_name")),
        "authors": [a for a in authors if a["name"]],
        "openalex": tail(at(o, "id")),
    }


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]{3,}", text.casefold())


def agrees(reference: str, title: str | None, year: int | None) -> tuple[bool, str]:
    """Whether a candidate work is the one a reference string names: most words of its
    title appear in the string, and its year is one the string gives (or one off, for
    online-first and print years)."""
    if not title:
        return False, "the candidate has no title"
    words, have = _words(title), set(_words(reference))
    if not words or sum(w in have for w in words) / len(words) < 0.8:
        return False, "the title does not agree"
    years = {int(y) for y in _YEAR.findall(reference)}
    if year and years and not any(abs(year - y) <= 1 for y in years):
        return False, "the year does not agree"
    return True, "title and year agree"
