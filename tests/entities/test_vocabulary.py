"""A model's name that is technical vocabulary is not confirmed by repetition: one made only
of words the corpus writes as code, or, in a document that shows code, anything but a
person's full name."""

from __future__ import annotations

import re

import duckdb
import pytest

from kbx.entities.vocabulary import code_words, words
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

ORGS = re.compile(r"\b(?:TLS|DNS|IBM|Acme Corp|Zorbo|Node Streams)\b")
PEOPLE = re.compile(r"\b(?:Ada Lovelace|Lin)\b")  # "Ada" alone would be Ada Lovelace


class Names:
    """Finds a few names as ORG and PERSON, the way a model's names arrive (no key,
    ``names``)."""

    info = RecognizerInfo(name="names", version="1", types=("ORG", "PERSON"), names=True)

    def recognize(self, texts):
        return [
            [Mention(*m.span(), "ORG", m.group()) for m in ORGS.finditer(t)]
            + [Mention(*m.span(), "PERSON", m.group()) for m in PEOPLE.finditer(t)]
            for t in texts
        ]


DOCS = {
    "net.md": "# Net\n\nWe say TLS is fast; TLS again.\n\nNode Streams wrap it: Node Streams, "
    "always.\n",
    "dns.md": "# Lookups\n\nThe dns.lookup call asks DNS. DNS answers.\n",
    "news.md": "# News\n\nAcme Corp bought Zorbo. Acme Corp said Zorbo grows. IBM, of ibm.com, and "
    "IBM again.\n",
    "code.md": "# Code\n\nCall `tls.connect()`, or read `stream.pipe` in the node docs.\n",
    "shown.md": "# Shown\n\nAcme Corp wrote `run()`; Acme Corp ships. Ada Lovelace and Ada "
    "Lovelace again; Lin, and Lin.\n",
}


def _grades(root):
    con = duckdb.connect(str(Index.for_root(root).db), read_only=True)
    try:
        rows = con.execute(
            "SELECT d.path, l.entity_id, bool_or(l.filter) FROM links l JOIN documents d "
            "USING (doc_id) WHERE starts_with(l.entity_id, 'name:') GROUP BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    return {(p, e): f for p, e, f in rows}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("vocabulary")
    for name, text in DOCS.items():
        (root / name).write_text(text)
    index(root, registry=Registry([Names()]))
    return root


def test_words_the_corpus_writes_as_code(corpus):
    con = duckdb.connect(str(Index.for_root(corpus).db), read_only=True)
    try:
        wanted = {"tls", "dns", "ibm", "acme", "corp", "zorbo", "node", "streams", "stream"}
        found = code_words(con, wanted)
    finally:
        con.close()
    # inline code and identifiers in the text count; a host name and prose do not
    assert found == {"tls", "dns", "stream"}
    assert words("U.S.") == [] and words("Node.js Foundation") == ["node", "js", "foundation"]
    grades = _grades(corpus)
    assert grades[("net.md", "name:org:tls")] is False  # named twice, but written as code
    assert grades[("dns.md", "name:org:dns")] is False
    assert grades[("net.md", "name:org:node-streams")] is True  # "streams" is not "stream"
    assert grades[("news.md", "name:org:acme-corp")] is True
    assert grades[("news.md", "name:org:zorbo")] is True
    assert grades[("news.md", "name:org:ibm")] is True  # ibm.com: no evidence against IBM


def test_in_a_document_that_shows_code_only_a_persons_full_name_is_confirmed(corpus):
    grades = _grades(corpus)
    assert grades[("shown.md", "name:person:ada-lovelace")] is True
    assert grades[("shown.md", "name:org:acme-corp")] is False  # named twice, beside code
    assert grades[("shown.md", "name:person:lin")] is False  # one word
    assert grades[("news.md", "name:org:acme-corp")] is True  # the same name, no code there
