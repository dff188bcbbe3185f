"""Statistics of App. L: per-turn standard deviations, the paired cluster bootstrap by dialogue (with the
p-value dual to its interval), per-dialogue paired t-tests, and the NLI threshold sweep. The building blocks of
`trace_metrics.lib.significance`, the statistics module every table uses (import from there).

Turns of one dialogue are correlated, so per-turn standard deviations are descriptive only; inference resamples
whole dialogues (clusters) with replacement (n_boot = 10,000, seed 42, percentile 95% CI), and t-tests compare
per-dialogue means.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence

import numpy as np

from trace_dataset.constants import SEED

N_BOOT = 10_000
ALPHA = 0.05
MIN_CLUSTERS = 2  # a bootstrap over fewer dialogues has no variance: no interval, nothing is "significant"
NO_VARIANCE = "fewer than two dialogues: resampling has no variance, so there is no interval"
_BOOT_CHUNK = 500  # resamples drawn per step: bounds memory; fixed so results never depend on memory


def _as_array(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers; got shape {arr.shape}")
    if arr.size and not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"{name}[{bad}] is {arr[bad]!r}; expected finite numbers (drop undefined items first)"
        )
    return arr


def per_turn_std(values: Sequence[float], ddof: int = 0) -> float:
    """Descriptive standard deviation over turns (population form, ddof=0, as `numpy.std`).

    Descriptive only: turns within a dialogue are correlated, so sigma/sqrt(n) understates uncertainty.
    """
    arr = _as_array(values, "values")
    if arr.size <= ddof:
        raise ValueError(
            f"need more than {ddof} values for a standard deviation with ddof={ddof}; got {arr.size}"
        )
    return float(arr.std(ddof=ddof))


def cluster_means(
    values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable]
) -> dict[Hashable, float]:
    """Mean of the values of each cluster (dialogue), in order of first appearance."""
    arr = _as_array(values, "values")
    if len(clusters) != arr.size:
        raise ValueError(f"{arr.size} values but {len(clusters)} cluster ids; expected one per value")
    sums: dict[Hashable, float] = {}
    counts: dict[Hashable, int] = {}
    for v, c in zip(arr.tolist(), clusters, strict=True):
        sums[c] = sums.get(c, 0.0) + v
        counts[c] = counts.get(c, 0) + 1
    return {c: sums[c] / counts[c] for c in sums}


def resample_indices(
    n_clusters: int, n_boot: int = N_BOOT, seed: int = SEED
) -> Iterator[tuple[int, np.ndarray]]:
    """The cluster bootstrap's draws: (first resample number, indices of shape (k, n_clusters)) per chunk.

    Resample b draws `n_clusters` cluster indices uniformly with replacement from numpy `default_rng(seed)`,
    in chunks of 500 resamples (fixed, so results never depend on memory). `paired_cluster_bootstrap` and
    `trace_metrics.lib.intervals` draw from this one stream, so the same seed gives the same resamples.
    """
    if n_clusters < 1:
        raise ValueError(f"n_clusters {n_clusters!r} must be >= 1")
    if n_boot < 1:
        raise ValueError(f"n_boot {n_boot!r} must be >= 1")
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, _BOOT_CHUNK):
        k = min(_BOOT_CHUNK, n_boot - start)
        yield start, rng.integers(0, n_clusters, size=(k, n_clusters))


def paired_cluster_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict:
    """Paired bootstrap of delta = mean(a) - mean(b), resampling clusters (dialogues) with replacement.

    `a[i]` and `b[i]` are two systems' scores on the same turn i, and `clusters[i]` its dialogue id. Each
    resample draws as many dialogues as there are, with replacement, and recomputes the turn-level mean
    difference over the turns of the drawn dialogues (a dialogue drawn twice counts twice). The CI is the
    percentile interval [alpha/2, 1 - alpha/2] of the resampled deltas; `significant` when it excludes 0 (one
    test, uncorrected: `trace_metrics.lib.significance` corrects families), `p` its dual p-value
    (`bootstrap_pvalue`).
    Deterministic for a given seed (numpy `default_rng(seed)`). With one dialogue every resample is the same:
    `ci_low`, `ci_high` and `significant` are then None and `note` says why (a zero-width interval would mark
    any difference significant).
    """
    x, y = _as_array(a, "a"), _as_array(b, "b")
    if x.size != y.size:
        raise ValueError(
            f"a has {x.size} values and b has {y.size}; a paired comparison needs one pair per turn"
        )
    if len(clusters) != x.size:
        raise ValueError(f"{x.size} paired values but {len(clusters)} cluster ids; expected one per value")
    if x.size == 0:
        raise ValueError("no values to compare")
    if n_boot < 1:
        raise ValueError(f"n_boot {n_boot!r} must be >= 1")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha {alpha!r} must lie in (0, 1)")
    _, codes = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    n_clusters = int(codes.max()) + 1
    diff = x - y
    sums = np.bincount(codes, weights=diff, minlength=n_clusters)
    counts = np.bincount(codes, minlength=n_clusters).astype(float)
    delta = float(diff.sum() / diff.size)
    p = None
    if n_clusters < MIN_CLUSTERS:
        low = high = significant = None
    else:
        deltas = np.empty(n_boot)
        for start, idx in resample_indices(n_clusters, n_boot, seed):
            deltas[start : start + len(idx)] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
        q_low, q_high = np.quantile(deltas, [alpha / 2, 1 - alpha / 2])
        low, high, significant = float(q_low), float(q_high), bool(q_low > 0 or q_high < 0)
        p = bootstrap_pvalue(deltas)
    return {
        **({"note": NO_VARIANCE} if low is None else {}),
        "delta": delta,
        "ci_low": low,
        "ci_high": high,
        "significant": significant,
        "p": p,
        "n_clusters": n_clusters,
        "n": int(x.size),
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "n_boot": n_boot,
        "alpha": alpha,
        "seed": seed,
    }


# ---------------------------------------------------------------------------------------------------
def bootstrap_pvalue(differences: np.ndarray) -> float | None:
    """The p-value dual to the percentile interval of resampled differences: the smallest alpha whose (1 -
    alpha) percentile interval (numpy's linear interpolation, as `np.quantile`) excludes 0, so "p <= 0.05" and
    "the 95% interval excludes 0" agree (except where p equals alpha exactly). p = min(2 F(0+), 2 (1 - F(0-)),
    1) with F the interpolated distribution function of the resamples; 0 when every resample lies on one side
    (the bootstrap cannot resolve p below about 1 / n_boot); None when no resample is defined (NaN)."""
    v = np.sort(differences[~np.isnan(differences)])
    n = v.size
    if n == 0:
        return None
    if n == 1:
        return 1.0 if v[0] == 0 else 0.0
    below = int(np.searchsorted(v, 0.0, side="right"))  # resamples <= 0
    above = int(np.searchsorted(v, 0.0, side="left"))  # index of the first resample >= 0
    # F(0+): the largest quantile level whose interpolated quantile is <= 0
    if below == 0:
        upper_level = -1.0
    elif below == n:
        upper_level = 1.0
    else:
        i = below - 1
        upper_level = (i + (0.0 - v[i]) / (v[i + 1] - v[i])) / (n - 1)
    # F(0-): the smallest quantile level whose interpolated quantile is >= 0
    if above == 0:
        lower_level = 0.0
    elif above == n:
        lower_level = 2.0
    else:
        j = above
        lower_level = (j - 1 + (0.0 - v[j - 1]) / (v[j] - v[j - 1])) / (n - 1)
    return float(min(1.0, max(0.0, min(2 * upper_level, 2 * (1 - lower_level)))))


def paired_ttest(a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable] | None = None) -> dict:
    """Paired t-test (scipy `ttest_rel`, two-sided) of a vs b.

    Without `clusters`, a[i] and b[i] are already per-dialogue values. With `clusters` (one id per turn), the
    turns are first averaged per dialogue, so the test has one pair per dialogue, as App. K.3.
    Identical differences give t = p = nan (scipy's answer for zero variance).
    """
    from scipy.stats import ttest_rel

    x, y = _as_array(a, "a"), _as_array(b, "b")
    if x.size != y.size:
        raise ValueError(f"a has {x.size} values and b has {y.size}; a paired test needs one pair per unit")
    if clusters is not None:
        ma, mb = cluster_means(x, clusters), cluster_means(y, clusters)
        x, y = np.array(list(ma.values())), np.array([mb[c] for c in ma])
    if x.size < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs; got {x.size}")
    if np.all(x - y == (x - y)[0]):
        t = p = math.nan
    else:
        res = ttest_rel(x, y)
        t, p = float(res.statistic), float(res.pvalue)
    return {"t": t, "p": p, "mean_a": float(x.mean()), "mean_b": float(y.mean()), "n": int(x.size)}


def threshold_sweep(
    claim_probs: Sequence[Sequence[float | None]], thresholds: Sequence[float] = (0.3, 0.4, 0.5, 0.6, 0.7)
) -> dict[float, float]:
    """Mean per-item entailment at each threshold from stored claim probabilities (App. L NLI sensitivity).

    `claim_probs[i]` are item i's claim probabilities (None = no cited review: never entailed); an item with
    no claims scores 0.0, as the entailment metric.
    """
    if not claim_probs:
        raise ValueError("no items to sweep")
    out = {}
    for t in thresholds:
        if not 0.0 <= t <= 1.0:
            raise ValueError(f"threshold {t!r} must lie in [0, 1]")
        scores = [
            (sum(p is not None and p >= t for p in probs) / len(probs)) if probs else 0.0
            for probs in claim_probs
        ]
        out[float(t)] = float(np.mean(scores))
    return out
