"""Ranking robustness: the fewest dialogues whose removal reverses the order of two runs (a lead that rests on
three dialogues should be visible). In the spirit of Broderick, Giordano & Meager (2020), "An automatic
finite-sample robustness metric: when can dropping a little data make a big difference?": rank the data by
their influence on the statistic, drop the most influential first, and recompute the statistic exactly.

For a leader a and a challenger b on one metric (both runs lose the same dialogues: they are paired), the
order is reversed when b's value is strictly better than a's on the remaining dialogues (a tie does not
reverse it). Dialogues are removed in two orders, each checked exactly after every removal, and the smaller
count is kept:

1. by each dialogue's part of the lead, s_a,d - s_b,d (oriented by the metric's direction). When both runs
   count the same items in every dialogue (two turn metrics on the same turns, or a dialogue metric) the
   lead's sign is that of sum_d (s_a,d - s_b,d), so this order is optimal and the count is **exact**;
2. by the first-order influence of removing the dialogue on value_a - value_b (s_d - value c_d over the
   total count, through the CGS formula's gradient for `cgs`), for runs whose counts differ and for CGS.

Otherwise the count is a **greedy upper bound**: some other set of as many or fewer dialogues may reverse
the order. `exact` says which. None: no removal short of every item reverses it (identical runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trace_metrics.lib import intervals as iv

BOUND_NOTE = (
    "fewest dialogues whose removal puts another row ahead (greedy upper bound; exact where both rows "
    "score the same items in every dialogue)"
)


def _parts(table: iv.DialogueTable, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(sums, counts) of the metric's ratios: (parts, D) each (3 parts for a CGS formula)."""
    names = iv.COMPOSITES.get(metric, (metric,))
    return (
        np.stack([table.sums[p].astype(float) for p in names]),
        np.stack([table.counts[p].astype(float) for p in names]),
    )


def _value(sums: np.ndarray, counts: np.ndarray, gate: float) -> np.ndarray:
    """The metric on (parts, k) running totals: a ratio, or the CGS formula of three; NaN where 0/0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sums / counts
    if r.shape[0] == 1:
        return r[0]
    gs, cd, pc = r
    return gs * np.minimum(1.0, cd / gate) * (0.5 + 0.5 * pc)


def _gradient(values: np.ndarray, gate: float) -> np.ndarray:
    """d metric / d part at the parts' values (1 for a plain ratio)."""
    if values.size == 1:
        return np.ones(1)
    gs, cd, pc = values
    capped = min(1.0, cd / gate)
    return np.array(
        [capped * (0.5 + 0.5 * pc), gs * (0.5 + 0.5 * pc) / gate if cd < gate else 0.0, 0.5 * gs * capped]
    )


def _first_reversal(
    order: np.ndarray, a: tuple, b: tuple, sign: float, gates: tuple[float, float]
) -> int | None:
    """The fewest dialogues, removed in `order`, after which b is strictly ahead of a."""
    (sa, ca), (sb, cb) = a, b
    totals = [x.sum(axis=1, keepdims=True) for x in (sa, ca, sb, cb)]
    left = [t - np.cumsum(x[:, order], axis=1) for t, x in zip(totals, (sa, ca, sb, cb), strict=True)]
    defined = (left[1] > 0).all(axis=0) & (left[3] > 0).all(axis=0)
    with np.errstate(invalid="ignore"):  # inf - inf where a ratio is undefined: not a reversal
        margin = sign * (_value(left[0], left[1], gates[0]) - _value(left[2], left[3], gates[1]))
    hits = np.flatnonzero(defined & (margin < 0))
    return int(hits[0]) + 1 if hits.size else None


def reversal(
    leader: iv.DialogueTable, challenger: iv.DialogueTable, metric: str, higher_is_better: bool
) -> dict[str, Any]:
    """{"removed": fewest dialogues whose removal puts `challenger` strictly ahead of `leader` (None: none
    does), "exact": whether that count is the true minimum (module docstring)}."""
    if (leader.dialogues, leader.n_dialogues) != (challenger.dialogues, challenger.n_dialogues):
        raise ValueError("a reversal needs two runs of one dialogue set")
    sign = 1.0 if higher_is_better else -1.0
    a, b = _parts(leader, metric), _parts(challenger, metric)
    gates = (leader.cd_gate, challenger.cd_gate)
    single = a[0].shape[0] == 1
    shared = single and bool(np.array_equal(a[1], b[1]))
    orders = []
    if single:
        orders.append(np.argsort(-sign * (a[0][0] - b[0][0]), kind="stable"))
    if not shared:
        influence = np.zeros(leader.n_dialogues)
        for (s, c), gate, side in ((a, gates[0], 1.0), (b, gates[1], -1.0)):
            totals_s, totals_c = s.sum(axis=1), c.sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                values = totals_s / totals_c
                parts = (s - values[:, None] * c) / totals_c[:, None]
            influence += side * (_gradient(values, gate) @ np.nan_to_num(parts))
        orders.append(np.argsort(-sign * influence, kind="stable"))
    found = [k for k in (_first_reversal(o, a, b, sign, gates) for o in orders) if k is not None]
    return {"removed": min(found) if found else None, "exact": shared}


def lead_robustness(
    tables: Sequence[iv.DialogueTable],
    leader: int,
    challengers: Sequence[int],
    metric: str,
    higher_is_better: bool,
) -> dict[str, Any] | None:
    """The leader's smallest reversal over the challengers: {"removed", "of" (dialogues), "challenger" (its
    index), "exact" (every challenger's count exact)}; None without challengers."""
    best: dict[str, Any] | None = None
    exact = True
    for c in challengers:
        found = reversal(tables[leader], tables[c], metric, higher_is_better)
        exact = exact and found["exact"]
        if found["removed"] is not None and (best is None or found["removed"] < best["removed"]):
            best = {"removed": found["removed"], "challenger": c}
    if not challengers:
        return None
    out = best or {"removed": None, "challenger": None}
    return {**out, "of": tables[leader].n_dialogues, "exact": exact}
