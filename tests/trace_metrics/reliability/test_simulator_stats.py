"""The simulated traveller's statistics (trace_metrics.lib.reliability.simulator) against computations done
here by hand: a ratio's cluster-bootstrap interval, first-recommendation wins, wins any ranking gets, margins."""

from __future__ import annotations

import random
import statistics

import pytest

from trace_metrics.lib.reliability import grade
from trace_metrics.lib.reliability.simulator import (
    any_ranking_wins,
    first_recommendation_accept,
    margin,
    ratio_interval,
)


def quantile(values: list[float], q: float) -> float:
    """numpy's default (linear) quantile, written out."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def draws(n: int, n_boot: int, seed: int) -> list[list[int]]:
    """The one resample stream (numpy default_rng(seed).integers, one chunk below 500 resamples)."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n)).tolist()


def test_ratio_is_a_ratio_of_sums_with_the_dialogue_bootstrap_interval():
    counts, totals = [0, 2, 1, 0, 3], [4, 5, 1, 2, 6]
    out = ratio_interval(counts, totals, n_boot=300, seed=3)
    assert out["value"] == pytest.approx(6 / 18) and (out["count"], out["total"]) == (6.0, 18.0)
    ratios = [sum(counts[i] for i in d) / sum(totals[i] for i in d) for d in draws(5, 300, 3)]
    assert out["ci_low"] == pytest.approx(quantile(ratios, 0.025))
    assert out["ci_high"] == pytest.approx(quantile(ratios, 0.975))


def test_ratio_edge_cases():
    one = ratio_interval([1], [2])
    assert one["value"] == 0.5 and one["ci_low"] is None and "resampling has no variance" in one["note"]
    assert ratio_interval([0, 0], [0, 0])["value"] is None
    with pytest.raises(ValueError, match="2 counts but 3 totals"):
        ratio_interval([1, 2], [1, 2, 3])


def turn(role: str, action: str) -> dict[str, str]:
    return {"role": role, "action": action}


GREET = turn("user", "greet_and_seek")
ASK, REC = turn("system", "ask_preference"), turn("system", "recommend")
ANSWER, REJECT, ACCEPT = (
    turn("user", "provide_preference"),
    turn("user", "reject_and_refine"),
    turn("user", "accept"),
)


@pytest.mark.parametrize(
    "turns, first",
    [
        ([GREET, ASK, ANSWER, REC, ACCEPT], True),  # questions first: still the first recommendation
        ([GREET, REC, REJECT, REC, ACCEPT], False),
        ([GREET, ASK, ANSWER], False),  # never recommended
    ],
)
def test_first_recommendation_accept(turns, first):
    assert first_recommendation_accept({"turns": turns}) is first


def test_any_ranking_wins_needs_every_candidate_a_target_on_the_winning_turn():
    record = {"turns": [GREET, ASK, ANSWER, REC, ACCEPT]}
    assert any_ranking_wins(record, n_targets=[0, 8], n_candidates=[8, 8])
    assert not any_ranking_wins(record, n_targets=[0, 3], n_candidates=[8, 8])
    assert not any_ranking_wins({"turns": [GREET, REC, REJECT, REC, ACCEPT]}, [8, 8], [8, 8])


def test_margin_pairs_dialogues_and_matches_a_hand_bootstrap():
    rng = random.Random(0)
    ids = [f"d{i}" for i in range(12)]
    real = {d: float(rng.random() < 0.7) for d in ids}
    bad = {d: float(rng.random() < 0.2) for d in ids}
    bad["only_bad"] = 1.0  # a dialogue one side lacks is left out
    out = margin(real, bad, n_boot=200, seed=5)
    assert out["n_dialogues"] == 12
    assert out["value"] == pytest.approx(
        statistics.mean(real[d] for d in ids) - statistics.mean(bad[d] for d in ids)
    )
    order = sorted(ids)  # the clusters, as np.unique codes them
    deltas = [statistics.mean(real[order[i]] - bad[order[i]] for i in d) for d in draws(12, 200, 5)]
    assert (out["ci_low"], out["ci_high"]) == pytest.approx(
        (quantile(deltas, 0.025), quantile(deltas, 0.975))
    )
    assert margin({"a": 1.0}, {"b": 0.0})["value"] is None


def test_the_checks_are_graded_on_their_thresholds():
    assert grade("leak_rate", 0.0, (0.0, 0.0)) == "reliable"
    assert grade("leak_rate", 0.9, (0.8, 1.0)) == "not reliable"
    assert grade("no_effort_share", 0.1, (0.0, 0.3)) == "usable with care"
    assert grade("counterfactual_margin", 0.3, (0.1, 0.5)) == "reliable"
    assert grade("counterfactual_margin", -0.2, (-0.5, 0.0)) == "not reliable"
