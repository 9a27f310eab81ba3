"""A name made only of words the corpus writes as code is not confirmed by repetition."""

from __future__ import annotations

import re

import duckdb

from kbx.entities.vocabulary import code_words, words
from kbx.indexing.ingest import index
from kbx.recognizers.base import Mention, RecognizerInfo
from kbx.recognizers.registry import Registry
from kbx.store.db import Index

ORGS = re.compile(r"\b(?:TLS|DNS|IBM|Acme Corp|Zorbo|Node Streams)\b")


class Orgs:
    """Finds a few names as ORG, the way a model's names arrive (no key, ``names``)."""

    info = RecognizerInfo(name="orgs", version="1", types=("ORG",), names=True)

    def recognize(self, texts):
        return [[Mention(*m.span(), "ORG", m.group()) for m in ORGS.finditer(t)] for t in texts]


DOCS = {
    "net.md": "# Net\n\nCall `tls.connect()` for TLS. TLS is fast; TLS again.\n\n"
    "Node Streams wrap it: Node Streams everywhere.\n",
    "dns.md": "# Lookups\n\nThe dns.lookup call asks DNS. DNS answers.\n",
    "news.md": "# News\n\nAcme Corp bought Zorbo. Acme Corp said Zorbo grows. IBM, of ibm.com, and "
    "IBM again.\n",
    "more.md": "# More\n\nRead `stream.pipe` in the node docs.\n",
}


def test_words_the_corpus_writes_as_code(tmp_path):
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    index(tmp_path, registry=Registry([Orgs()]))
    con = duckdb.connect(str(Index.for_root(tmp_path).db), read_only=True)
    try:
        wanted = {"tls", "dns", "ibm", "acme", "corp", "zorbo", "node", "streams", "stream"}
        found = code_words(con, wanted)
        grades = dict(
            con.execute(
                "SELECT entity_id, bool_or(filter) FROM links WHERE starts_with(entity_id, "
                "'name:') GROUP BY 1"
            ).fetchall()
        )
    finally:
        con.close()
    # inline code and identifiers in the text count; a host name and prose do not
    assert found == {"tls", "dns", "stream"}
    assert words("U.S.") == [] and words("Node.js Foundation") == ["node", "js", "foundation"]
    assert grades == {
        "name:org:tls": False,  # named three times, but written as code
        "name:org:dns": False,
        "name:org:node-streams": True,  # "node" is not code here, "streams" is not "stream"
        "name:org:acme-corp": True,
        "name:org:zorbo": True,
        "name:org:ibm": True,  # ibm.com is a host name: no evidence against IBM
    }
