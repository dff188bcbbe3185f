"""Rank intervals against an independent resampling loop."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from tests.support.significance import table, turn_table, value
from trace_metrics.lib import intervals as iv
from trace_metrics.lib import stats
from trace_metrics.lib.significance import rank_intervals


def _loop(tables, metric, higher, n_boot, seed=42):
    """Resample dialogues one resample at a time (the bootstrap's stream), value every run directly, rank with
    scipy (competition ranking), and take the empirical 2.5% / 97.5% quantiles of each run's ranks."""
    n = tables[0].n_dialogues
    ranks = []
    for _, idx in stats.resample_indices(n, n_boot, seed):
        for draw in idx:
            weights = np.bincount(draw, minlength=n)
            values = []
            for t in tables:
                s, c = (t.sums[metric] * weights).sum(), (t.counts[metric] * weights).sum()
                values.append(s / c if c else np.nan)
            if np.isnan(values).any():
                continue
            values = np.array(values) if higher else -np.array(values)
            ranks.append(rankdata(-values, method="min"))
    ranks = np.array(ranks)
    out = []
    for i in range(len(tables)):
        ordered = np.sort(ranks[:, i])
        k = len(ordered)
        low = ordered[int(np.ceil(0.025 * k)) - 1]  # the smallest rank r with P(rank <= r) >= 2.5%
        high = ordered[int(np.ceil(0.975 * k)) - 1]
        out.append((int(low), int(high)))
    return out


@pytest.mark.parametrize("higher", [True, False])
def test_rank_intervals_equal_an_independent_loop(higher):
    rng = np.random.default_rng(4)
    tables = [turn_table(rng, 40, p) for p in (0.30, 0.32, 0.5, 0.52, 0.7)]
    tables.append(tables[2])  # an exact copy: equal ranks in every resample
    reps = iv.bootstrap(tables, [["recall@1"]] * len(tables), n_boot=1000, seed=42)
    points = [value(t, "recall@1") for t in tables]
    found = rank_intervals(points, [r["recall@1"] for r in reps], higher)
    assert [ci for _, ci in found] == _loop(tables, "recall@1", higher, 1000)
    signed = np.array(points) if higher else -np.array(points)
    assert [r for r, _ in found] == list(rankdata(-signed, method="min").astype(int))
    assert found[2] == found[5]  # the copy shares the rank of the run it copies


def test_undefined_resamples_are_left_out_and_clear_leads_rank_first():
    # B has items in two dialogues only: resamples that miss both leave it undefined
    a = table({"t2r": [1.0] * 10}, {"t2r": [1] * 10})
    b = table({"t2r": [3.0, 3.0] + [0.0] * 8}, {"t2r": [1, 1] + [0] * 8})
    reps = iv.bootstrap([a, b], [["t2r"], ["t2r"]], n_boot=500, seed=1)
    found = rank_intervals([1.0, 3.0], [reps[0]["t2r"], reps[1]["t2r"]], higher_is_better=False)
    assert found == [(1, (1, 1)), (2, (2, 2))]
    assert rank_intervals([0.5], [np.full(10, np.nan)], True) == [(1, None)]
    with pytest.raises(ValueError, match="one per run"):
        rank_intervals([0.5, 0.4], [np.zeros(3)], True)
