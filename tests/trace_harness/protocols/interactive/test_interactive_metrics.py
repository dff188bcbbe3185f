"""Per-turn interactive metrics on hand-computed logs: target position with seeded random tie-breaking,
Hits@k / MRR / average position per turn, the cluster-bootstrap interval, and the metrics.json of a run."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from trace_harness.protocols.interactive.report import lost_counts, turn_items, turn_table_markdown
from trace_metrics.lib.interactive import (
    mean_ci,
    per_turn_table,
    position_scores,
    target_position,
    tie_groups,
    turn_rng,
)

CANDS = ["a", "b", "c", "d", "e", "f"]


def test_position_in_a_strict_ranking():
    rng = random.Random(0)
    assert target_position(["c", "a", "b"], ["a"], CANDS, rng) == 2
    assert target_position(["c", "a", "b"], ["b", "a"], CANDS, rng) == 2  # the best-ranked target counts
    assert (
        target_position(["x", "c", "a"], ["a"], CANDS, rng) == 2
    )  # a non-candidate in the ranking is ignored
    assert target_position(["c", "c", "a"], ["a"], CANDS, rng) == 2  # a repeated id counts once
    assert target_position(["a"], ["zz"], CANDS, rng) is None  # no target among the candidates


def test_unranked_candidates_tie_at_the_end_and_are_drawn_at_random():
    # ranked: c, d; the target "a" is in the tail of 4 (a, b, e, f): position 3..6, uniformly
    seen = Counter(target_position(["c", "d"], ["a"], CANDS, random.Random(s)) for s in range(2000))
    assert set(seen) == {3, 4, 5, 6}
    assert all(400 < v < 600 for v in seen.values())
    # seeded: the same (seed, dialogue, turn) gives the same draw
    assert target_position(["c"], ["a"], CANDS, turn_rng(42, "d1", 3)) == target_position(
        ["c"], ["a"], CANDS, turn_rng(42, "d1", 3)
    )
    # two targets in the tail: the first of them in a random order -> expected position 2 + 5/3
    draws = [target_position(["c"], ["a", "b"], CANDS, random.Random(s)) for s in range(3000)]
    assert abs(sum(draws) / len(draws) - (1 + 6 / 3)) < 0.1


def test_equal_scores_form_tie_groups():
    scores = {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.5}
    assert tie_groups(["a", "b", "c", "d", "e"], scores) == [["a"], ["b", "c", "d"], ["e"]]
    assert tie_groups(["a", "b"], None) == [["a"], ["b"]]
    # target "d" ranked 4th, but tied with b and c at places 2-4
    seen = Counter(
        target_position(["a", "b", "c", "d", "e"], ["d"], CANDS, random.Random(s), scores) for s in range(900)
    )
    assert set(seen) == {2, 3, 4}
    # without scores the list is a strict order
    assert target_position(["a", "b", "c", "d", "e"], ["d"], CANDS, random.Random(1)) == 4


SNIPREC_IDS = ("sniprec_hit@1", "sniprec_hit@5", "sniprec_hit@10", "sniprec_mrr", "avg_position")


def test_scores_of_one_turn():
    """SnipRec's per-turn ranks have ids of their own (Trace's hit@k / mrr are top-k metrics of the list)."""
    assert position_scores(1) == dict(zip(SNIPREC_IDS, (1.0, 1.0, 1.0, 1.0, 1.0), strict=True))
    assert position_scores(7) == dict(zip(SNIPREC_IDS, (0.0, 0.0, 1.0, 1 / 7, 7.0), strict=True))
    assert position_scores(None) == dict.fromkeys(SNIPREC_IDS)


def test_per_turn_table_on_hand_computed_logs():
    items = [
        {"dialogue_id": "d1", "turn": 0, "position": 1},
        {"dialogue_id": "d2", "turn": 0, "position": 12},
        {"dialogue_id": "d3", "turn": 0, "position": 4},
        {"dialogue_id": "d1", "turn": 1, "position": 2},
        {"dialogue_id": "d2", "turn": 1, "position": None},  # no target among the candidates: not averaged
    ]
    t0, t1 = per_turn_table(items)
    assert t0["turn"] == 0 and t0["n"] == 3 and t0["n_undefined"] == 0
    assert t0["sniprec_hit@1"] == pytest.approx(1 / 3)
    assert t0["sniprec_hit@5"] == pytest.approx(2 / 3)
    assert t0["sniprec_hit@10"] == pytest.approx(2 / 3)
    assert t0["sniprec_mrr"] == pytest.approx((1 + 1 / 12 + 1 / 4) / 3)
    assert t0["avg_position"] == pytest.approx(17 / 3)
    assert t1["n"] == 1 and t1["n_undefined"] == 1 and t1["sniprec_mrr"] == 0.5 and t1["sniprec_hit@1"] == 0.0
    table = turn_table_markdown([t0, t1])
    assert "| Turn | Hits@1 | Hits@5 | Hits@10 | Avg Pos | Avg MRR | n |" in table
    assert "| 0 | 0.333 | 0.667 | 0.667 | 5.7 | 0.4444 | 3 |" in table
    # a per-turn row of a metrics.json written before the SnipRec ids (hit@k, mrr) prints the same
    former = {
        "sniprec_hit@1": "hit@1",
        "sniprec_hit@5": "hit@5",
        "sniprec_hit@10": "hit@10",
        "sniprec_mrr": "mrr",
    }
    old = [{former.get(k, k): v for k, v in row.items()} for row in (t0, t1)]
    assert "sniprec_mrr" not in old[0] and turn_table_markdown(old) == table


def test_cluster_bootstrap_interval_of_a_mean():
    values = [1.0, 0.0, 1.0, 1.0, None, 0.0]
    ids = ["d1", "d1", "d2", "d3", "d3", "d4"]
    ci = mean_ci(values, ids, n_boot=2000)
    assert ci["mean"] == pytest.approx(3 / 5) and ci["n"] == 5 and ci["n_clusters"] == 4
    assert 0.0 <= ci["ci_low"] <= 0.6 <= ci["ci_high"] <= 1.0
    assert mean_ci([1.0, 1.0], ["a", "b"], n_boot=100)["ci_low"] == 1.0  # no spread, no width
    assert mean_ci([None], ["a"])["mean"] is None
    with pytest.raises(ValueError, match="one per value"):
        mean_ci([1.0], ["a", "b"])


def test_turn_items_and_lost_counts_read_the_prediction_meta():
    preds = [
        {
            "dialogue_id": "d1",
            "turn_id": 1,
            "meta": {"interactive": {"turn": 1, "requested_action": "ask_preference", "target_position": 3}},
        },
        {
            "dialogue_id": "d1",
            "turn_id": 3,
            "meta": {
                "lost": "timeout",
                "interactive": {"turn": 2, "requested_action": "recommend", "target_position": 5},
            },
        },
        {
            "dialogue_id": "d1",
            "turn_id": 5,
            "meta": {"interactive": {"turn": 3, "requested_action": "farewell", "target_position": None}},
        },
        {"dialogue_id": "d2", "turn_id": 0, "meta": {"interactive": {"fixed_question": True}}},
        {
            "dialogue_id": "d2",
            "turn_id": 2,
            "meta": {
                "interactive": {
                    "turn": 1,
                    "requested_action": "ask_preference",
                    "target_position": None,
                    "unranked": True,
                }
            },
        },
    ]
    assert turn_items(preds) == [
        {"dialogue_id": "d1", "turn": 1, "position": 3, "unranked": False},
        {"dialogue_id": "d1", "turn": 2, "position": 5, "unranked": False},
        {"dialogue_id": "d2", "turn": 1, "position": None, "unranked": True},  # the system ranked nothing
    ]
    assert lost_counts(preds) == {
        "total": 1,
        "by_reason": {"timeout": 1},
        "dialogues_with_lost_turns": 1,
        "system_turns": 5,
    }


def test_tie_positions_are_uniform_over_seeds_on_a_constructed_ranking():
    """SnipRec §5.1: a random rank within the tied group, seeded by (seed, dialogue, turn). A full ranking of
    10 venues as SnipRec's pipeline gives it: two retrieved (scores 0.9, 0.4), one disliked (-0.2) and seven
    never retrieved, all at 0 and listed in business_id order; the target is the last of the seven."""
    cands = [f"v{i}" for i in range(10)]
    scores = {"v0": 0.9, "v1": 0.4, **{f"v{i}": 0.0 for i in range(2, 9)}, "v9": -0.2}
    ranked = sorted(cands, key=lambda p: (-scores[p], p))  # the pipeline's own order: ties by business_id
    assert ranked[-2:] == ["v8", "v9"]
    seen = Counter(
        target_position(ranked, ["v8"], cands, turn_rng(s, "sniprec_00001", 2), scores) for s in range(3500)
    )
    assert set(seen) == set(
        range(3, 10)
    )  # anywhere in the zero group (places 3-9), never after the disliked v9
    assert all(380 < v < 620 for v in seen.values())  # 500 expected each (7 places)
    # the same ranking without its scores is a strict order: the target always sits where the list put it
    assert {target_position(ranked, ["v8"], cands, turn_rng(s, "sniprec_00001", 2)) for s in range(50)} == {9}
    # with scores, a ranked candidate without one joins the unranked tail (ties at the end)
    assert {
        target_position(["v0", "v1", "v2"], ["v2"], cands, random.Random(s), {"v0": 1.0, "v1": 0.5})
        for s in range(300)
    } == set(range(3, 11))
