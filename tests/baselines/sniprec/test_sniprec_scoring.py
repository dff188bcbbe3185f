"""SnipRec's score (§3.3) on hand-computed cases, and the k rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from baselines.sniprec.scoring import (
    DEFAULT_K_MIN,
    accumulate,
    final_scores,
    group_weights,
    k_for,
    turn_scores,
)


@dataclass(frozen=True)
class U:
    poi_id: str
    unit: int = 0


def hits(*pois: str) -> list[U]:
    return [U(p, i) for i, p in enumerate(pois)]


def test_best_unit_per_item_counts_its_position_among_all_units():
    # a has units at ranks 1 and 2; b's best unit is at rank 3 (other items' units count in the rank)
    w = group_weights(hits("a", "a", "b", "c", "b"), sign=1, kappa=60)
    assert w == {"a": (1 / 61, 1), "b": (1 / 63, 3), "c": (1 / 64, 4)}


@pytest.mark.parametrize("kappa", [0, 60])
def test_several_groups_signs_and_repeated_items(kappa):
    groups = [
        (+1, hits("a", "b", "a")),  # a: 1/(k+1), b: 1/(k+2)
        (+1, hits("b", "c")),  # b: 1/(k+1), c: 1/(k+2)
        (-1, hits("c", "a", "c", "d")),  # c: -1/(k+1), a: -1/(k+2), d: -1/(k+4)
    ]
    got = turn_scores(groups, kappa)
    k = kappa
    expected = {
        "a": 1 / (k + 1) - 1 / (k + 2),
        "b": 1 / (k + 2) + 1 / (k + 1),
        "c": 1 / (k + 2) - 1 / (k + 1),
        "d": -1 / (k + 4),
    }
    assert got.keys() == expected.keys()
    for pid, value in expected.items():
        assert got[pid] == pytest.approx(value, abs=1e-15)


def test_kappa_zero_values_by_hand():
    got = turn_scores([(+1, hits("a", "b")), (-1, hits("b"))], kappa=0)
    assert got == {"a": 1.0, "b": 0.5 - 1.0}


def test_kappa_sixty_values_by_hand():
    got = turn_scores([(+1, hits("x", "y", "x")), (+1, hits("y"))], kappa=60)
    assert got["x"] == pytest.approx(1 / 61)
    assert got["y"] == pytest.approx(1 / 62 + 1 / 61)


def test_scores_accumulate_across_turns():
    turns = [
        [(+1, hits("a", "b"))],  # turn 1: a 1/1, b 1/2 (kappa 0)
        [(-1, hits("a")), (+1, hits("c", "b"))],  # turn 2: a -1, c 1, b 1/2
        [],  # a turn with no query snippets leaves the scores as they were
    ]
    history = accumulate(turns, kappa=0)
    assert history[0] == {"a": 1.0, "b": 0.5}
    assert history[1] == {"a": 0.0, "b": 1.0, "c": 1.0}
    assert history[2] == history[1]


def test_items_never_retrieved_score_zero_and_keep_no_entry():
    scores = final_scores([[(+1, hits("a"))], [(-1, hits("b"))]], ["a", "b", "z"], kappa=60)
    assert scores == {"a": pytest.approx(1 / 61), "b": pytest.approx(-1 / 61), "z": 0.0}
    assert final_scores([], ["a"]) == {"a": 0.0}


def test_bad_sign_and_kappa_are_rejected():
    with pytest.raises(ValueError, match="sign"):
        group_weights(hits("a"), sign=0, kappa=60)
    with pytest.raises(ValueError, match="kappa"):
        accumulate([[(+1, hits("a"))]], kappa=-1)


@pytest.mark.parametrize(("n_items", "expected"), [(8, DEFAULT_K_MIN), (100, 17), (3007, 500), (6014, 1000)])
def test_k_scales_with_the_catalogue_with_a_floor(n_items, expected):
    assert k_for(n_items) == expected


def test_fixed_k_overrides_the_rule_and_bad_values_fail():
    assert k_for(3007, k=5) == 5
    assert k_for(8, k_min=1) == 1
    with pytest.raises(ValueError, match="k must be"):
        k_for(8, k=0)
    with pytest.raises(ValueError, match="k_min"):
        k_for(8, k_min=0)
