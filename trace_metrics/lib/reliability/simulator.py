"""The statistics of the simulated traveller's checks (the interactive protocol's simulator report).

    ratio_interval      a share counted in dialogues (leaked utterances / utterances; dialogues won at the
                        first recommendation / dialogues) with its cluster-bootstrap interval: dialogues are
                        resampled (`trace_metrics.lib.stats.resample_indices`, the one stream), the share
                        recomputed as a ratio of sums
    first_recommendation_accept, any_ranking_wins   the per-dialogue facts the report counts
    margin              a real system's live success over a deliberately bad one's, paired by dialogue (the
                        same travellers), with the paired cluster bootstrap (`paired_cluster_bootstrap`)

The verdicts come from `verdict.THRESHOLDS` (leak_rate, first_turn_success, no_effort_share,
counterfactual_margin, fallback_share); the harness only counts and passes the counts here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trace_dataset.constants import RECOMMENDATION_ACTIONS, SEED
from trace_metrics.lib.intervals import percentile_interval
from trace_metrics.lib.stats import (
    ALPHA,
    MIN_CLUSTERS,
    N_BOOT,
    NO_VARIANCE,
    paired_cluster_bootstrap,
    resample_indices,
)


def ratio_interval(
    counts: Sequence[float],
    totals: Sequence[float],
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """sum(counts) / sum(totals) over dialogues (one count and one total each), with the percentile interval
    of the ratio over dialogue resamples; `value` None where the totals are 0, no interval with fewer than
    two dialogues (`note`). Resamples whose totals are 0 are left out."""
    c, t = np.asarray(counts, dtype=float), np.asarray(totals, dtype=float)
    if c.shape != t.shape:
        raise ValueError(f"{c.size} counts but {t.size} totals; expected one of each per dialogue")
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None}
    out.update(count=float(c.sum()), total=float(t.sum()), n_dialogues=int(c.size))
    if t.sum() <= 0:
        out["note"] = "nothing to count"
        return out
    out["value"] = float(c.sum() / t.sum())
    if c.size < MIN_CLUSTERS:
        out["note"] = NO_VARIANCE
        return out
    ratios = []
    for _, idx in resample_indices(c.size, n_boot, seed):
        den = t[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios.append(np.where(den > 0, c[idx].sum(axis=1) / den, np.nan))
    interval = percentile_interval(np.concatenate(ratios), alpha)
    if interval is not None:
        out["ci_low"], out["ci_high"] = interval
    return out


def _first_recommendation(turns: Sequence[Mapping[str, Any]]) -> int | None:
    return next(
        (i for i, t in enumerate(turns) if t["role"] == "system" and t["action"] in RECOMMENDATION_ACTIONS),
        None,
    )


def first_recommendation_accept(record: Mapping[str, Any]) -> bool:
    """Whether the traveller accepted the very first recommendation (its next turn is an acceptance)."""
    turns = record["turns"]
    i = _first_recommendation(turns)
    nxt = next((t for t in turns[i + 1 :] if t["role"] == "user"), None) if i is not None else None
    return nxt is not None and nxt["action"] == "accept"


def any_ranking_wins(
    record: Mapping[str, Any], n_targets: Sequence[int], n_candidates: Sequence[int]
) -> bool:
    """Whether the dialogue was won with no system effort: accepted at the first recommendation, on a turn
    where every candidate was a target, so any ranking would have won. `n_targets` / `n_candidates`: per
    system turn of the dialogue, in order (the run's `meta.interactive`)."""
    if not first_recommendation_accept(record):
        return False
    turns = record["turns"]
    i = _first_recommendation(turns)
    k = sum(t["role"] == "system" for t in turns[: i + 1]) - 1 if i is not None else -1
    return 0 <= k < len(n_targets) and n_candidates[k] > 0 and n_targets[k] == n_candidates[k]


def margin(
    real: Mapping[str, float],
    bad: Mapping[str, float],
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """mean(real) - mean(bad) over the dialogues both scored (dialogue id -> value), with the paired cluster
    bootstrap interval; `value` None when they share no dialogue."""
    shared = sorted(set(real) & set(bad))
    if not shared:
        return {
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "n_dialogues": 0,
            "note": "no shared dialogue",
        }
    a, b = [real[d] for d in shared], [bad[d] for d in shared]
    boot = paired_cluster_bootstrap(a, b, shared, n_boot=n_boot, seed=seed, alpha=alpha)
    out = {"value": boot["delta"], "ci_low": boot["ci_low"], "ci_high": boot["ci_high"]}
    out.update(n_dialogues=len(shared), real=boot["mean_a"], bad=boot["mean_b"])
    if "note" in boot:
        out["note"] = boot["note"]
    return out
