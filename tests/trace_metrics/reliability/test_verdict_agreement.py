"""The shared pieces of the reliability reports: verdict grading and ranking agreement with its interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from trace_metrics.lib.reliability import (
    CARE,
    NOT_RELIABLE,
    RELIABLE,
    THRESHOLDS,
    grade,
    ranking_agreement,
    worst,
)
from trace_metrics.lib.reliability.agreement import _taus


def test_grade_uses_the_pessimistic_end_of_the_interval():
    assert grade("icc", 0.9) == RELIABLE
    assert grade("icc", 0.9, (0.7, 0.95)) == CARE  # the lower bound misses 0.75
    assert grade("icc", 0.4) == NOT_RELIABLE
    assert grade("leak_rate", 0.0) == RELIABLE
    assert grade("leak_rate", 0.03) == CARE
    assert grade("leak_rate", 0.5) == NOT_RELIABLE
    assert grade("icc", None) is None


def test_a_bias_is_graded_on_its_size_whatever_its_sign():
    assert grade("length_rho", -0.5) == NOT_RELIABLE
    assert grade("length_rho", 0.05, (-0.08, 0.09)) == RELIABLE
    assert grade("length_rho", 0.05, (-0.2, 0.09)) == CARE  # |-0.2| misses 0.1


def test_worst_and_unknown_names():
    assert worst([RELIABLE, None, CARE]) == CARE
    assert worst([None]) is None
    assert worst([RELIABLE, NOT_RELIABLE, CARE]) == NOT_RELIABLE
    with pytest.raises(KeyError, match="unknown reliability check"):
        grade("nope", 1.0)
    with pytest.raises(ValueError, match="unknown verdicts"):
        worst(["fine"])


def test_every_threshold_names_its_source():
    assert all(t.source for t in THRESHOLDS.values())


def test_vectorised_tau_b_equals_scipy_with_ties():
    rng = np.random.default_rng(7)
    for _ in range(300):
        a = rng.integers(0, 3, (6, 1)).astype(float)
        b = rng.integers(0, 4, (6, 1)).astype(float)
        got = _taus(a, b)[0]
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            assert np.isnan(got)
        else:
            assert got == pytest.approx(kendalltau(a[:, 0], b[:, 0], variant="b").statistic, abs=1e-12)


def _bootstrap_by_hand(a, b, n_boot, seed):
    """An independent computation: the resamples drawn as the package draws them, tau from scipy."""
    systems = sorted(a)
    ma = np.array([a[s] for s in systems])
    mb = np.array([b[s] for s in systems])
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(n_boot):
        idx = rng.integers(0, ma.shape[1], size=ma.shape[1])
        x, y = ma[:, idx].mean(axis=1), mb[:, idx].mean(axis=1)
        if np.ptp(x) > 0 and np.ptp(y) > 0:
            taus.append(kendalltau(x, y, variant="b").statistic)
    return np.quantile(taus, [0.025, 0.975])


def test_ranking_agreement_point_and_interval_match_an_independent_computation():
    rng = np.random.default_rng(3)
    a = {s: list(rng.normal(i, 2.0, 40)) for i, s in enumerate("abcde")}
    b = {s: list(rng.normal(i, 2.0, 40)) for i, s in enumerate("abdce")}
    got = ranking_agreement(a, b, n_boot=400, seed=11)
    means_a = [np.mean(a[s]) for s in sorted(a)]
    means_b = [np.mean(b[s]) for s in sorted(b)]
    assert got["tau"] == pytest.approx(kendalltau(means_a, means_b, variant="b").statistic)
    low, high = _bootstrap_by_hand(a, b, 400, 11)
    assert (got["ci_low"], got["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert got["n_systems"] == 5 and got["n_items"] == 40


def test_identical_rankings_give_one_and_reversed_minus_one():
    a = {s: [float(i)] * 5 for i, s in enumerate("abc")}
    rev = {s: [float(-i)] * 5 for i, s in enumerate("abc")}
    assert ranking_agreement(a, a, n_boot=50)["tau"] == 1.0
    assert ranking_agreement(a, rev, n_boot=50)["tau"] == -1.0


def test_undefined_cases_say_why_and_bad_shapes_are_refused():
    one = {"a": [1.0, 2.0]}
    assert "fewer than two" in ranking_agreement(one, one)["note"]
    flat = {"a": [1.0], "b": [1.0]}
    assert "ranks every system the same" in ranking_agreement(flat, flat)["note"]
    with pytest.raises(ValueError, match="different numbers of items"):
        ranking_agreement({"a": [1.0], "b": [1.0, 2.0]}, {"a": [1.0], "b": [2.0]})
    with pytest.raises(ValueError, match="the same items"):
        ranking_agreement({"a": [1.0], "b": [2.0]}, {"a": [1.0, 1.0], "b": [2.0, 2.0]})


def test_same_inputs_same_bytes():
    a = {s: [float((i * 7 + k) % 5) for k in range(9)] for i, s in enumerate("abcd")}
    b = {s: [float((i * 3 + k) % 4) for k in range(9)] for i, s in enumerate("abcd")}
    runs = [repr(ranking_agreement(a, b, n_boot=300)) for _ in range(2)]
    assert runs[0] == runs[1]
