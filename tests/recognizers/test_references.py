"""Reference-list entries: BibTeX records and written-out lines, and the agreement check
that keeps a Crossref match only when its title and year fit the string."""

from __future__ import annotations

from kbx.linking.works import agrees
from kbx.recognizers.base import check_spans
from kbx.recognizers.references import ReferenceRecognizer, looks_like_reference

BIB = """@article{klein2009,
  title = {{seL4}: Formal Verification of an {OS} Kernel},
  author = {Klein, Gerwin and Elphinstone, Kevin},
  booktitle = {SOSP},
  year = {2009},
  doi = {10.1145/1629575.1629596}
}

@comment{ignored}
@misc{vaswani2017, title = "Attention Is All You Need", author = {Vaswani, Ashish}, year = 2017}
"""

LIST = """Related work

We follow Vaswani et al. (2017) in spirit, not in detail.

References

Vaswani, A., Shazeer, N., et al. (2017). Attention is all you need. In NeurIPS.
[2] G. Klein and K. Elphinstone. seL4: an OS kernel. SOSP 2009. doi:10.1145/1629575.1629596.
Thanks to everyone who helped in 2019.
"""


def test_bibtex_records_are_entries_and_a_doi_field_is_their_key():
    (found,) = ReferenceRecognizer().recognize([BIB])
    check_spans(BIB, found, "references")
    assert [m.key for m in found] == ["doi:10.1145/1629575.1629596", None]
    assert found[0].value == (
        "Klein, Gerwin and Elphinstone, Kevin. 2009. "
        "seL4: Formal Verification of an OS Kernel. SOSP"
    )
    assert found[1].value == "Vaswani, Ashish. 2017. Attention Is All You Need"


def test_lines_of_a_reference_list_are_entries_and_prose_is_not():
    (found,) = ReferenceRecognizer().recognize([LIST])
    check_spans(LIST, found, "references")
    assert [m.text[:12] for m in found] == ["Vaswani, A.,", "G. Klein and"]  # marker dropped
    assert [m.key for m in found] == [None, "doi:10.1145/1629575.1629596"]
    assert not looks_like_reference("Thanks to everyone who helped in 2019.")


def test_a_match_must_agree_in_title_and_year():
    ref = "Vaswani, A., et al. (2017). Attention is all you need. In NeurIPS."
    assert agrees(ref, "Attention Is All You Need", 2017)[0]
    assert agrees(ref, "Attention is all you need", 2018)[0]  # online first, print later
    assert agrees(ref, "Attention Is All You Need", 2012) == (False, "the year does not agree")
    assert agrees(ref, "Attention mechanisms in networks", 2017) == (
        False,
        "the title does not agree",
    )
    assert agrees(ref, None, 2017) == (False, "the candidate has no title")


def test_a_unit_under_a_references_heading_needs_no_author_pattern():
    text = "Abu (2013). Biodiversity image retrieval framework for monogeneans. Syst Biodiv."
    r = ReferenceRecognizer()
    assert r.recognize([text]) == [[]]  # a surname alone is no author pattern
    (found,) = r.recognize([text], headings=[("A paper", "References")])
    assert [m.text for m in found] == [text]


def test_a_numbered_rfc_references_heading_counts_too():
    text = "Abu (2013). Biodiversity image retrieval framework for monogeneans. Syst Biodiv."
    r = ReferenceRecognizer()
    (found,) = r.recognize([text], headings=[("RFC 9999", "12.1.  Normative References")])
    assert [m.text for m in found] == [text]
    (none,) = r.recognize([text], headings=[("RFC 9999", "12.2. On references in prose")])
    assert none == []
