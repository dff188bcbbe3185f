"""Kendall tau_b between two rankings of the same systems, with a bootstrap interval over the shared items.

Used for the agreement between travellers (the rules and the LLM traveller) and between seeds, and wherever two
instruments rank the same systems. Each side gives, per system, one score per item (a dialogue, a target):
items are paired by position, so both sides must score the same items in the same order. A system's score is
the mean of its items; tau_b compares the two orderings of the system means (scipy's `kendalltau`, variant b,
so ties count as in the meta-evaluation). The interval resamples the items (the same resample on both sides,
`trace_metrics.lib.stats.resample_indices`, seed 42) and takes the percentile interval of the resampled taus;
resamples on which a side is constant are left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trace_dataset.constants import SEED
from trace_metrics.lib.intervals import percentile_interval
from trace_metrics.lib.significance.estimates import finite
from trace_metrics.lib.stats import ALPHA, N_BOOT, resample_indices


def _matrix(side: Mapping[str, Sequence[float]], systems: Sequence[str], name: str) -> np.ndarray:
    lengths = {len(side[s]) for s in systems}
    if len(lengths) != 1:
        raise ValueError(f"{name}: systems score different numbers of items {sorted(lengths)}; expected one")
    return np.asarray([side[s] for s in systems], dtype=float)  # systems x items


def _taus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """tau_b of the column pairs (one per resample) of two systems x resamples matrices; NaN where a side is
    constant. tau_b = sum(sa * sb) / sqrt(sum(sa^2) * sum(sb^2)) over the system pairs i < j, with sa and sb the
    signs of the pair's differences: the same value as scipy's `kendalltau(variant="b")` (tested), at once."""
    i, j = np.triu_indices(a.shape[0], k=1)
    sa, sb = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    denominator = np.sqrt((sa * sa).sum(axis=0) * (sb * sb).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (sa * sb).sum(axis=0) / denominator, np.nan)


def ranking_agreement(
    a: Mapping[str, Sequence[float]],
    b: Mapping[str, Sequence[float]],
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """tau_b between the system rankings of `a` and `b` (system -> per-item scores), with its interval.

    Returns `tau`, `ci_low`, `ci_high`, `n_systems`, `n_items`, `systems` (the shared ones, sorted),
    `undefined_resamples`, and `note` where tau is undefined (fewer than two shared systems, a constant side).
    """
    systems = sorted(set(a) & set(b))
    out: dict[str, Any] = {"tau": None, "ci_low": None, "ci_high": None, "n_systems": len(systems)}
    out.update(n_items=0, systems=systems, undefined_resamples=0)
    if len(systems) < 2:
        out["note"] = "fewer than two systems on both sides"
        return out
    ma, mb = _matrix(a, systems, "first side"), _matrix(b, systems, "second side")
    if ma.shape[1] != mb.shape[1]:
        raise ValueError(f"the sides score {ma.shape[1]} and {mb.shape[1]} items; expected the same items")
    out["n_items"] = n = ma.shape[1]
    if n == 0:
        out["note"] = "no items"
        return out
    point = _taus(ma.mean(axis=1, keepdims=True), mb.mean(axis=1, keepdims=True))[0]
    out["tau"] = finite(point)
    if out["tau"] is None:
        out["note"] = "one side ranks every system the same"
        return out
    taus = []
    for _, idx in resample_indices(n, n_boot, seed):
        taus.append(_taus(ma[:, idx].mean(axis=2), mb[:, idx].mean(axis=2)))
    every = np.concatenate(taus)
    out["undefined_resamples"] = int(np.isnan(every).sum())
    interval = percentile_interval(every, alpha)
    if interval is not None:
        out["ci_low"], out["ci_high"] = interval
    return out
