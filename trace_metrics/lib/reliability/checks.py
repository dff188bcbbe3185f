"""The statistics of a judge's reliability report, on plain arrays: repeats, order flips, length bias.

- `repeat_consistency(ratings)`: items x k repeated ratings of one factor. `identical_share`: the share of
  items whose k ratings are all equal. `icc`: the one-way random-effects, single-rating intraclass
  correlation ICC(1,1) (Shrout & Fleiss 1979, case 1; McGraw & Wong 1996 "ICC(1)"): the repeats of an item are
  not distinct raters, so no rater effect is modelled. With MSB and MSW the between-item and within-item mean
  squares, ICC = (MSB - MSW) / (MSB + (k - 1) MSW); its interval is the exact F interval of McGraw & Wong
  (F0 = MSB / MSW on n - 1 and n (k - 1) degrees of freedom). Every repeat equal (MSW = 0) with items that
  differ gives 1 with interval [1, 1]; every rating equal gives None ("constant"). Items with a missing
  repeat are left out and counted.
- `flip_rate(a, b)`: the share of items rated differently in two presentations (original and permuted
  order), with the Wilson score interval.
- `length_bias(ratings, lengths, systems)`: Spearman rho between a rating and its response's length (words),
  with a percentile bootstrap interval over items (`lib.stats.resample_indices`, seed 42), and the
  length-controlled score of each system (below).

Length-controlled score (AlpacaEval LC's idea, Dubois et al. 2024, for absolute ratings): the fixed-effects
regression rating_i = theta_{s(i)} + beta * z_i + e_i, with z_i = ln(1 + words_i) and s(i) the rated system,
fitted by least squares. beta is the within-system slope, sum (z - zbar_s)(y - ybar_s) / sum (z - zbar_s)^2;
a system's LC score is its predicted rating at the pooled mean length: ybar_s - beta (zbar_s - zbar). A judge
that rates length alone gives every system the same LC score; with one system the LC score is the raw mean (no
other system's length to correct towards). The interval of each LC score resamples items (all systems at
once) and refits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trace_dataset.constants import SEED
from trace_metrics.lib.intervals import percentile_interval
from trace_metrics.lib.stats import ALPHA, resample_indices

N_BOOT_CHECKS = 2000  # resamples of the length-bias intervals (items are few; 2,000 keep the report quick)


def _rows_complete(ratings: Sequence[Sequence[float | None]]) -> tuple[np.ndarray, int]:
    complete = [row for row in ratings if row and all(v is not None for v in row)]
    widths = {len(row) for row in complete}
    if len(widths) > 1:
        raise ValueError(f"items have different numbers of repeats {sorted(widths)}; expected one k")
    width = widths.pop() if widths else max((len(row) for row in ratings), default=0)
    return np.asarray(complete, dtype=float).reshape(len(complete), width), len(ratings) - len(complete)


def icc_1_1(matrix: np.ndarray, alpha: float = ALPHA) -> dict[str, Any]:
    """ICC(1,1) of an items x repeats matrix with its F interval (module docstring)."""
    from scipy.stats import f as f_dist

    n, k = matrix.shape
    out: dict[str, Any] = {"icc": None, "ci_low": None, "ci_high": None, "n_items": n, "k": k}
    if n < 2 or k < 2:
        out["note"] = "needs two or more items and two or more repeats"
        return out
    grand = matrix.mean()
    msb = k * ((matrix.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msw = ((matrix - matrix.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (k - 1))
    if msw == 0.0:
        if msb == 0.0:
            out["note"] = "every rating is the same (constant)"
        else:
            out.update(icc=1.0, ci_low=1.0, ci_high=1.0)
        return out
    out["icc"] = float((msb - msw) / (msb + (k - 1) * msw))
    f0 = msb / msw
    df1, df2 = n - 1, n * (k - 1)
    f_low = f0 / f_dist.ppf(1 - alpha / 2, df1, df2)
    f_high = f0 * f_dist.ppf(1 - alpha / 2, df2, df1)
    out["ci_low"] = float((f_low - 1) / (f_low + k - 1))
    out["ci_high"] = float((f_high - 1) / (f_high + k - 1))
    out["f"], out["df1"], out["df2"] = float(f0), df1, df2
    return out


def repeat_consistency(ratings: Sequence[Sequence[float | None]], alpha: float = ALPHA) -> dict[str, Any]:
    """`identical_share` (with its Wilson interval) and ICC(1,1) of items x k repeated ratings."""
    matrix, n_incomplete = _rows_complete(ratings)
    n = matrix.shape[0]
    same = int((matrix == matrix[:, :1]).all(axis=1).sum()) if n else 0
    share = same / n if n else None
    return {
        "identical_share": share,
        "identical_ci": wilson(same, n, alpha),
        "n_identical": same,
        "n_incomplete": n_incomplete,
        **icc_1_1(matrix, alpha),
    }


def wilson(successes: int, n: int, alpha: float = ALPHA) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion; None for n = 0."""
    from scipy.stats import norm

    if n == 0:
        return None
    z = float(norm.ppf(1 - alpha / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def flip_rate(a: Sequence[float | None], b: Sequence[float | None], alpha: float = ALPHA) -> dict[str, Any]:
    """The share of items whose rating changed between two presentations (pairs with a missing side are left
    out and counted), with its Wilson interval."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} ratings; expected one pair per item")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    flips = sum(x != y for x, y in pairs)
    interval = wilson(flips, len(pairs), alpha)
    return {
        "flip_rate": flips / len(pairs) if pairs else None,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
        "n_flips": flips,
        "n_pairs": len(pairs),
        "n_incomplete": len(a) - len(pairs),
    }


def _spearman_rows(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Spearman rho of each row pair of two (resamples x items) matrices (average ranks); NaN where constant."""
    from scipy.stats import rankdata

    ry, rx = rankdata(y, axis=1), rankdata(x, axis=1)
    ry, rx = ry - ry.mean(axis=1, keepdims=True), rx - rx.mean(axis=1, keepdims=True)
    denominator = np.sqrt((ry * ry).sum(axis=1) * (rx * rx).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (ry * rx).sum(axis=1) / denominator, np.nan)


def lc_fit(y: np.ndarray, z: np.ndarray, groups: np.ndarray, n_groups: int) -> tuple[float, np.ndarray]:
    """(beta, LC score per group) of the fixed-effects regression (module docstring); beta NaN (and the LC
    scores NaN) where no group's length varies; a group without items gets NaN."""
    counts = np.bincount(groups, minlength=n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ybar = np.bincount(groups, y, minlength=n_groups) / counts
        zbar = np.bincount(groups, z, minlength=n_groups) / counts
        dz, dy = z - zbar[groups], y - ybar[groups]
        sxx = float((dz * dz).sum())
        beta = float((dz * dy).sum() / sxx) if sxx > 0 else float("nan")
        return beta, ybar - beta * (zbar - z.mean())


def length_bias(
    ratings: Sequence[float | None],
    lengths: Sequence[int],
    systems: Sequence[str],
    *,
    n_boot: int = N_BOOT_CHECKS,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Spearman rho of rating against length with its interval, the slope beta, and per system the raw mean
    and the LC score with their intervals (module docstring). Items without a rating are left out."""
    if not len(ratings) == len(lengths) == len(systems):
        raise ValueError("ratings, lengths and systems must have one entry per item")
    keep = [i for i, v in enumerate(ratings) if v is not None]
    names = sorted({systems[i] for i in keep})
    y = np.asarray([ratings[i] for i in keep], dtype=float)
    z = np.log1p(np.asarray([lengths[i] for i in keep], dtype=float))
    groups = np.asarray([names.index(systems[i]) for i in keep], dtype=int)
    out: dict[str, Any] = {"n": len(keep), "n_missing": len(ratings) - len(keep), "spearman": None}
    out.update(ci_low=None, ci_high=None, beta=None, systems={})
    if len(keep) < 3:
        out["note"] = "fewer than three rated items"
        return out
    rho = _spearman_rows(y[None, :], z[None, :])[0]
    beta, lc = lc_fit(y, z, groups, len(names))
    rhos, betas, lcs = [], [], []
    for _, idx in resample_indices(len(keep), n_boot, seed):
        rhos.append(_spearman_rows(y[idx], z[idx]))
        for row in idx:
            b, scores = lc_fit(y[row], z[row], groups[row], len(names))
            betas.append(b)
            lcs.append(scores)
    rho_ci = percentile_interval(np.concatenate(rhos), alpha)
    lc_matrix = np.asarray(lcs)
    if np.isfinite(rho):
        out["spearman"] = float(rho)
        out["ci_low"], out["ci_high"] = rho_ci or (None, None)
    if np.isfinite(beta):
        out["beta"] = beta
        out["beta_ci"] = percentile_interval(np.asarray(betas), alpha)
    for g, name in enumerate(names):
        mine = y[groups == g]
        out["systems"][name] = {
            "n": int(mine.size),
            "raw": float(mine.mean()),
            "lc": float(lc[g]) if np.isfinite(lc[g]) else None,
            "lc_ci": percentile_interval(lc_matrix[:, g], alpha) if np.isfinite(lc[g]) else None,
            "mean_words": float(np.mean([lengths[keep[i]] for i in np.flatnonzero(groups == g)])),
        }
    return out
