"""A document's relevance as a prior for its passages (search/prior.py, issue 41)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search import bm25, prior
from kbx.search.bm25 import rank
from kbx.search.prior import docs_of, rank_with_prior, with_prior
from kbx.search.scoring import BM25Params
from kbx.search.search import search
from kbx.search.state import index_state, mapped_passages
from kbx.store.db import Index
from kbx.store.postings import analyzer_from


def test_a_files_further_passages_pass_other_files_weaker_best():
    rows = [(1, 10.0, 2), (5, 4.0, 1), (2, 3.0, 1), (3, 3.0, 1), (4, 1.0, 1)]
    docs = {1: [100], 2: [100], 3: [300], 4: [300], 5: [200]}
    got = with_prior(rows, docs, 1.0)
    # file 100's second passage (3 + 10) passes file 200's best (4 + 4)
    assert [u for u, _, _ in got] == [1, 2, 5, 3, 4]
    assert got[0][1] == 20.0 and got[1][1] == 13.0
    # the files' order by their best passage is BM25's
    firsts = list(dict.fromkeys(docs[u][0] for u, _, _ in got))
    assert firsts == [100, 200, 300]
    assert with_prior(rows, docs, 1.0, limit=2) == got[:2]


def test_no_weight_is_bm25s_order_and_ties_fall_to_the_unit_id():
    rows = [(7, 2.0, 1), (3, 2.0, 1), (9, 1.0, 1)]
    assert with_prior(rows, {7: [1], 3: [2], 9: [1]}, 0.0) == rows
    # 7 and 3 tie after the prior too (each is its file's best): the lower id first
    assert [u for u, _, _ in with_prior(rows, {7: [1], 3: [2], 9: [1]}, 0.5)] == [3, 7, 9]


def test_a_passage_in_two_files_takes_the_better_file():
    rows = [(1, 9.0, 1), (2, 5.0, 1), (3, 2.0, 1)]
    got = dict((u, s) for u, s, _ in with_prior(rows, {1: [10], 2: [20], 3: [20, 10]}, 1.0))
    assert got[3] == 2.0 + 9.0  # file 10's best, not file 20's


@pytest.mark.parametrize("seed", range(40))
def test_a_pool_gives_what_ranking_every_unit_gives(monkeypatch, seed):
    rnd = random.Random(seed)
    monkeypatch.setattr(prior, "POOL", rnd.choice([1, 2, 5, 10]))
    n = rnd.randint(1, 60)
    scores = [round(rnd.uniform(0.1, 10), rnd.choice([0, 1, 3])) for _ in range(n)]  # ties
    rows = sorted(((u, s, 1) for u, s in enumerate(scores)), key=lambda r: (-r[1], r[0]))
    docs = {u: rnd.sample(range(8), rnd.choice([1, 1, 1, 2])) for u in range(n)}
    asked = []

    def ranker(limit):
        asked.append(limit)
        return rows[:limit], len(rows)

    depth, weight = rnd.choice([1, 3, 8]), rnd.choice([0.5, 1.0, 2.0])
    got, total = rank_with_prior(ranker, lambda us: {u: docs[u] for u in us}, weight, depth)
    assert total == n and got == with_prior(rows, docs, weight, depth)
    assert asked[0] is not None  # a pool first


def test_no_query_ranks_more_than_the_widest_pool(monkeypatch):
    monkeypatch.setattr(prior, "POOL", 2)
    monkeypatch.setattr(prior, "WIDEST", 5)
    rows = [(0, 20.0, 1)] + [(u, 10.0 - u * 0.01, 1) for u in range(1, 50)]  # no proof
    asked = []

    def ranker(limit):
        asked.append(limit)
        return rows[:limit], len(rows)

    got, total = rank_with_prior(ranker, lambda us: {u: [u] for u in us}, 1.0, 3)
    assert total == 50 and asked == [8 * 3, 5] and len(got) == 3


LONG = """# Handbook

What the keepers of the park read first.

## Care

Quokka and zebra care: quokka feeding, zebra feeding, and a quokka or zebra at night.

## Transport

A wombat crate must be ventilated on every side during transport.
"""

OTHER = """# Notes

A wombat sleeps by day. Wombat burrows are long.
"""


@pytest.fixture
def zoo(tmp_path) -> Index:
    root = tmp_path / "zoo"
    root.mkdir()
    (root / "handbook.md").write_text(LONG)
    (root / "wombats.md").write_text(OTHER)
    index(root, db=tmp_path / "zoo.duckdb", workers=1, registry=Registry([]))
    return Index.for_root(root, tmp_path / "zoo.duckdb")


def _order(idx: Index, params: BM25Params) -> list[tuple[str, str]]:
    hits = search(idx, "quokka zebra wombat", k=3, exact=0, params=params).hits
    return [(h.path, h.heading_path[-1]) for h in hits]


def test_search_lifts_the_right_files_answer_over_another_files_match(zoo):
    plain = _order(zoo, BM25Params(doc_prior=0.0))
    lifted = _order(zoo, BM25Params())
    transport = ("handbook.md", "Transport")
    assert plain[0] == lifted[0] == ("handbook.md", "Care")
    assert plain.index(transport) > plain.index(("wombats.md", "Notes"))
    assert lifted[1] == transport


@pytest.mark.usefixtures("warm")
def test_the_files_of_each_passage_from_the_mapped_copy_and_from_sql_agree(zoo):
    index(zoo.root, db=zoo.db, workers=1, registry=Registry([]))  # exports the mapped files
    with zoo.reader() as con:
        units = [u for (u,) in con.execute("SELECT unit_id FROM units ORDER BY 1").fetchall()]
        pf = mapped_passages(zoo, index_state(con))
        assert pf is not None
        by_sql = docs_of(con, units)
        assert {u: sorted(d) for u, d in docs_of(con, units, pf).items()} == {
            u: sorted(d) for u, d in by_sql.items()
        }
        assert len(set(by_sql)) == len(units) and len({d[0] for d in by_sql.values()}) == 2


@pytest.mark.parametrize("seed", range(30))
def test_the_prior_over_arrays_gives_with_priors_scores_to_the_bit(seed):
    np = pytest.importorskip("numpy")
    rnd = random.Random(seed)
    n_units = rnd.randint(1, 40)
    docs = {u: rnd.sample(range(6), rnd.choice([1, 1, 1, 2, 0])) for u in range(n_units)}
    starts, rows = [0], []
    for u in range(n_units):
        rows += docs[u]
        starts.append(len(rows))
    placed = SimpleNamespace(place_start=np.array(starts), pl_doc=np.array(rows or [0][:0]))
    hit = np.array(sorted(rnd.sample(range(n_units + 3), rnd.randint(1, n_units))))  # some unplaced
    s = np.array([round(rnd.uniform(0.1, 9), rnd.choice([0, 2, 6])) for _ in hit])
    weight = rnd.choice([0.5, 1.0, 1.7])
    got = prior.rescored(hit, s, placed, weight)
    rows_ = [(int(u), float(x), 1) for u, x in zip(hit, s, strict=True)]
    want = {u: x for u, x, _ in with_prior(rows_, {u: docs.get(u, []) for u in docs}, weight)}
    assert {int(u): float(x) for u, x in zip(hit, got, strict=True)} == want


@pytest.mark.usefixtures("warm")
@pytest.mark.parametrize("weight", [0.0, 1.0, 0.5])
def test_the_file_prior_in_the_statement_and_over_the_mapped_files_is_with_priors(zoo, weight):
    index(zoo.root, db=zoo.db, workers=1, registry=Registry([]))  # exports the mapped files
    params = BM25Params(doc_prior=weight)
    with zoo.reader() as con:
        an = analyzer_from(index_state(con))
        groups = an.query("quokka zebra wombat transport")
        every, total = rank(con, groups, params=params)  # words alone, every unit
        want = with_prior(every, docs_of(con, [u for u, _, _ in every]), weight)
        placed = mapped_passages(zoo, index_state(con))
        assert placed is not None and bm25.mapped(con, zoo.db) is not None
        for k in (None, 1, 3):
            over_arrays = rank(
                con, groups, params=params, limit=k, file_prior=True, passages=placed
            )
            pool = rank(con, groups, params=params, limit=k, file_prior=True)  # no placements
            assert over_arrays == (want[:k], total) and pool == (want[:k], total)
        monkey = pytest.MonkeyPatch()
        monkey.setattr(bm25, "mapped", lambda *a, **kw: None)  # the statement
        try:
            for k in (None, 2):
                assert rank(con, groups, params=params, limit=k, file_prior=True) == (
                    want[:k],
                    total,
                )
        finally:
            monkey.undo()
