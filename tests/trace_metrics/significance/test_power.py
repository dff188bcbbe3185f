"""Power and sample size against a closed-form paired t power computation on synthetic normal data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import chi2, norm, ttest_1samp
from scipy.stats import t as student

from tests.support.significance import table
from trace_metrics.lib.significance import detectable_effect, dialogues_needed, pilot, plan, power_of


def closed_form_power(n, d, alpha=0.05):
    """The paired t-test's power written out: T = (Z + d sqrt(n)) / sqrt(V / (n - 1)), Z normal and V
    chi-square with n - 1 degrees of freedom, so power = E_V[P(|Z + d sqrt(n)| > c sqrt(V / (n - 1)))],
    integrated over V's density (no noncentral-t routine involved)."""
    df, nc = n - 1, d * math.sqrt(n)
    c = student.ppf(1 - alpha / 2, df)

    def given(v):
        s = c * math.sqrt(v / df)
        return norm.sf(s - nc) + norm.cdf(-s - nc)

    low, high = chi2.ppf(1e-13, df), chi2.isf(1e-13, df)  # where V's mass is
    found, _ = integrate.quad(lambda v: given(v) * chi2.pdf(v, df), low, high, limit=400, epsabs=1e-12)
    return found


@pytest.mark.parametrize(("n", "d"), [(5, 1.0), (12, 0.5), (30, 0.4), (200, 0.2), (1500, 0.05)])
def test_power_equals_the_closed_form(n, d):
    assert power_of(n, d) == pytest.approx(closed_form_power(n, d), abs=1e-6)


@pytest.mark.parametrize("n", [3, 10, 50, 1500, 10_000])
def test_detectable_effect_has_the_asked_power(n):
    d = detectable_effect(n)
    assert closed_form_power(n, d) == pytest.approx(0.8, abs=1e-6)
    assert detectable_effect(n, alpha=0.01) > d > detectable_effect(n, power=0.5)
    z = norm.ppf(0.975) + norm.ppf(0.8)
    if n >= 1500:  # the normal approximation (z_{1-alpha/2} + z_power) / sqrt(n) for large n
        assert d == pytest.approx(z / math.sqrt(n), rel=2e-3)


@pytest.mark.parametrize("d", [1.0, 0.3, 0.1])
def test_dialogues_needed_is_the_smallest_enough(d):
    n = dialogues_needed(d)
    assert closed_form_power(n, d) >= 0.8 > closed_form_power(n - 1, d)
    with pytest.raises(ValueError, match="non-zero"):
        dialogues_needed(0.0)


def test_pilot_on_synthetic_normal_data_plans_what_a_simulation_finds():
    """Per-dialogue differences drawn normal (sd 0.3): the pilot's sd, the minimum detectable difference at its
    n, and t-tests on fresh synthetic studies with that true difference rejecting in about 80% of them."""
    rng = np.random.default_rng(0)
    n, sd = 60, 0.3
    base = rng.uniform(0.2, 0.8, n)
    a = table({"m": base + rng.normal(0.05, sd, n)}, {"m": [1] * n})
    b = table({"m": base}, {"m": [1] * n})
    found = pilot(a, b, ["m"], delta=0.1)["m"]
    diff = a.sums["m"] - b.sums["m"]
    assert found["sd"] == pytest.approx(diff.std(ddof=1)) and found["n"] == n
    assert found["observed"] == pytest.approx(diff.mean()) and found["d_z"] == pytest.approx(
        diff.mean() / diff.std(ddof=1)
    )
    assert found["detectable"] == pytest.approx(detectable_effect(n) * found["sd"])
    assert found["needed"] == dialogues_needed(0.1 / found["sd"])
    studies = rng.normal(found["detectable"], found["sd"], size=(4000, n))
    rejected = ttest_1samp(studies, 0.0, axis=1).pvalue <= 0.05
    assert rejected.mean() == pytest.approx(0.8, abs=0.025)


def test_a_stated_sd_and_what_cannot_be_planned():
    p = plan(0.25, 1500, delta=0.02)
    assert p["detectable"] == pytest.approx(0.25 * detectable_effect(1500)) and p[
        "needed"
    ] == dialogues_needed(0.08)
    flat = table({"m": [1.0] * 5}, {"m": [1] * 5})
    assert "no spread" in pilot(flat, flat, ["m"])["m"]["note"]
    one = table({"m": [1.0] + [0.0] * 4}, {"m": [1] + [0] * 4})
    assert "fewer than two" in pilot(one, one, ["m"])["m"]["note"]
    with pytest.raises(ValueError, match="positive"):
        plan(0.0, 10)
    with pytest.raises(ValueError, match="at least 2"):
        detectable_effect(1)
