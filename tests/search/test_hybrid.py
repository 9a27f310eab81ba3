"""Reciprocal rank fusion: the formula, its ties, and the properties fusion relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbx.search.hybrid import fuse, minmax_sum, rrf

ranking = st.lists(st.integers(0, 30), max_size=20, unique=True)


def test_the_score_is_the_sum_of_reciprocal_ranks():
    fused = {f.key: f for f in rrf([["a", "b", "c"], ["c", "a"]], k=60)}
    assert fused["a"].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused["c"].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"].score == pytest.approx(1 / 62) and fused["b"].ranks == (2, None)
    assert [f.key for f in rrf([["a", "b", "c"], ["c", "a"]], k=60)] == ["a", "c", "b"]


def test_k_sets_how_much_the_top_ranks_weigh():
    lists = [["x", "m", "y"], ["y", "m", "x"], ["m"]]
    assert [f.key for f in rrf(lists, k=0)][0] == "m"
    assert rrf([["a"]], k=0)[0].score == 1.0
    with pytest.raises(ValueError):
        rrf([["a"]], k=-1)


def test_ties_go_to_the_best_single_rank_then_to_the_first_list():
    assert [f.key for f in rrf([["a", "b"], ["b", "a"]], k=20)] == ["a", "b"]
    assert [f.key for f in rrf([["a"], ["b"]], k=20)] == ["a", "b"]
    assert [f.key for f in rrf([["a", "a", "b"]], k=20)] == ["a", "b"]  # a repeat is ignored


@given(st.lists(ranking, min_size=1, max_size=4), st.sampled_from([0, 20, 60]))
def test_fusion_keeps_every_item_once_and_reads_only_ranks(lists, k):
    fused = rrf(lists, k)
    assert sorted(f.key for f in fused) == sorted({x for lst in lists for x in lst})
    for f in fused:
        assert f.score == pytest.approx(sum(1 / (k + r) for r in f.ranks if r is not None))
        for lst, r in zip(lists, f.ranks, strict=True):
            assert r == (lst.index(f.key) + 1 if f.key in lst else None)
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    swapped = {f.key: f.score for f in rrf(lists[::-1], k)}
    assert swapped == pytest.approx({f.key: f.score for f in fused})  # symmetric in the lists


@given(ranking)
def test_one_list_fused_alone_keeps_its_order(items):
    assert [f.key for f in rrf([items], 60)] == items


@given(ranking, ranking)
def test_an_item_in_both_lists_beats_one_at_the_same_ranks_in_one(a, b):
    both = set(a) & set(b)
    fused = {f.key: f for f in rrf([a, b], 60)}
    for x in both:
        for y in set(a) - set(b):
            if a.index(y) >= a.index(x):
                assert fused[x].score > fused[y].score


def test_fuse_names_each_lists_rank_and_keeps_bm25s_matched_terms():
    rows = fuse([(7, 3.2, 2), (8, 1.0, 1)], [(9, 0.8), (7, 0.7)], k=60, limit=2)
    assert rows[0][0] == 7 and rows[0][2] == 2 and rows[0][3] == {"bm25": 1, "dense": 2}
    assert rows[1] == (9, pytest.approx(1 / 61), 0, {"bm25": None, "dense": 1})
    assert len(rows) == 2


def test_minmax_sum_scales_each_list_to_its_own_range():
    fused = dict(minmax_sum([[("a", 12.0), ("b", 4.0), ("c", 2.0)], [("c", 0.9), ("a", 0.5)]]))
    assert fused == pytest.approx({"a": 1.0, "b": 0.2, "c": 1.0})
    assert [k for k, _ in minmax_sum([[("a", 12.0), ("b", 4.0), ("c", 2.0)], [("c", 0.9)]])][
        :2
    ] == ["a", "c"]  # a tie goes to the first seen
    assert minmax_sum([[("x", 3.0)], []]) == [("x", 1.0)]


def test_weights_scale_each_lists_terms():
    fused = {f.key: f.score for f in rrf([["a", "b"], ["b", "a"]], k=20, weights=[1.0, 0.5])}
    assert fused == pytest.approx({"a": 1 / 21 + 0.5 / 22, "b": 1 / 22 + 0.5 / 21})
    with pytest.raises(ValueError):
        rrf([["a"], ["b"]], weights=[1.0])
