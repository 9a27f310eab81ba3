"""People where they sign: e-mail addresses, and the names written beside them or after a
byline label.

A news model finds a name by how its words read, and on a changelog's closing line
(`` -- Jordi Mallach <jordi@debian.org>  Wed, 30 Nov 2022``), a commit trailer
(``Signed-off-by: …``) or a list of authors it misses four names in ten, types them as
places or cuts them in two. The line's shape says more than its words: what stands between
a line's opening (or a byline label, or a quote) and an address is the name its owner
signs with, however it is spelled, lower case and all. In running text ("thanks to Steve
Langasek <…>") the name is the run of capitalized words just before the address. A byline
label with no address (``Author: Ada Lovelace``) gives its names too, and so does the
head of a Debian entry's block (``  [ Name ]`` alone on its line, bullets below it).

An address is an EMAIL mention keyed ``email:ADDRESS`` (lower case). A name is a PERSON
mention keyed ``person:SLUG``; its value is its surface. A name that signs the text (a
closing line, a trailer, a byline) is an AUTHOR mention too, over the same span and key,
its value ``closes`` (the text above it: a changelog entry, a commit) or ``opens`` (the
text that follows). A BibTeX record's ``author`` and ``editor`` fields give PERSON mentions
(a cited work's people: they sign nothing here). The entity layer (``entities/people.py``)
makes one person of the names that share an address or a spelling, so one person under two
spellings, or with two addresses, is one entity.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from kbx.gazetteer.entries import slug
from kbx.recognizers.base import Mention, RecognizerInfo

_LOCAL = r"[A-Za-z0-9][A-Za-z0-9._%+=-]*"
_DOMAIN = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,24}"
# Not part of a longer token (a URL's user@host, a path) nor a git remote (git@host:path).
EMAIL = re.compile(rf"(?<![\w.%+=/@-])({_LOCAL}@{_DOMAIN})(?![\w@-]|\.\w|:\S)")
_LABELS = (
    r"Author|Authors|Written by|Maintainer|Maintainers|Maintained by|Uploaders?|"
    r"Signed-off-by|Co-authored-by|Co-developed-by|Reviewed-by|Acked-by|Tested-by|"
    r"Reported-by|Suggested-by|Helped-by|Contributed-by|Original-author|From|Contact|Creator|By"
)
# At a line's start (``^`` of MULTILINE fails at once elsewhere: five times faster than a
# lookbehind for the line break, on the Node.js pages).
_LABEL = re.compile(rf"^[ \t>*#-]*(?:{_LABELS})\b[ \t]*:?[ \t]*", re.IGNORECASE | re.MULTILINE)
# A line's opening before a name that signs it: indentation, list markers, Debian's "--",
# an opening bracket ("[ Name <mail> ]").
_OPENING = re.compile(r"(?:^|(?<=\n))[ \t>*|#-]*")
_STRONG = re.compile(r"(?:^|(?<=\n))[ \t]*(?:--|\[)[ \t]*")
_QUOTED = re.compile(r"[\"“]([^\"“”\n<>@]{2,80})[\"”][ \t]*$")
# A name's words in running text: capitalized (any script with case), or a particle.
_WORD = re.compile(r"[^\W\d_][\w'’.-]*")
_PARTICLES = frozenset(
    ("van", "von", "der", "den", "de", "da", "das", "del", "della", "di", "du", "dos", "le",
     "la", "bin", "ibn", "al", "el", "y", "e", "zu", "ten", "ter", "mac", "st.")
)  # fmt: skip
# Words that open a changelog's line before a name in running text, never a name's first.
_OPENERS = frozenset(
    ("add", "added", "adds", "remove", "removed", "update", "updated", "fix", "fixed",
     "thanks", "thank", "merge", "merged", "revert", "reverted", "patch", "from", "by",
     "credit", "reported", "suggested", "contributed", "welcome", "via", "ask",
     "contact", "email", "mail", "cc", "to", "ping", "new", "old", "see", "move", "moved")
)  # fmt: skip
# The legal forms that end a company's name ("Cluster File Systems, Inc <info@…>"): an
# organization signs there, never a person named "Inc". The forms of annotate/names.py's
# ``_SUFFIX`` (which cuts them off an organization's name), as words: a recognizer depends
# on the data model alone.
_LEGAL_FORMS = frozenset(
    ("inc", "incorporated", "corp", "corporation", "ltd", "limited", "llc", "l.l.c", "gmbh",
     "ag", "s.a", "sa", "plc", "co", "llp", "lp", "pty", "bv", "b.v", "nv", "n.v", "sarl",
     "srl", "s.r.l", "spa", "s.p.a", "kg", "oy", "ab", "asa", "kk", "e.v")
)  # fmt: skip
# What joins a word to the token it ends: "GNU/Linux", "~/Linux", "foo.Bar", "x-Y".
_TOKEN_GLUE = "/\\._-@+~&=%$#"
_NAME_CHARS = re.compile(r"^[^\W\d_](?:[^\n<>@:;,\[\]{}|\\=_*#`$]*(?:[^\W\d_]|\)))?$")
_MAX_WORDS = 8


def _name_like(name: str) -> bool:
    """Whether a delimited segment can be a name: letters first and last (a closing
    parenthesis of "(Treviño)" too), no digits, no markup, at most eight words, not one
    word in capitals."""
    words = name.split()
    return (
        0 < len(words) <= _MAX_WORDS
        and len(name) <= 80
        and bool(_NAME_CHARS.match(name))
        and not any(c.isdigit() for c in name)
        and "http" not in name.lower()
        and not (len(words) == 1 and name.isupper())  # "MAINTAINERS", "BTS": a label
    )


def _person_like(text: str, a: int, b: int) -> bool:
    """Whether the name at ``a:b`` reads as a person's where it stands: it starts a token
    ("Linux" of "GNU/Linux" is the tail of a product's name, no name of its own), and its
    last word is no company's legal form ("Cluster File Systems, Inc": an organization)."""
    if a > 0 and (text[a - 1].isalnum() or text[a - 1] in _TOKEN_GLUE):
        return False
    words = text[a:b].split()
    return bool(words) and words[-1].strip(".,").lower() not in _LEGAL_FORMS


# A GNU ChangeLog entry: its header line signs it ("2021-03-04  Jane Roe  <jane@…>"); its
# body's items ("* FILE (function): What changed.", tab-indented, or joined onto one line
# in clean text) are the change's sentences. There "MAINTAINERS:" is a file, no byline
# label, and "Add" before "aph@…" the sentence's verb, no signer. An item's file is told
# by its shape where no header stands above it in the text: a path or a name with a dot
# ("configure.ac", "src/x.c") or in capitals (GNU's MAINTAINERS, AUTHORS, THANKS files).
_GNU_ENTRY = re.compile(r"\d{4}-\d\d-\d\d[ \t]+")  # the date that opens an entry's header
_GNU_HEADER = re.compile(rf"(?m)^{_GNU_ENTRY.pattern}[^\n<>]*<[^<>\n@]+@[^<>\n]+>")
_GNU_ITEM = re.compile(
    r"[ \t]*\*[ \t]*(?:[A-Z][A-Z0-9_-]+|[^\s:*]*[./][^\s:]*)(?:[ \t,(][^:\n]*)?:"
)


_ITEM = re.compile(r"[ \t]*\*[ \t]*[^\s:*][^:\n]*:")


def _gnu_item(text: str, line_start: int) -> bool:
    """Whether the line at ``line_start`` is a GNU ChangeLog entry's item: of its shape, or
    any "* WORD:" line below an entry's header. A body's trailers ("Co-authored-by: …",
    as gitlog-to-changelog writes them) are no items: they sign."""
    if _GNU_ITEM.match(text, line_start):
        return True
    return bool(_ITEM.match(text, line_start) and _GNU_HEADER.search(text, 0, line_start))


def _capitalized(word: str) -> bool:
    return word[0].isupper() or word.lower() in _PARTICLES


def _trailing_name(text: str, end: int) -> tuple[int, int] | None:
    """The run of capitalized words (particles and initials among them) that ends at
    ``end``, in running text: "… thanks to Steve Langasek" gives "Steve Langasek"."""
    words = []
    at = end
    for m in reversed(list(_WORD.finditer(text, max(0, end - 120), end))):
        gap = text[m.end() : at]
        if gap.strip() or gap.count("\n") > 1 or not _capitalized(m.group()):
            break
        words.append(m)
        at = m.start()
        if len(words) == _MAX_WORDS:
            break
    while words and (  # "de" opens no name; "Remove Dan Hipschman <…>" names Dan Hipschman
        not words[-1].group()[0].isupper() or words[-1].group().lower() in _OPENERS
    ):
        words.pop()
    if not words or not words[0].group()[0].isupper():
        return None
    a, b = words[-1].start(), words[0].end()
    return (a, b) if _name_like(text[a:b]) else None


def _name_before(text: str, at: int) -> tuple[int, int] | None:
    """The name signing with the address at ``at``: between quotes; else the whole segment
    after a byline label, Debian's ``--`` or an opening bracket (``[ Name <mail> ]``), lower
    case and all, when the address is in brackets; else the capitalized words before it
    (two at least before a bare address: "Contact us at …" names nobody)."""
    line_start = text.rfind("\n", 0, at) + 1
    head = text[line_start:at].rstrip()
    bracketed = head.endswith(("<", "(", "["))
    end = line_start + len(head[:-1].rstrip() if bracketed else head)
    if end <= line_start:
        return None
    if q := _QUOTED.search(text, line_start, end):
        return q.start(1), q.end(1)
    # Where a GNU entry's item names someone, it is running text: no line opening signs.
    openings = () if _gnu_item(text, line_start) else (_LABEL, _STRONG, _OPENING)
    for opening in openings:
        o = opening.match(text, line_start)
        if o is None or o.end() >= end:
            continue
        name = text[o.end() : end].strip()
        while " " in name and name.split()[0].lower() in _OPENERS:  # "Thanks Ann Lee"
            name = name.split(None, 1)[1]
        words = name.split()
        loose = bracketed and opening is not _OPENING  # "-- intrigeri <…>"
        # One word at a bare line's opening is a name only in brackets before the address,
        # never a line's verb: "Change palmer@…" ("-- intrigeri <…>" is loose: it signs).
        alone = len(words) == 1 and opening is _OPENING
        if alone and (not bracketed or name.lower() in _OPENERS):
            continue
        if _name_like(name) and (loose or (all(map(_capitalized, words)) and name[0].isupper())):
            a = text.index(name, o.end())
            return a, a + len(name)
    # In running text a name is two words at least ("… thanks to Steve Langasek <…>"): one
    # capitalized word before an address is as often the sentence's ("Add", "Inc", "Linux")
    # as a name. Where it signs it takes one word in brackets: a GNU entry's header, or a
    # byline label just before it (clean text joins "commit … Author: Peter <…>").
    found = _trailing_name(text, end)
    if not found:
        return None
    one = " " not in text[found[0] : found[1]]
    signing = _GNU_ENTRY.fullmatch(text, line_start, found[0]) or _SIGNED.search(
        text, line_start, found[0]
    )
    return found if not one or (bracketed and signing) else None


_SIGNED = re.compile(rf"(?:^|[ \t])(?:{_LABELS})[ \t]*:[ \t]*$", re.IGNORECASE)
_PARENTHESIZED = re.compile(r"[ \t]*\(([^()\n@]{2,80})\)")


def _name_after(text: str, end: int) -> tuple[int, int] | None:
    """The old form ``address (Full Name)``: the name in the parentheses that follow."""
    m = _PARENTHESIZED.match(text, end)
    if m and _name_like(m.group(1).strip()) and m.group(1).strip()[0].isupper():
        a = m.start(1) + len(m.group(1)) - len(m.group(1).lstrip())
        return a, a + len(m.group(1).strip())
    return None


_CLOSING = re.compile(
    r"[ \t]*--[ \t]*|[ \t>*#-]*(?:Signed-off-by|Co-authored-by|Co-developed-by)[ \t]*:[ \t]*",
    re.IGNORECASE,
)
_OPENS = re.compile(
    r"[ \t>*#-]*(?:Authors?|Written by|Original-author|Creator|From|By)\b[ \t]*:?[ \t]*"
    r"(?:.*(?:[,;&]|\band)\s*)?",  # the names before it on a list's line
    re.IGNORECASE,
)


# Debian's entry of many hands: ``  [ Name ]`` (or ``[ Name <mail> ]``) alone on its line
# heads the bullets that person wrote, up to the next such line or the entry's end. Clean
# text joins the bullets onto its line (``[ Name ] * Fix …``); raw text has them below.
_HEAD_OPEN = re.compile(r"[ \t]*\[[ \t]*")
_HEAD_CLOSE = re.compile(
    r"[ \t]*(?:<[^<>\n]*>[ \t]*)?\](?=[ \t]*[*+-][ \t]|[ \t]*\n[ \t]*[*+-][ \t])"
)
_BLOCK_HEAD = re.compile(r"(?m)^[ \t]*\[[ \t]*([^\[\]\n<>]{3,80}?)[ \t]*\]")


def _heads_block(text: str, a: int, b: int) -> bool:
    """Whether the name at ``a:b`` is a block's head: in brackets alone on its line, a
    bullet after it."""
    line_start = text.rfind("\n", 0, a) + 1
    return bool(_HEAD_OPEN.fullmatch(text, line_start, a) and _HEAD_CLOSE.match(text, b))


def _block_heads(text: str, taken: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The names that head a block of a Debian entry (``[ Johannes Schauer Marin
    Rodrigues ]``): two to five words, each capitalized (a particle too) or all in lower
    case ("tony mancill"), no digits, no path ("[debian/rules]"), no label ("[smcv: …]")."""
    for m in _BLOCK_HEAD.finditer(text):
        a, b = m.span(1)
        name = m.group(1)
        words = name.split()
        bare = [w.strip("()") for w in words]
        if (
            2 <= len(words) <= 5
            and "/" not in name
            and _name_like(name)
            and (all(map(_capitalized, bare)) and name[0].isupper() or name.islower())
            and not any(x < b and a < y for x, y in taken)
            and _heads_block(text, a, b)
        ):
            yield a, b


def _signs(text: str, at: int, end: int) -> str | None:
    """How the name at ``at:end`` signs its text, by what opens its line: ``closes`` what
    is above it (Debian's ``--`` line, ``Signed-off-by:``, ``Co-authored-by:``), ``opens``
    what follows (``Author:``, ``Authors: A, B``, ``Written by``, ``From:``, a GNU
    ChangeLog's dated entry line, a Debian block's ``[ Name ]``); None when it is only
    named (thanks, ``Reviewed-by:``, running text)."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    if _heads_block(text, at, end):
        return "opens"
    if _CLOSING.fullmatch(line):
        return "closes"
    if _GNU_ENTRY.fullmatch(line):  # "2021-03-04  Ann Lee  <ann@…>" opens a GNU entry
        return "opens"
    if (o := _OPENS.fullmatch(line)) and (":" in o.group() or "by" in o.group().lower()):
        return "opens"
    return None


# Clean text drops a line's indentation and runs of spaces: `` -- Name <…>  Fri`` reads
# ``-- Name <…> Fri`` there.
_DEBIAN_CLOSING = re.compile(r"(?m)^[ \t]*--[ \t]+(\S[^<>\n]*?) <[^<>\n]*>[ \t]+\S")
_SEPARATORS = re.compile(r"\s*(?:,|;|&|\band\b)\s*")


def _labelled_names(text: str, taken: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Names after a byline label on a line that holds no address: ``Author: Ada
    Lovelace``, ``Authors: A. Smith, B. Jones and C. Wu``; each of two words or more,
    capitalized."""
    for label in _LABEL.finditer(text):
        end = text.find("\n", label.end())
        end = len(text) if end < 0 else end
        said = label.group().strip(" \t>*#-").lower()
        if ":" not in said and not said.endswith(" by"):
            continue  # "By default, …", "From Debian …": a label names people with a colon
        if "@" in text[label.end() : end] or any(a < end and label.end() < b for a, b in taken):
            continue
        if _gnu_item(text, text.rfind("\n", 0, label.start()) + 1):
            continue  # "* AUTHORS: Add Ann Lee.": a file and its change, no byline
        at = label.end()
        if text[at:end].split(None, 1)[:1] and text[at:end].split()[0].lower() in _OPENERS:
            continue  # "MAINTAINERS: Remove Per Bothner, …": a sentence, not a byline
        for part in _SEPARATORS.split(text[at:end]):
            a = text.find(part, at) if part else -1
            if a >= 0:
                at = a + len(part)
                name = part.strip()
                words = name.split()
                if (
                    2 <= len(words) <= 5
                    and _name_like(name)
                    and all(_capitalized(w) for w in words)
                    and words[0][0].isupper()
                    and _person_like(text, a, a + len(name))
                ):
                    yield a, a + len(name)


_BIB_FIELD = re.compile(r"(?im)^[ \t]*(?:author|editor)[ \t]*=[ \t]*([{\"])")
_BIB_AND = re.compile(r"\s+and\s+")


def _bibtex_names(text: str) -> Iterator[tuple[int, int, str]]:
    """The people of a BibTeX record's ``author`` and ``editor`` fields, each as written
    (``Lovelace, Ada``) with the name as read (``Ada Lovelace``); a name with TeX markup in
    it (``{\\"O}zg{\\"u}r``) or ``others`` is left out."""
    for field in _BIB_FIELD.finditer(text):
        at = end = field.end()
        close, depth = ("}" if field.group(1) == "{" else '"'), 0
        while end < len(text) and not (depth == 0 and text[end] == close):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        for part in _BIB_AND.split(text[at:end]):
            a = text.find(part, at)
            at = a + len(part)
            written = part.strip()
            if not written or written.lower() == "others" or any(c in written for c in "{}\\"):
                continue
            last, comma, first = written.partition(",")
            name = " ".join(f"{first} {last}".split()) if comma else " ".join(written.split())
            if _name_like(name) and name[0].isupper() and " " in name:
                a += len(part) - len(part.lstrip())
                yield a, a + len(written), name


def people(text: str) -> list[Mention]:
    """The unit's addresses, and the names that sign with them or follow a byline label."""
    found: list[Mention] = []
    spans: list[tuple[int, int]] = []
    for m in EMAIL.finditer(text) if "@" in text else ():  # one unit in fifteen has an "@"
        address = m.group(1)
        found.append(
            Mention(m.start(1), m.end(1), "EMAIL", address, address.lower(),
                    key=f"email:{address.lower()}")
        )  # fmt: skip
        name = _name_before(text, m.start(1)) or _name_after(text, m.end(1))
        if name and _person_like(text, *name):
            spans.append(name)
    for m in _DEBIAN_CLOSING.finditer(text) if "--" in text else ():  # with a web address
        if (
            _name_like(m.group(1))
            and _person_like(text, *m.span(1))
            and not any(a <= m.start(1) < b for a, b in spans)
        ):
            spans.append(m.span(1))
    if "[" in text:
        spans += list(_block_heads(text, spans))
    for a, b in [*spans, *_labelled_names(text, spans)]:
        written = text[a:b]
        key = f"person:{slug(' '.join(written.split()))}"
        found.append(Mention(a, b, "PERSON", written, " ".join(written.split()), 0.95, key))
        if role := _signs(text, a, b):
            found.append(Mention(a, b, "AUTHOR", written, role, 0.95, key))
    for a, b, name in _bibtex_names(text) if "=" in text else ():  # a cited work's people
        found.append(Mention(a, b, "PERSON", text[a:b], name, 0.95, f"person:{slug(name)}"))
    return sorted(set(found), key=lambda m: (m.start, m.end, m.type))


class BylineRecognizer:
    """E-mail addresses and the people who sign with them; filters (precise by shape)."""

    # 10: a GNU body's trailers sign (only its "* FILE:" items do not), and one word after
    #     a byline label mid-line ("commit … Author: Peter <…>")
    # 9: no name in a GNU entry's body ("* MAINTAINERS: Add a@…"), none ending in a legal
    #    form ("Systems, Inc <…>") or ending a token ("GNU/Linux <…>"); one word in running
    #    text or at a bare line's opening names nobody, unless it signs
    info = RecognizerInfo(name="bylines", version="10", types=("EMAIL", "PERSON", "AUTHOR"))

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        return [people(t) if "@" in t or ":" in t or "[" in t else [] for t in texts]
