"""Accuracy functions: hand-computed values, edge cases, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_metrics.lib import accuracy as acc

IDS = st.sampled_from([f"p{i}" for i in range(10)])


def test_single_gold_hand_computed():
    s = acc.turn_scores(["b", "c", "a", "d", "e", "f"], ["a"])
    assert s == {"recall@1": 0.0, "recall@3": 1.0, "mrr": 1 / 3, "hit@1": 0.0, "hit@3": 1.0, "hit@5": 1.0}


def test_two_gold_recall_is_fractional():
    s = acc.turn_scores(["x", "g2", "y", "z", "g1"], ["g1", "g2"])
    assert s["recall@1"] == 0.0 and s["recall@3"] == 0.5 and s["mrr"] == 0.5
    assert s["hit@3"] == 1.0 and s["hit@5"] == 1.0


def test_empty_ranking_scores_zero():
    s = acc.turn_scores([], ["a"], alternatives=["b"])
    assert set(s.values()) == {0.0}


def test_gold_beyond_top5_only_counts_for_mrr():
    s = acc.turn_scores(["a", "b", "c", "d", "e", "g"], ["g"])
    assert s["hit@5"] == 0.0 and s["mrr"] == pytest.approx(1 / 6)


def test_multi_reference_hit_and_fallback():
    s = acc.turn_scores(["alt", "x", "g"], ["g"], alternatives=["alt"])
    assert (s["recall@1"], s["mr_recall@1"], s["recall@3"], s["mr_recall@3"]) == (0.0, 1.0, 1.0, 1.0)
    s = acc.turn_scores(["g"], ["g"], alternatives=[])  # no alternatives: single-reference value
    assert s["mr_recall@1"] == s["recall@1"] == 1.0


def test_duplicate_in_ranking_counts_once():
    assert acc.turn_scores(["g", "g", "x"], ["g"])["recall@3"] == 1.0


def test_score_means_and_n():
    out = acc.score(
        [["a"], ["b", "a"], []], [["a"], ["a"], ["a"]], alternatives=[[], ["b"], []], return_per_item=True
    )
    assert out["recall@1"] == pytest.approx(1 / 3) and out["mrr"] == pytest.approx(0.5)
    assert out["mr_recall@1"] == pytest.approx(2 / 3) and out["n"] == 3
    assert out["mrr_per_item"] == [1.0, 0.5, 0.0]


def test_score_without_items_and_errors():
    assert acc.score([], [])["recall@1"] is None
    with pytest.raises(ValueError, match="expected one per turn"):
        acc.score([["a"]], [])
    with pytest.raises(ValueError, match="no gold"):
        acc.score([["a"]], [[]])


@given(
    st.lists(IDS, unique=True, max_size=8),
    st.lists(IDS, min_size=1, max_size=3, unique=True),
    st.lists(IDS, max_size=3),
)
def test_properties(ranked, gold, alt):
    s = acc.turn_scores(ranked, gold, alt)
    assert all(0.0 <= v <= 1.0 for v in s.values())
    assert s["recall@1"] <= s["recall@3"] and s["hit@1"] <= s["hit@3"] <= s["hit@5"]
    assert s["mr_recall@1"] >= s["recall@1"] and s["mr_recall@3"] >= s["recall@3"]
    assert s == acc.turn_scores(ranked, list(reversed(gold)), list(reversed(alt)))  # gold is a set
    assert s["recall@1"] == acc.recall_at_k(ranked, gold, 1) and s["mrr"] == acc.reciprocal_rank(ranked, gold)
    assert s["hit@3"] == acc.hit_at_k(ranked, gold, 3) and s["mr_recall@3"] == acc.mr_recall_at_k(
        ranked, gold, alt, 3
    )


@given(
    st.lists(
        st.tuples(st.lists(IDS, unique=True, max_size=6), st.lists(IDS, min_size=1, max_size=2)), max_size=12
    ),
    st.randoms(),
)
def test_mean_is_order_invariant(items, rnd):
    shuffled = list(items)
    rnd.shuffle(shuffled)
    a = acc.score([r for r, _ in items], [g for _, g in items])
    b = acc.score([r for r, _ in shuffled], [g for _, g in shuffled])
    assert a == b  # fsum: exactly equal regardless of order
