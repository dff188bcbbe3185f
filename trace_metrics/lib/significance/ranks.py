"""Rank intervals: each run's rank on a metric with a 95% bootstrap interval, as Chatbot Arena publishes
(Chiang et al. 2024, "Chatbot Arena: an open platform for evaluating LLMs by human preference", §5: ranks
recomputed on every bootstrap resample).

The runs of one dialogue set are resampled together (`intervals.bootstrap`: the same dialogue draws for
every run), and in every resample each run is ranked again: rank = 1 + the number of runs strictly better in
that resample (competition ranking: equal values share the better rank, so nine retrievers with GS 1.000 are
all first). The interval is the 2.5th and 97.5th percentiles of a run's ranks, taken as ranks that occurred
(the empirical quantile, numpy's `inverted_cdf`): [2, 4] says that in 95% of resamples the run came second to
fourth. A resample in which some run's value is undefined (a 0/0) is left out of the metric's ranks. The
point rank is the same rule on the runs' values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trace_metrics.lib.stats import ALPHA

_BLOCK = 2_000  # resamples compared at once: bounds memory (block x runs x runs booleans)


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """1 + how many values are strictly greater, along the last axis (higher is better)."""
    greater = values[..., None, :] > values[..., :, None]  # [..., i, j]: j beats i
    return 1 + greater.sum(axis=-1)


def rank_intervals(
    points: Sequence[float],
    replicates: Sequence[np.ndarray],
    higher_is_better: bool,
    alpha: float = ALPHA,
) -> list[tuple[int, tuple[int, int] | None]]:
    """(rank, (low, high) or None) of every run: the rank of its value among `points`, and the percentile
    interval of its rank over the resamples (module docstring); None where no resample is defined."""
    if len(points) != len(replicates):
        raise ValueError(f"{len(points)} values but {len(replicates)} replicate arrays; expected one per run")
    if not points:
        return []
    sign = 1.0 if higher_is_better else -1.0
    ranks = competition_ranks(sign * np.asarray(points, dtype=float))
    stacked = sign * np.column_stack([np.asarray(r, dtype=float) for r in replicates])
    stacked = stacked[np.isfinite(stacked).all(axis=1)]
    if not stacked.shape[0]:
        return [(int(r), None) for r in ranks]
    drawn = np.concatenate(
        [competition_ranks(stacked[s : s + _BLOCK]) for s in range(0, stacked.shape[0], _BLOCK)]
    )
    low = np.quantile(drawn, alpha / 2, axis=0, method="inverted_cdf")
    high = np.quantile(drawn, 1 - alpha / 2, axis=0, method="inverted_cdf")
    return [(int(r), (int(lo), int(hi))) for r, lo, hi in zip(ranks, low, high, strict=True)]
