"""The paired tests between runs: the randomization test against exact enumeration and scipy's
`permutation_test`, the t-test against scipy's `ttest_rel` and `stats.paired_ttest`, the bootstrap's p-value
against its interval, and `pairwise` putting them together."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import permutation_test, ttest_rel

from tests.support.significance import cgs_table, random_table, swapped, table, value
from trace_metrics.lib import intervals as iv
from trace_metrics.lib import stats
from trace_metrics.lib.significance import (
    Comparison,
    bootstrap_pvalue,
    pairwise,
    randomization_method,
    randomization_pvalues,
)
from trace_metrics.lib.significance.paired import dialogue_means, is_exact, paired_differences, ttest_of


def _enumerated(a, b, metric):
    """The two-sided randomization p-value by swapping every subset of dialogues, directly."""
    observed = value(a, metric) - value(b, metric)
    hits = total = 0
    for bits in itertools.product([False, True], repeat=a.n_dialogues):
        x, y = swapped(a, b, np.array(bits))
        vx, vy = value(x, metric), value(y, metric)
        if vx is None or vy is None:
            continue
        total += 1
        hits += abs(vx - vy) >= abs(observed) * (1 - 1e-12)
    return hits / total


@pytest.mark.parametrize("seed", range(6))
def test_exact_randomization_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = 4 + seed  # 4-9 dialogues: 16-512 assignments
    a, b = random_table(rng, n), random_table(rng, n)  # counts differ per run and dialogue, some zero
    c1, c2 = cgs_table(rng, n), cgs_table(rng, n)
    [p] = randomization_pvalues([a, b], [Comparison(0, 1, "m")], n_perm=10_000)
    assert is_exact(n, 10_000) and p == pytest.approx(_enumerated(a, b, "m"), abs=1e-12)
    [q] = randomization_pvalues([c1, c2], [Comparison(0, 1, "cgs")], n_perm=10_000)
    assert q == pytest.approx(_enumerated(c1, c2, "cgs"), abs=1e-12)  # the CGS formula is swapped as a whole


def _scipy(a, b, metric, n_resamples):
    """scipy's paired permutation test of the same statistic: the samples are the dialogues' positions in
    the two runs' stacked sums and counts (it swaps the two positions of a dialogue)."""
    parts = iv.COMPOSITES.get(metric, (metric,))
    sums = np.stack([np.concatenate([a.sums[p], b.sums[p]]) for p in parts])
    counts = np.stack([np.concatenate([a.counts[p], b.counts[p]]) for p in parts]).astype(float)

    def statistic(x, y, axis=-1):
        x, y = x.astype(int), y.astype(int)

        def val(idx):
            r = sums[:, idx].sum(axis=-1) / counts[:, idx].sum(axis=-1)
            if len(parts) == 1:
                return r[0]
            return r[0] * np.minimum(1.0, r[1] / a.cd_gate) * (0.5 + 0.5 * r[2])

        return val(x) - val(y)

    n = a.n_dialogues
    res = permutation_test(
        (np.arange(n), np.arange(n) + n),
        statistic,
        permutation_type="samples",
        n_resamples=n_resamples,
        vectorized=False,
        random_state=0,
    )
    return res.pvalue


def test_larger_exact_cases_equal_scipy():
    rng = np.random.default_rng(11)
    n = 14  # 16,384 assignments, every one enumerated by both
    a, b = random_table(rng, n, max_count=4), random_table(rng, n, max_count=4)
    a.counts["m"][a.counts["m"] == 0] = 1  # scipy's statistic must be defined on every assignment
    b.counts["m"][b.counts["m"] == 0] = 1
    [p] = randomization_pvalues([a, b], [Comparison(0, 1, "m")], n_perm=2**n)
    assert p == pytest.approx(_scipy(a, b, "m", np.inf), abs=1e-12)


def test_monte_carlo_agrees_with_scipy_within_its_error():
    rng = np.random.default_rng(3)
    n = 40  # far too many assignments to enumerate
    a = table({"m": rng.binomial(3, 0.55, n)}, {"m": [3] * n})
    b = table({"m": rng.binomial(3, 0.45, n)}, {"m": [3] * n})
    [p] = randomization_pvalues([a, b], [Comparison(0, 1, "m")], n_perm=20_000, seed=42)
    reference = _scipy(a, b, "m", 20_000)
    se = np.sqrt(reference * (1 - reference) / 20_000)
    assert not is_exact(n, 20_000) and abs(p - reference) < 5 * np.sqrt(2) * se + 1e-4
    method = randomization_method(n, 20_000, 42)
    assert method == {"exact": False, "assignments": 20_000, "seed": 42}
    # Monte Carlo p-values are never 0: (1 + hits) / (1 + assignments)
    far = table({"m": [3] * n}, {"m": [3] * n})
    zero = table({"m": [0] * n}, {"m": [3] * n})
    [tiny] = randomization_pvalues([far, zero], [Comparison(0, 1, "m")], n_perm=999, seed=1)
    assert tiny == pytest.approx(1 / 1000)


def test_identical_runs_and_undefined_values():
    rng = np.random.default_rng(5)
    a = random_table(rng, 30)
    [p] = randomization_pvalues([a, a], [Comparison(0, 1, "m")], n_perm=500)
    assert p == 1.0
    empty = table({"m": [0.0] * 30}, {"m": [0] * 30})
    assert randomization_pvalues([a, empty], [Comparison(0, 1, "m")], n_perm=500) == [None]
    with pytest.raises(ValueError, match="one dialogue set"):
        randomization_pvalues([a, iv.DialogueTable("other", 30, a.sums, a.counts)], [Comparison(0, 1, "m")])


def test_ttest_equals_scipy_and_the_per_item_test():
    rng = np.random.default_rng(9)
    n = 25
    a, b = random_table(rng, n), random_table(rng, n)
    diff = paired_differences(a, b, "m")
    found = ttest_of(diff)
    ma, mb = dialogue_means(a, "m"), dialogue_means(b, "m")
    both = np.isfinite(ma) & np.isfinite(mb)
    reference = ttest_rel(ma[both], mb[both])
    assert found["t"] == pytest.approx(reference.statistic, rel=1e-12)
    assert found["p_ttest"] == pytest.approx(reference.pvalue, rel=1e-10)
    assert found["n_dialogues"] == both.sum()
    assert found["d_z"] == pytest.approx(diff.mean() / diff.std(ddof=1))
    # the per-item form (turns averaged per dialogue, App. K.3) gives the same test on aligned turns
    x = rng.integers(0, 2, 60).astype(float)
    y = rng.integers(0, 2, 60).astype(float)
    ids = [f"d{i // 3:02d}" for i in range(60)]
    ta = table({"m": np.bincount(np.arange(60) // 3, weights=x)}, {"m": [3] * 20})
    tb = table({"m": np.bincount(np.arange(60) // 3, weights=y)}, {"m": [3] * 20})
    per_item = stats.paired_ttest(x, y, clusters=ids)
    assert ttest_of(paired_differences(ta, tb, "m"))["p_ttest"] == pytest.approx(per_item["p"], rel=1e-10)
    assert paired_differences(cgs_table(rng, 5), cgs_table(rng, 5), "cgs") is None  # a formula: no t-test
    assert ttest_of(np.array([0.5, 0.5, 0.5]))["p_ttest"] is None  # no spread: scipy's nan


def test_bootstrap_p_value_is_the_dual_of_the_percentile_interval():
    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(2, 80))
        draws = [rng.normal(rng.normal(0, 1), 1, n), rng.integers(-3, 5, n).astype(float)][trial % 2]
        p = bootstrap_pvalue(draws)
        for alpha in np.linspace(0.002, 0.998, 60):
            low, high = iv.percentile_interval(draws, alpha)
            if abs(alpha - p) > 1e-9:
                assert (low <= 0 <= high) == (alpha <= p), (trial, alpha, p, low, high)
    assert bootstrap_pvalue(np.zeros(10)) == 1.0 and bootstrap_pvalue(np.ones(10)) == 0.0
    assert bootstrap_pvalue(np.array([np.nan, np.nan])) is None


def test_pairwise_puts_the_tests_together():
    rng = np.random.default_rng(2)
    n = 60
    tables = [random_table(rng, n, ("recall@1", "mrr")) for _ in range(3)]
    comparisons = [Comparison(i, j, m) for i, j in ((0, 1), (0, 2), (1, 2)) for m in ("recall@1", "mrr")]
    found = pairwise(tables, comparisons, n_boot=500, n_perm=500, seed=42)
    reps = iv.bootstrap(tables, [["recall@1", "mrr"]] * 3, n_boot=500, seed=42)
    for c, r in zip(comparisons, found, strict=True):
        assert r["delta"] == pytest.approx(value(tables[c.a], c.metric) - value(tables[c.b], c.metric))
        d = reps[c.a][c.metric] - reps[c.b][c.metric]
        assert r["ci"] == list(iv.percentile_interval(d)) and r["p_bootstrap"] == bootstrap_pvalue(d)
        [p] = randomization_pvalues(tables, [c], n_perm=500, seed=42)
        assert r["p_randomization"] == p  # one stream of assignments for all, the same for one
        assert r["p_ttest"] == ttest_of(paired_differences(tables[c.a], tables[c.b], c.metric))["p_ttest"]
    only = pairwise(tables, comparisons[:1], tests=("ttest",))
    assert (
        "p_bootstrap" not in only[0] and "p_randomization" not in only[0] and only[0]["p_ttest"] is not None
    )
