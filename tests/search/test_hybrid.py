"""Reciprocal rank fusion: the formula, its ties, and the properties fusion relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbx.search.hybrid import convex, fuse, rrf

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
    rows = fuse([(7, 3.2, 2), (8, 1.0, 1)], [(9, 0.8), (7, 0.7)], alpha=0.5, limit=2)
    assert rows[0][:3] == (7, pytest.approx(0.5 + 0.5 * 0.7 / 0.8), 2)
    assert rows[0][3] == {"bm25": 1, "dense": 2}
    assert rows[1] == (9, pytest.approx(0.5), 0, {"bm25": None, "dense": 1})
    assert len(rows) == 2
    only_words = fuse([(7, 3.2, 2), (8, 1.0, 1)], [(9, 0.8), (7, 0.7)], alpha=1.0)
    assert [r[0] for r in only_words] == [7, 8, 9]  # alpha 1: BM25's order, then the rest


def test_convex_scales_each_list_by_its_best_above_its_floor():
    bm25 = [("a", 12.0), ("b", 4.0), ("c", 2.0)]
    cosine = [("c", 0.8), ("a", 0.4), ("d", -0.1)]  # a cosine below the floor counts as it
    fused = {f.key: f for f in convex([bm25, cosine], [0.75, 0.25])}
    assert fused["a"].score == pytest.approx(0.75 * 1 + 0.25 * 0.5)
    assert fused["b"].score == pytest.approx(0.75 * 4 / 12)  # missing from the dense list: 0
    assert fused["c"].score == pytest.approx(0.75 * 2 / 12 + 0.25 * 1)
    assert fused["d"].score == 0.0 and fused["d"].ranks == (None, 3)
    assert [f.key for f in convex([bm25, cosine], [0.75, 0.25])] == ["a", "c", "b", "d"]
    with pytest.raises(ValueError):
        convex([bm25], [0.5, 0.5])


def test_an_item_a_cut_list_lacks_scores_its_last_and_one_a_whole_list_lacks_zero():
    bm25, cosine = [("a", 8.0), ("b", 4.0)], [("c", 0.5), ("b", 0.25)]
    whole = {f.key: f.score for f in convex([bm25, cosine], [0.5, 0.5])}
    assert whole["c"] == pytest.approx(0.5) and whole["a"] == pytest.approx(0.5)
    cut = {f.key: f.score for f in convex([bm25, cosine], [0.5, 0.5], [True, True])}
    assert cut["c"] == pytest.approx(0.5 * 4 / 8 + 0.5)  # ranked below BM25's last
    assert cut["a"] == pytest.approx(0.5 + 0.5 * 0.25 / 0.5)
    with pytest.raises(ValueError):
        convex([bm25, cosine], [0.5, 0.5], [True])


def test_a_list_with_nothing_above_zero_adds_nothing():
    rows = fuse([(1, 5.0, 2)], [(2, -0.05), (3, 0.0)])  # every cosine at or below 0
    assert [r[0] for r in rows] == [1, 2, 3] and rows[1][1] == rows[2][1] == 0.0


def test_convex_does_not_depend_on_how_deep_a_list_was_cut():
    bm25 = [("a", 9.0), ("b", 6.0), ("c", 3.0), ("d", 1.0)]
    cosine = [("b", 0.9), ("c", 0.7), ("a", 0.2), ("d", 0.1)]
    deep = {f.key: f.score for f in convex([bm25, cosine], [0.5, 0.5])}
    cut = {f.key: f.score for f in convex([bm25[:3], cosine[:3]], [0.5, 0.5])}
    for key in ("a", "b", "c"):  # min-max scaling would move these: the worst score moved
        assert cut[key] == pytest.approx(deep[key])


@given(st.lists(ranking, min_size=1, max_size=3), st.floats(0, 1))
def test_convex_with_one_list_weighted_alone_keeps_its_order(lists, alpha):
    scored = [[(x, float(len(lst) - i)) for i, x in enumerate(lst)] for lst in lists]
    only_first = convex(scored, [1.0] + [0.0] * (len(scored) - 1))
    assert [f.key for f in only_first][: len(lists[0])] == lists[0]
    weights = [alpha] + [1 - alpha] * (len(scored) - 1)
    fused = convex(scored, weights)
    assert sorted(f.key for f in fused) == sorted({x for lst in lists for x in lst})
    assert all(0 <= f.score <= sum(weights) + 1e-9 for f in fused)


def test_weights_scale_each_lists_terms():
    fused = {f.key: f.score for f in rrf([["a", "b"], ["b", "a"]], k=20, weights=[1.0, 0.5])}
    assert fused == pytest.approx({"a": 1 / 21 + 0.5 / 22, "b": 1 / 22 + 0.5 / 21})
    with pytest.raises(ValueError):
        rrf([["a"], ["b"]], weights=[1.0])
