"""Power and sample size for comparing two systems on the same dialogues.

The planning model is the paper's paired t-test over dialogues (`pairwise.ttest_of`): n dialogues, each
giving one difference of the two systems' per-dialogue means, with standard deviation sd. A true difference
delta is detected (two-sided, at level alpha) with probability

    power(n, d) = P(|T| > t_{1 - alpha/2, n - 1}),  T ~ noncentral t(n - 1, d sqrt(n)),  d = delta / sd

(Cohen's d_z; the exact noncentral-t power, as statsmodels' `TTestPower`). From it:

- the minimum detectable difference at n: the delta with power(n, delta / sd) = 80% (`detectable_effect`
  gives it in units of sd);
- the dialogues needed for a given delta: the smallest n with power(n, delta / sd) >= 80%.

sd comes from a pilot pair of runs (the standard deviation, ddof 1, of their per-dialogue differences,
`pilot`) or is stated. For a dialogue-level metric (TSR, recovery, ...) the t-test's mean is the metric's own
value; a turn metric's value weights dialogues by their turns, which the mean of per-dialogue means does not,
so for it the figures plan the t-test and approximate the bootstrap's. After a correction over a family of m
comparisons, plan with Holm's strictest level, alpha / m.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trace_metrics.lib import intervals as iv
from trace_metrics.lib.significance.paired import paired_differences
from trace_metrics.lib.stats import ALPHA

POWER = 0.8
_MAX_N = 10**9


def _check(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha {alpha!r} must lie in (0, 1)")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power {power!r} must lie in (0, 1)")


def power_of(n: int, effect: float, alpha: float = ALPHA) -> float:
    """The two-sided paired t-test's power with n pairs at standardised effect d_z = delta / sd."""
    from scipy.stats import nct
    from scipy.stats import t as student

    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 dialogues; got {n}")
    df = n - 1
    crit = float(student.ppf(1 - alpha / 2, df))
    nc = abs(effect) * math.sqrt(n)
    upper = float(nct.sf(crit, df, nc))
    lower = float(
        nct.sf(crit, df, -nc)
    )  # P(T < -crit), as the upper tail of -T (scipy's cdf there can be nan)
    return upper + (lower if math.isfinite(lower) else 0.0)


def detectable_effect(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest standardised difference (in sd of the per-dialogue differences) detected with `power`
    by the paired t-test on n dialogues."""
    from scipy.optimize import brentq

    _check(alpha, power)
    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 dialogues; got {n}")
    high = 1.0
    while power_of(n, high, alpha) < power:
        high *= 2
    return float(brentq(lambda d: power_of(n, d, alpha) - power, 0.0, high, xtol=1e-12, rtol=1e-12))


def dialogues_needed(effect: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """The fewest dialogues with which the paired t-test detects a standardised difference `effect` (delta /
    sd) with `power`."""
    _check(alpha, power)
    if effect == 0 or not math.isfinite(effect):
        raise ValueError(f"effect {effect!r}: expected a finite non-zero difference")
    low, high = 2, 2
    while power_of(high, effect, alpha) < power:
        low, high = high, high * 2
        if high > _MAX_N:
            raise ValueError(f"effect {effect!r} needs more than {_MAX_N:,} dialogues")
    while low < high:  # the smallest n in [low, high] with enough power
        mid = (low + high) // 2
        if power_of(mid, effect, alpha) >= power:
            high = mid
        else:
            low = mid + 1
    return high


def plan(
    sd: float, n: int, delta: float | None = None, alpha: float = ALPHA, power: float = POWER
) -> dict[str, Any]:
    """{sd, n, alpha, power, detectable (the minimum detectable difference at n), detectable_sd (the same in
    sd units), delta, needed (dialogues for delta; None without delta)}."""
    if not sd > 0 or not math.isfinite(sd):
        raise ValueError(f"standard deviation {sd!r}: expected a positive number")
    effect = detectable_effect(n, alpha, power)
    return {
        "sd": sd,
        "n": n,
        "alpha": alpha,
        "power": power,
        "detectable": effect * sd,
        "detectable_sd": effect,
        "delta": delta,
        "needed": None if delta is None else dialogues_needed(delta / sd, alpha, power),
    }


def pilot(
    a: iv.DialogueTable,
    b: iv.DialogueTable,
    metrics: Sequence[str],
    delta: float | None = None,
    alpha: float = ALPHA,
    power: float = POWER,
) -> dict[str, dict[str, Any]]:
    """Per metric, from a pilot pair of runs on the same dialogues: the observed mean per-dialogue difference
    (`observed`), d_z and `plan` with the sd and number of their per-dialogue differences; a metric without
    per-dialogue values (CGS), with fewer than two paired dialogues or no spread gets `note` instead."""
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        diff = paired_differences(a, b, m)
        if diff is None:
            out[m] = {"note": "a formula of means: no per-dialogue values to plan with"}
            continue
        if diff.size < 2:
            out[m] = {"n": int(diff.size), "note": "fewer than two paired dialogues"}
            continue
        sd = float(diff.std(ddof=1))
        if sd == 0:
            out[m] = {"n": int(diff.size), "note": "no spread: every dialogue differs by the same amount"}
            continue
        observed = float(diff.mean())
        out[m] = {"observed": observed, "d_z": observed / sd, **plan(sd, int(diff.size), delta, alpha, power)}
    return out


def size_lines(
    sizes: Sequence[tuple[str, int]], family: int = 1, alpha: float = ALPHA, power: float = POWER
) -> list[str]:
    """Lines for a plan without a pilot (the dry run of `trace-bench reproduce`): per (what, n dialogues), the
    minimum detectable difference in sd of the per-dialogue differences, at alpha and, for a family of
    `family` comparisons, at Holm's strictest level alpha / family."""
    lines = []
    for what, n in sizes:
        if n < 2:
            lines.append(f"{what}: {n} dialogue(s), too few for a paired test (no interval, no mark)")
            continue
        text = f"{what}: {n:,} dialogues detect {detectable_effect(n, alpha, power):.3f} sd"
        if family > 1:
            strict = detectable_effect(n, alpha / family, power)
            text += f" ({strict:.3f} sd at alpha/{family:,}, Holm's first step)"
        lines.append(text)
    return lines
