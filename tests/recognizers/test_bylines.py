"""People where they sign: addresses, and the names beside them or after a byline label."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kbx.recognizers.bylines import BylineRecognizer, people


def _found(text: str) -> set[tuple[str, str, str | None]]:
    return {(m.type, m.text, m.key) for m in people(text)}


def test_a_debian_closing_line_gives_its_signer_and_address():
    line = " -- Jordi Mallach <Jordi@Debian.org>  Wed, 30 Nov 2022 18:22:03 +0100"
    assert _found(line) == {
        ("EMAIL", "Jordi@Debian.org", "email:jordi@debian.org"),
        ("PERSON", "Jordi Mallach", "person:jordi-mallach"),
        ("AUTHOR", "Jordi Mallach", "person:jordi-mallach"),  # it signs the entry above
    }
    for name in ("intrigeri", "Marco Trevisan (Treviño)", "Laszlo Boszormenyi (GCS)",
                 "Dr. Tobias Quathamer", "أحمد المحمودي (Ahmed El-Mahmoudy)"):  # fmt: skip
        assert ("PERSON", name) in {(t, x) for t, x, _ in _found(f" -- {name} <a@b.org>  Mon")}


def test_names_beside_an_address_in_running_text_and_quotes():
    assert {x for t, x, _ in _found("  * Fix (thanks to Steve Langasek <s@u.com>).")} == {
        "Steve Langasek",
        "s@u.com",
    }
    assert ("PERSON", "David Suárez") in {
        (t, x) for t, x, _ in _found("  * Set Maintainer to David Suárez <d@x.org>, to match")
    }
    assert ("PERSON", "Ada Lovelace") in {(t, x) for t, x, _ in _found('"Ada Lovelace" <a@x.io>')}
    assert ("PERSON", "Ada Lovelace") in {(t, x) for t, x, _ in _found("a@x.io (Ada Lovelace)")}
    trailer = "Fix it.\n\nSigned-off-by: Linus Torvalds <torvalds@linux-foundation.org>"
    assert ("PERSON", "Linus Torvalds") in {(t, x) for t, x, _ in _found(trailer)}


def test_byline_labels_without_an_address():
    found = _found("Authors: Ada Lovelace, Charles Babbage and Mary Somerville\nBody text.")
    assert {x for t, x, _ in found if t == "PERSON"} == {
        "Ada Lovelace",
        "Charles Babbage",
        "Mary Somerville",
    }


def test_what_names_nobody():
    assert _found("Contact us at info@example.org for help.") == {
        ("EMAIL", "info@example.org", "email:info@example.org")
    }
    assert _found("clone git@github.com:org/repo.git or https://user@host.example.com/x") == set()
    assert _found("  * Bump to 1.2 (closes: #1017424).  BTS <submit@bugs.debian.org>") == {
        ("EMAIL", "submit@bugs.debian.org", "email:submit@bugs.debian.org")
    }


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('Aa Éé-<>()"\n:@.x_1 Signed-off-by'), max_size=80))
def test_spans_are_exact_on_any_text(text):
    (found,) = BylineRecognizer().recognize([text])
    for m in found:
        assert text[m.start : m.end] == m.text and m.key and m.type in ("EMAIL", "PERSON")


def test_a_label_without_a_colon_names_nobody():
    assert _found("From Debian Policy\nBy Default Settings\n") == set()
    assert {x for t, x, _ in _found("Written by Ada Lovelace\n")} == {"Ada Lovelace"}


def _roles(text: str) -> dict[str, str]:
    return {m.text: m.value for m in people(text) if m.type == "AUTHOR"}


def test_who_signs_and_who_is_only_named():
    text = (
        "Fix the parser.\n\nReviewed-by: Ann Lee <ann@x.org>\n"
        "Signed-off-by: Bob Stone <bob@x.org>\n  * Thanks to Cy Young <cy@x.org>.\n"
        "  [ Di Moss <di@x.org> ]\n-- Web Team <https://example.org/team> Mon, 1 Jan 2024\n"
    )
    assert _roles(text) == {"Bob Stone": "closes", "Web Team": "closes"}
    assert {m.text for m in people(text) if m.type == "PERSON"} == {
        "Ann Lee", "Bob Stone", "Cy Young", "Di Moss", "Web Team"
    }  # fmt: skip
    assert _roles("Authors: Ada Lovelace and Mary Somerville\n\nBody.") == {
        "Ada Lovelace": "opens",
        "Mary Somerville": "opens",
    }
    assert _roles("2021-03-04  Ann Lee  <ann@example.org>\n\n\t* foo.c: Fix.") == {
        "Ann Lee": "opens"  # a GNU ChangeLog entry's first line
    }


def test_the_people_of_a_bibtex_record():
    record = (
        "@article{x,\n  author = {Lovelace, Ada and Charles Babbage and {\\\"O}zg{\\\"u}r Kaya"
        " and others},\n  editor = \"Mary {S}omerville and Ann Lee\",\n  title = {On Engines},\n}"
    )
    found = {(m.text, m.value, m.key) for m in people(record) if m.type == "PERSON"}
    assert found == {
        ("Lovelace, Ada", "Ada Lovelace", "person:ada-lovelace"),  # as read, keyed by it
        ("Charles Babbage", "Charles Babbage", "person:charles-babbage"),
        ("Ann Lee", "Ann Lee", "person:ann-lee"),
    }  # TeX markup in a name and "others" are left out; a cited work's people sign nothing
    assert _roles(record) == {}


def test_a_lines_opening_verb_or_label_is_no_part_of_a_name():
    text = "\t* MAINTAINERS: Remove Dan Hipschman <dan@x.org>.\n\tThanks Ann Lee <ann@x.org>\n"
    assert {m.text for m in people(text) if m.type == "PERSON"} == {"Dan Hipschman", "Ann Lee"}
    assert {m.text for m in people("MAINTAINERS <list@x.org>") if m.type == "PERSON"} == set()
    listed = "\t* MAINTAINERS: Remove Per Bothner, Andrew Haley, and Tom Tromey from\n"
    assert {m.text for m in people(listed) if m.type == "PERSON"} == set()
    assert {m.text for m in people("  by Adrian Schroeter, SuSE AG)\n")} == set()


def test_a_debian_blocks_head_opens_the_bullets_below_it():
    raw = "  [ Johannes Schauer Marin Rodrigues ]\n  * Add a test.\n\n  [ tony mancill ]\n  * x\n"
    clean = "pkg (1) unstable; urgency=medium\n\n[ Pino Toscano ] * Fix hurd.\n\n-- A B <a@b.org>"
    assert _roles(raw) == {"Johannes Schauer Marin Rodrigues": "opens", "tony mancill": "opens"}
    assert _roles(clean) == {"Pino Toscano": "opens", "A B": "closes"}
    assert _roles("  [ Matthias Klose <doko@ubuntu.com> ]\n  * x\n") == {"Matthias Klose": "opens"}
    for not_a_head in (
        "  [ Unreleased ]\n  * x\n",  # one word
        "  [debian/control, debian/rules]\n  * x\n",  # paths
        "  [smcv: Adjust commit message]\n  * x\n",  # a label
        "  [From upstream 1967c04c0]\n  * x\n",  # digits
        "  [ Pino Toscano ]\nNo bullet follows.\n",  # not a changelog's block
        "See [ Pino Toscano ] * x\n",  # not alone on its line
    ):
        assert not [m for m in people(not_a_head) if m.type == "PERSON"], not_a_head


def _persons(text: str) -> set[str]:
    return {m.text for m in people(text) if m.type == "PERSON"}


# What QA found on packages of /usr/share/doc never tuned on, raw and as clean text reads it.
GNU_ENTRIES = (
    "2021-03-04  Jane Roe  <jane@example.org>\n\n"
    "\t* MAINTAINERS: Add aph@example.com as Java maintainer.\n"
    "\t* configure.ac: Fix the build on Linux.\n\n"
    "2021-02-01  Jane Roe  <jane@example.org>\n\n"
    "\t* MAINTAINERS: Change palmer@example.com to palmer@example.net.\n"
)
COPYRIGHT = (
    "Files: *\nCopyright: 2008 BOSS GNU/Linux <boss@example.in>\n"
    "           2003 Cluster File Systems, Inc <info@example.com>\nLicense: GPL-2\n"
)


def test_a_gnu_entrys_body_is_its_change_not_a_signature():
    clean = (
        "2021-03-04 Jane Roe <jane@example.org>\n\n* MAINTAINERS: Add aph@example.com as Java"
        " maintainer. * configure.ac: Fix the build on Linux."
    )
    for text in (GNU_ENTRIES, clean):
        assert _persons(text) == {"Jane Roe"}  # not "Add", not "Change"
        assert _roles(text) == {"Jane Roe": "opens"}  # the header signs
    no_header = "\t* MAINTAINERS: Change palmer@example.com to palmer@example.net.\n"
    assert _persons(no_header) == set()  # the item's shape says it is a change
    assert _persons("\tChange palmer@example.com to palmer@example.net.\n") == set()
    assert _persons("\t* AUTHORS: Add Ann Lee.\n") == set()  # a file, no byline label
    # a person the change names is still found, two words in running text; a header's one
    assert _persons(GNU_ENTRIES + "\t* x.c: Patch from Ann Lee <ann@x.org>.\n") == {
        "Jane Roe", "Ann Lee"
    }  # fmt: skip
    assert _roles("2020-01-01  Jonas  <jonas@x.org>\n\n\t* x.c: Fix.\n") == {"Jonas": "opens"}
    # a byline label in a list that is no GNU entry still signs, and a trailer in a body
    assert _persons("* Author: Ada Lovelace <ada@x.io>\n") == {"Ada Lovelace"}
    trailer = "2023-05-01  Weblate  <n@weblate.org>\n\n\tCo-authored-by: simmon <s@x.com>\n"
    assert _roles(trailer) == {"Weblate": "opens", "simmon": "closes"}


def test_a_company_or_a_tokens_tail_is_no_person():
    clean = " ".join(COPYRIGHT.split("\n", 1)[1].split())
    for text in (COPYRIGHT, clean):
        assert _persons(text) == set()  # not "Linux", not "Inc"
    for org in ("Acme Widgets Ltd", "Foo Bar GmbH", "Example Corp."):
        assert _persons(f"Copyright 2001 {org} <info@x.com>\n") == set(), org
        assert _persons(f" -- {org} <info@x.com>  Mon, 1 Jan 2024\n") == set(), org
    assert _persons("Copyright 2003 Jane Roe <jane@example.org>\n") == {"Jane Roe"}
    assert _persons("Copyright: 2003 Jane Roe <jane@example.org>\n") == {"Jane Roe"}
    assert _persons("see /usr/share/Linux <x@y.org>\n") == set()


def test_one_word_names_a_person_only_where_it_signs():
    assert _persons("  * Fix it, thanks to Linux <l@x.org>.\n") == set()  # running text
    assert _persons("Add <a@x.org> to the list\n") == set()  # a line's verb
    assert _persons("commit 0e21b5a Author: Peter <pva@x.org> Date: Sun") == {"Peter"}  # a label
    for signing in (" -- intrigeri <i@x.org>  Mon, 1 Jan 2024", "Signed-off-by: jonas <j@x.org>",
                    '"Jonas" <j@x.org>', "  [ Jonas <j@x.org> ]", "Jonas <j@x.org>"):  # fmt: skip
        assert len(_persons(signing)) == 1, signing
    assert _persons(" -- Debian Janitor <janitor@jelmer.uk>  Mon, 1 Jan 2024") == {"Debian Janitor"}
