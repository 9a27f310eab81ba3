"""Identifiers: validated by check digit, exact spans, normalized values; no false friends."""

from __future__ import annotations

import pytest

from kbx.recognizers.identifiers import IdentifierRecognizer


def _found(text: str) -> list[tuple[str, str, str]]:
    (ms,) = IdentifierRecognizer().recognize([text])
    for m in ms:
        assert text[m.start : m.end] == m.text
    return [(m.type, m.text, m.value) for m in ms]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "see doi:10.1145/1629575.1629596.",
            ("DOI", "10.1145/1629575.1629596", "10.1145/1629575.1629596"),
        ),
        ("(https://doi.org/10.17487/RFC8446)", ("DOI", "10.17487/RFC8446", "10.17487/rfc8446")),
        ("[@doi:10.1093/bib/bbx044]", ("DOI", "10.1093/bib/bbx044", "10.1093/bib/bbx044")),
        (
            "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI3>3.0.CO;2-O",
            ("DOI", "10.1002/(SICI)1097-4571(199806)49:8", "10.1002/(sici)1097-4571(199806)49:8"),
        ),
        ("ISBN 978-0-262-03384-8", ("ISBN", "978-0-262-03384-8", "9780262033848")),
        ("isbn = {0-201-63361-2},", ("ISBN", "0-201-63361-2", "9780201633610")),
        ("printed as 978-1-4493-7332-0 in 2013", ("ISBN", "978-1-4493-7332-0", "9781449373320")),
        ("ISSN: 0028-0836", ("ISSN", "0028-0836", "0028-0836")),
        (
            "https://orcid.org/0000-0002-1825-0097",
            ("ORCID", "0000-0002-1825-0097", "0000-0002-1825-0097"),
        ),
        ("arXiv:2005.14165v4", ("ARXIV", "2005.14165v4", "2005.14165")),
        ("see hep-th/9901001 for", ("ARXIV", "hep-th/9901001", "hep-th/9901001")),
    ],
)
def test_identifiers_are_found_exactly(text, expected):
    assert expected in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "ISBN 978-0-262-03384-9",  # wrong check digit
        "ISSN 0028-0837",
        "orcid 0000-0000-0000-0000",  # the placeholder fails its checksum
        "call 0262033848 now",  # a valid ISBN-10 checksum, but no label
        "the ratio was 1706.03762 overall",  # a number shaped like arXiv, no label
        "prices 2019-1234 and 4321-8765",
    ],
)
def test_look_alikes_are_not_mentions(text):
    assert _found(text) == []


@pytest.mark.parametrize(
    ("text", "written", "value"),
    [
        (
            r"doi = {10.1007/978-3-319-525-1\_2},",
            r"10.1007/978-3-319-525-1\_2",
            "10.1007/978-3-319-525-1_2",
        ),
        ("https://doi.org/10.1145/3442188.3445922/eprint/abc).", "10.1145/3442188.3445922", None),
        ("onlinelibrary.wiley.com/doi/epdf/10.1002/anie.2020/full", "10.1002/anie.2020", None),
        ("a DOI named 10.1000/full stays whole", "10.1000/full", None),
    ],
)
def test_a_doi_keeps_its_escapes_and_drops_publisher_paths(text, written, value):
    (m,) = [m for m in IdentifierRecognizer().recognize([text])[0] if m.type == "DOI"]
    assert (m.text, m.value) == (written, value or written.lower())
    assert text[m.start : m.end] == written  # the span is exactly what is written


def _wide(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in s)  # full-width


def _arabic(s: str) -> str:
    return "".join(chr(ord(c) - 48 + 0x660) if c.isdigit() else c for c in s)  # Arabic-Indic


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # what the cheap hints before each scan could wrongly drop (``\d`` is any digit)
        (f"ORCID {_wide('0000-0002-1825-0097')}", ("ORCID", _wide("0000-0002-1825-0097"))),
        (f"ORCID {_arabic('0000-0002-1825-0097')}", ("ORCID", _arabic("0000-0002-1825-0097"))),
        (f"arXiv:{_wide('2101.00001')}", ("ARXIV", _wide("2101.00001"))),
        (f"arXiv:{_arabic('1501.00001')}", ("ARXIV", _arabic("1501.00001"))),
        (f"hep-th/{_wide('9901001')}", ("ARXIV", f"hep-th/{_wide('9901001')}")),
        (f"ISSN {_wide('0317-8471')}", ("ISSN", _wide("0317-8471"))),
        (f"ISBN {_wide('978-3-16-148410-0')}", ("ISBN", _wide("978-3-16-148410-0"))),
        (f"doi 10.{_wide('1000')}/abc", ("DOI", f"10.{_wide('1000')}/abc")),
        ("\u0131SBN 0-306-40615-2", ("ISBN", "0-306-40615-2")),  # (?i) matches a dotless i
        ("I\u017fSN 0317-8471", ("ISSN", "0317-8471")),  # and the long s
        ("\u0130SSN 0317-8471", ("ISSN", "0317-8471")),
    ],
)
def test_identifiers_in_other_digits_and_letters_are_found(text, expected):
    assert expected in [(t, written) for t, written, _ in _found(text)]
