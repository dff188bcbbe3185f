"""The fewest dialogues whose removal reverses two runs' order, against brute force on small tables."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.support.significance import cgs_table, random_table, table, value
from trace_metrics.lib.significance import lead_robustness, reversal


def _brute(a, b, metric, higher):
    """The smallest set of dialogues (tried by size) whose removal puts b strictly ahead of a."""
    n = a.n_dialogues
    for k in range(1, n):
        for removed in itertools.combinations(range(n), k):
            keep = np.ones(n, bool)
            keep[list(removed)] = False
            va, vb = value(a, metric, keep), value(b, metric, keep)
            if va is not None and vb is not None and (vb > va if higher else vb < va):
                return k
    return None


def _ordered(a, b, metric, higher):
    """(leader, challenger): the run ahead first."""
    va, vb = value(a, metric), value(b, metric)
    return (a, b) if (va >= vb) == higher or va == vb else (b, a)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("higher", [True, False])
def test_shared_counts_are_exact(seed, higher):
    """Both runs score the same items in every dialogue: the count is the true minimum."""
    rng = np.random.default_rng(seed)
    n = 8
    counts = rng.integers(0, 4, n)
    a = table({"m": [rng.integers(0, 2, c).sum() for c in counts]}, {"m": counts})
    b = table({"m": [rng.integers(0, 2, c).sum() for c in counts]}, {"m": counts})
    lead, other = _ordered(a, b, "m", higher)
    found = reversal(lead, other, "m", higher)
    assert found["exact"] and found["removed"] == _brute(lead, other, "m", higher)


@pytest.mark.parametrize("seed", range(12))
def test_other_counts_and_cgs_give_an_upper_bound(seed):
    rng = np.random.default_rng(100 + seed)
    n = 8
    a, b = random_table(rng, n), random_table(rng, n)  # counts differ between the runs
    lead, other = _ordered(a, b, "m", True)
    found, truth = reversal(lead, other, "m", True), _brute(lead, other, "m", True)
    assert not found["exact"]
    assert found["removed"] is None if truth is None else found["removed"] >= truth
    c1, c2 = cgs_table(rng, 7), cgs_table(rng, 7)
    lead, other = _ordered(c1, c2, "cgs", True)
    found, truth = reversal(lead, other, "cgs", True), _brute(lead, other, "cgs", True)
    assert not found["exact"] and (
        truth is None or (found["removed"] is not None and found["removed"] >= truth)
    )


def test_a_lead_on_three_dialogues_and_the_leaders_smallest_reversal():
    # A hits in dialogues 0-2, B only in dialogue 3: removing A's three hits puts B ahead (0 vs 1 of 17)
    n = 20
    a = table({"tsr": [1.0] * 3 + [0.0] * (n - 3)}, {"tsr": [1] * n})
    b = table({"tsr": [0.0] * 3 + [1.0] + [0.0] * (n - 4)}, {"tsr": [1] * n})
    assert reversal(a, b, "tsr", True) == {"removed": 3, "exact": True}
    c = table({"tsr": [1.0, 0.0, 0.0, 1.0] + [0.0] * (n - 4)}, {"tsr": [1] * n})  # 2 vs 3: two removals
    found = lead_robustness([a, b, c], 0, [1, 2], "tsr", True)
    assert found == {"removed": 2, "challenger": 2, "of": n, "exact": True}  # C is closer than B
    assert reversal(a, a, "tsr", True)["removed"] is None  # identical runs: nothing reverses them
    assert lead_robustness([a], 0, [], "tsr", True) is None
