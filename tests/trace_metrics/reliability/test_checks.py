"""The reliability statistics on hand-built cases, each against a computation written here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import f as f_dist
from scipy.stats import spearmanr

from trace_metrics.lib.reliability.checks import (
    flip_rate,
    icc_1_1,
    lc_fit,
    length_bias,
    repeat_consistency,
    wilson,
)
from trace_metrics.lib.reliability.families import family_of

# Shrout & Fleiss (1979), Table 2: six targets rated by four judges; their ICC(1,1) is 0.17
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float
)


def _icc_by_loops(x: np.ndarray) -> tuple[float, float, float]:
    """One-way ANOVA written out with loops, and the F interval of McGraw & Wong (1996), Table 7, case 1."""
    n, k = x.shape
    grand = sum(sum(row) for row in x) / (n * k)
    ss_between = sum(k * (sum(row) / k - grand) ** 2 for row in x)
    ss_within = sum((v - sum(row) / k) ** 2 for row in x for v in row)
    msb, msw = ss_between / (n - 1), ss_within / (n * (k - 1))
    icc = (msb - msw) / (msb + (k - 1) * msw)
    f_obs = msb / msw
    fl = f_obs / f_dist.ppf(0.975, n - 1, n * (k - 1))
    fu = f_obs * f_dist.ppf(0.975, n * (k - 1), n - 1)
    return icc, (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)


def test_icc_matches_shrout_fleiss_and_an_independent_anova():
    out = icc_1_1(SHROUT_FLEISS)
    assert round(out["icc"], 2) == 0.17  # the published value
    icc, low, high = _icc_by_loops(SHROUT_FLEISS)
    assert out["icc"] == pytest.approx(icc) and out["ci_low"] == pytest.approx(low)
    assert out["ci_high"] == pytest.approx(high)
    assert round(out["ci_low"], 2) == -0.13 and round(out["ci_high"], 2) == 0.72  # pingouin's ICC1 row


def test_icc_edge_cases_and_identical_share():
    same_repeats = np.array([[1, 1, 1], [3, 3, 3], [4, 4, 4]], dtype=float)
    assert icc_1_1(same_repeats)["icc"] == 1.0
    assert icc_1_1(np.full((3, 3), 2.0))["icc"] is None
    out = repeat_consistency([[1, 1, 1], [2, 3, 2], [4, 4, 4], [None, 2, 2]])
    assert out["identical_share"] == pytest.approx(2 / 3) and out["n_incomplete"] == 1
    assert out["n_items"] == 3 and out["k"] == 3


def test_flip_rate_and_wilson_interval():
    out = flip_rate([1, 2, 3, 4, None], [1, 3, 3, 0, 2])
    assert out["flip_rate"] == 0.5 and out["n_pairs"] == 4 and out["n_incomplete"] == 1
    # Wilson by its textbook formula: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    z, p, n = 1.959963984540054, 0.5, 4
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((centre - half, centre + half))
    assert wilson(0, 0) is None


def test_lc_fit_is_the_fixed_effects_least_squares_fit():
    rng = np.random.default_rng(0)
    groups = np.repeat([0, 1, 2], 10)
    z = np.log1p(rng.integers(5, 200, size=30).astype(float))
    y = np.array([1.0, 2.0, 0.5])[groups] + 0.7 * z + rng.normal(0, 0.1, 30)
    beta, lc = lc_fit(y, z, groups, 3)
    design = np.column_stack([np.eye(3)[groups], z])  # one intercept per system, one slope
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    assert beta == pytest.approx(coef[3])
    assert lc == pytest.approx(coef[:3] + coef[3] * z.mean())  # each system at the pooled mean length


def test_length_bias_spearman_and_lc_removes_a_length_only_judge():
    lengths = [10, 20, 30, 40, 15, 25, 35, 45]
    systems = ["short"] * 4 + ["long"] * 4
    ratings = [float(np.log1p(n)) for n in lengths]  # a judge that rates length and nothing else
    out = length_bias(ratings, lengths, systems, n_boot=200)
    assert out["spearman"] == pytest.approx(spearmanr(ratings, lengths).statistic) == pytest.approx(1.0)
    raw = {s: v["raw"] for s, v in out["systems"].items()}
    lc = {s: v["lc"] for s, v in out["systems"].items()}
    assert raw["long"] > raw["short"] and lc["long"] == pytest.approx(lc["short"])
    assert out["beta"] == pytest.approx(1.0)


def test_family_of_reads_the_data_file():
    assert family_of("HuggingFaceTB/SmolLM2-360M-Instruct") == "smollm"
    assert family_of("meta-llama/Llama-3.1-8B") == "llama"
    assert family_of("tfidf") is None and family_of(None) is None


def test_nothing_rated_gives_none_not_an_error():
    out = repeat_consistency([[None, None], [None, 1]])
    assert out["icc"] is None and out["identical_share"] is None and out["n_incomplete"] == 2
    assert flip_rate([None], [None])["flip_rate"] is None
    assert length_bias([None, None], [3, 4], ["a", "a"])["spearman"] is None
