"""One-sample estimates: a mean with its cluster-bootstrap interval (the interactive tables and SnipRec's
per-turn table), and rank correlations with their p-values (CoRE's meta-evaluation)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

from trace_dataset.constants import SEED
from trace_metrics.lib.stats import ALPHA, N_BOOT, paired_cluster_bootstrap


def mean_ci(
    values: Sequence[float | None],
    clusters: Sequence[Hashable],
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Mean of the defined values with a cluster-bootstrap percentile CI (clusters = dialogue ids): the paired
    cluster bootstrap against zero."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster ids; expected one per value")
    pairs = [(v, c) for v, c in zip(values, clusters, strict=True) if v is not None]
    if not pairs:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0, "n_clusters": 0}
    vals = [float(v) for v, _ in pairs]
    ids = [c for _, c in pairs]
    if any(not math.isfinite(v) for v in vals):
        raise ValueError("values must be finite numbers")
    res = paired_cluster_bootstrap(vals, [0.0] * len(vals), ids, n_boot=n_boot, seed=seed, alpha=alpha)
    return {
        "mean": res["mean_a"],
        "ci_low": res["ci_low"],
        "ci_high": res["ci_high"],
        "n": res["n"],
        "n_clusters": res["n_clusters"],
    }


def finite(x: Any) -> float | None:
    """x as a float, None where it is None, NaN or infinite (scipy's answer for an undefined statistic)."""
    return None if x is None or not math.isfinite(float(x)) else float(x)


def correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """n, Spearman rho and Kendall tau_b with their p-values (scipy); None where undefined (fewer than two
    pairs, or a constant side: `note` says which)."""
    from scipy.stats import kendalltau, spearmanr

    out: dict[str, Any] = {
        "n": len(x),
        "spearman": None,
        "spearman_p": None,
        "kendall_tau_b": None,
        "kendall_p": None,
    }
    if len(x) < 2:
        out["note"] = "fewer than two pairs"
    elif len(set(x)) < 2 or len(set(y)) < 2:
        out["note"] = "one side is constant"
    else:
        s, t = spearmanr(x, y), kendalltau(x, y, variant="b")
        out.update(
            spearman=finite(s.statistic),
            spearman_p=finite(s.pvalue),
            kendall_tau_b=finite(t.statistic),
            kendall_p=finite(t.pvalue),
        )
    return out
