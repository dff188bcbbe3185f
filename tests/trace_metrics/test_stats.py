"""Statistics of App. L: per-turn std, paired cluster bootstrap, paired t-test, threshold sweep."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ttest_rel

from trace_metrics.lib.stats import (
    cluster_means,
    paired_cluster_bootstrap,
    paired_ttest,
    per_turn_std,
    threshold_sweep,
)


def test_per_turn_std_is_population_std():
    assert per_turn_std([1, 2, 3, 4]) == pytest.approx(math.sqrt(1.25))
    assert per_turn_std([1, 2, 3, 4], ddof=1) == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert per_turn_std([0.7]) == 0.0
    with pytest.raises(ValueError, match="more than 0 values"):
        per_turn_std([])
    with pytest.raises(ValueError, match="finite"):
        per_turn_std([1.0, float("nan")])


def test_identical_systems_give_zero_delta_and_a_ci_containing_zero():
    rng = np.random.default_rng(0)
    a = rng.random(200)
    clusters = [f"d{i // 4}" for i in range(200)]
    res = paired_cluster_bootstrap(a, a.copy(), clusters)
    assert res["delta"] == 0.0 and res["ci_low"] == 0.0 and res["ci_high"] == 0.0
    assert not res["significant"] and res["n_clusters"] == 50 and res["n"] == 200


def test_constant_shift_gives_the_exact_delta():
    b = np.arange(60) / 4.0  # exact binary fractions: sums are exact
    clusters = [i % 7 for i in range(60)]
    res = paired_cluster_bootstrap(b + 0.5, b, clusters, n_boot=2000)
    assert res["delta"] == 0.5 and res["ci_low"] == 0.5 and res["ci_high"] == 0.5 and res["significant"]
    assert res["mean_a"] - res["mean_b"] == 0.5


def test_deterministic_with_seed_and_seed_matters():
    rng = np.random.default_rng(1)
    a, b = rng.random(300), rng.random(300)
    clusters = [i // 3 for i in range(300)]
    one = paired_cluster_bootstrap(a, b, clusters, n_boot=3000, seed=42)
    assert one == paired_cluster_bootstrap(list(a), list(b), clusters, n_boot=3000, seed=42)
    other = paired_cluster_bootstrap(a, b, clusters, n_boot=3000, seed=7)
    assert other["delta"] == one["delta"] and (other["ci_low"], other["ci_high"]) != (
        one["ci_low"],
        one["ci_high"],
    )


def test_bootstrap_resamples_whole_dialogues():
    # two dialogues: one with 3 turns of difference +1, one with 1 turn of difference -1.
    a = [1.0, 1.0, 1.0, 0.0]
    b = [0.0, 0.0, 0.0, 1.0]
    res = paired_cluster_bootstrap(a, b, ["x", "x", "x", "y"], n_boot=4000, seed=3)
    assert res["delta"] == 0.5  # turn-weighted: (3 - 1) / 4
    # resamples are {x,x}: +1, {y,y}: -1, {x,y}: +0.5, so the 95% interval spans [-1, 1]
    assert res["ci_low"] == -1.0 and res["ci_high"] == 1.0 and not res["significant"]


def test_bootstrap_detects_a_real_difference():
    rng = np.random.default_rng(5)
    b = rng.random(1000)
    a = b + 0.05 + rng.normal(0, 0.01, 1000)
    res = paired_cluster_bootstrap(a, b, [i // 5 for i in range(1000)])
    assert res["significant"] and res["ci_low"] < res["delta"] < res["ci_high"]
    assert 0.04 < res["ci_low"] and res["ci_high"] < 0.06


def test_bootstrap_input_errors():
    with pytest.raises(ValueError, match="one pair per turn"):
        paired_cluster_bootstrap([1, 2], [1], [0, 0])
    with pytest.raises(ValueError, match="cluster ids"):
        paired_cluster_bootstrap([1, 2], [1, 2], [0])
    with pytest.raises(ValueError, match="no values"):
        paired_cluster_bootstrap([], [], [])
    with pytest.raises(ValueError, match="alpha"):
        paired_cluster_bootstrap([1], [1], [0], alpha=1.5)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(0, 5)), min_size=1, max_size=40))
def test_bootstrap_properties(rows):
    a, b, c = zip(*rows, strict=True)
    res = paired_cluster_bootstrap(a, b, c, n_boot=200)
    assert res["delta"] == pytest.approx(np.mean(a) - np.mean(b), abs=1e-12)
    if res["n_clusters"] < 2:  # one dialogue: no variance, so no interval and nothing "significant"
        assert res["ci_low"] is None and res["ci_high"] is None and res["significant"] is None and res["note"]
        return
    assert res["ci_low"] <= res["ci_high"]
    assert res["delta"] == pytest.approx(np.mean(a) - np.mean(b), abs=1e-12)
    swapped = paired_cluster_bootstrap(b, a, c, n_boot=200)
    assert swapped["ci_low"] == pytest.approx(-res["ci_high"]) and swapped["ci_high"] == pytest.approx(
        -res["ci_low"]
    )


def test_paired_ttest_matches_scipy():
    a = [3.0, 4.0, 5.0, 4.5, 2.0]
    b = [2.0, 4.5, 3.0, 3.0, 1.0]
    res = paired_ttest(a, b)
    ref = ttest_rel(a, b)
    assert res["t"] == pytest.approx(ref.statistic) and res["p"] == pytest.approx(ref.pvalue)
    assert (res["mean_a"], res["mean_b"], res["n"]) == (3.7, 2.7, 5)
    # hand check: differences 1, -0.5, 2, 1.5, 1 -> mean 1, sd sqrt(0.875), t = 1 / (sqrt(0.875) / sqrt(5))
    assert res["t"] == pytest.approx(1 / (math.sqrt(0.875) / math.sqrt(5)))


def test_paired_ttest_per_dialogue_from_turns():
    a = [1.0, 3.0, 5.0, 4.0, 2.0, 2.0]
    b = [0.0, 2.0, 4.0, 4.0, 1.0, 0.0]
    clusters = ["d1", "d1", "d2", "d2", "d3", "d3"]
    res = paired_ttest(a, b, clusters)
    assert res["n"] == 3
    ref = ttest_rel([2.0, 4.5, 2.0], [1.0, 4.0, 0.5])
    assert res["t"] == pytest.approx(ref.statistic)
    assert cluster_means(a, clusters) == {"d1": 2.0, "d2": 4.5, "d3": 2.0}


def test_paired_ttest_edge_cases():
    res = paired_ttest([1, 2, 3], [0, 1, 2])  # identical differences: no variance
    assert math.isnan(res["t"]) and math.isnan(res["p"]) and res["mean_a"] - res["mean_b"] == 1
    with pytest.raises(ValueError, match="at least 2"):
        paired_ttest([1], [2])


def test_threshold_sweep():
    sweep = threshold_sweep([[0.95, 0.05], [0.35, None], [], [0.65]])
    assert sweep == {0.3: (0.5 + 0.5 + 0 + 1) / 4, 0.4: 0.5 / 4 + 0.25, 0.5: 0.375, 0.6: 0.375, 0.7: 0.125}
    assert threshold_sweep([[0.5]], thresholds=[0.5]) == {0.5: 1.0}
    with pytest.raises(ValueError, match="threshold"):
        threshold_sweep([[0.5]], thresholds=[2.0])


def test_one_dialogue_has_no_interval_and_nothing_significant(caplog):
    from trace_metrics.lib.significance import compare
    from trace_metrics.report import format_comparison

    res = paired_cluster_bootstrap([1.0, 1.0], [0.0, 0.0], ["d1", "d1"], n_boot=100)
    assert (res["ci_low"], res["ci_high"], res["significant"]) == (None, None, None) and "no variance" in res[
        "note"
    ]
    a = {"recommendation_turns": {"dialogue_id": ["d1", "d1"], "turn_id": [1, 3], "recall@1": [1.0, 1.0]}}
    b = {"recommendation_turns": {"dialogue_id": ["d1", "d1"], "turn_id": [1, 3], "recall@1": [0.0, 0.0]}}
    with caplog.at_level("WARNING"):
        metrics = compare(a, b, n_boot=100)
    assert metrics["recall@1"]["significant"] is None and "no interval for recall@1" in caplog.text
    table = format_comparison(
        {"a": {"file": "a"}, "b": {"file": "b"}, "n_boot": 100, "seed": 42, "metrics": metrics}
    )
    assert "no variance" in table and "+1.0000*" not in table
