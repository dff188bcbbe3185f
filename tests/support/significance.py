"""Builders for the statistics tests: per-dialogue tables (`intervals.DialogueTable`) from hand-made or seeded
values, and an independent computation of a table's metric under a removal or a swap."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from trace_metrics.lib import intervals as iv

SET_ID = "d" * 64  # one dialogue set for every table of a test


def table(
    sums: Mapping[str, Sequence[float]], counts: Mapping[str, Sequence[int]], cd_gate: float = 0.05
) -> iv.DialogueTable:
    """A table of the given per-dialogue sums and counts (every metric over the same dialogues)."""
    n = len(next(iter(sums.values())))
    return iv.DialogueTable(
        SET_ID,
        n,
        {m: np.asarray(v, dtype=float) for m, v in sums.items()},
        {m: np.asarray(counts[m], dtype=np.int64) for m in sums},
        cd_gate,
    )


def turn_table(
    rng: np.random.Generator, n: int, p: float, metric: str = "recall@1", turns: int = 3
) -> iv.DialogueTable:
    """`turns` items per dialogue, each 1 with probability p (a turn metric of one system)."""
    return table({metric: rng.binomial(turns, p, n)}, {metric: [turns] * n})


def random_table(
    rng: np.random.Generator, n: int, metrics: Sequence[str] = ("m",), max_count: int = 3
) -> iv.DialogueTable:
    """Counts 0..max_count per dialogue, item values on a grid of quarters (exact in binary, so that ties are
    exact wherever two computations meet)."""
    sums, counts = {}, {}
    for m in metrics:
        c = rng.integers(0, max_count + 1, n)
        sums[m] = [float(rng.integers(0, 5, k).sum()) / 4 for k in c]
        counts[m] = c.tolist()
    return table(sums, counts)


def cgs_table(rng: np.random.Generator, n: int) -> iv.DialogueTable:
    """GS, CD and PC per dialogue (1-3 turns each) whose CGS formula `intervals` computes."""
    c = rng.integers(1, 4, n)
    parts = {
        "grounding_score": [rng.uniform(0.6, 1.0, k).sum() for k in c],
        "citation_density": [rng.uniform(0.0, 0.1, k).sum() for k in c],
        "provenance_coverage": [rng.uniform(0.2, 1.0, k).sum() for k in c],
    }
    return table(parts, {m: c.tolist() for m in parts})


def value(t: iv.DialogueTable, metric: str, keep: np.ndarray | None = None) -> float | None:
    """The metric on the dialogues `keep` (a boolean mask; all by default), computed directly."""
    keep = np.ones(t.n_dialogues, bool) if keep is None else keep
    names = iv.COMPOSITES.get(metric, (metric,))
    ratios = []
    for p in names:
        c = t.counts[p][keep].sum()
        if c == 0:
            return None
        ratios.append(t.sums[p][keep].sum() / c)
    if len(ratios) == 1:
        return float(ratios[0])
    gs, cd, pc = ratios
    return float(gs * min(1.0, cd / t.cd_gate) * (0.5 + 0.5 * pc))


def swapped(
    a: iv.DialogueTable, b: iv.DialogueTable, swap: np.ndarray
) -> tuple[iv.DialogueTable, iv.DialogueTable]:
    """The two tables with the dialogues of the mask `swap` exchanged between them."""

    def mix(x: iv.DialogueTable, y: iv.DialogueTable) -> iv.DialogueTable:
        return iv.DialogueTable(
            x.dialogues,
            x.n_dialogues,
            {m: np.where(swap, y.sums[m], x.sums[m]) for m in x.sums},
            {m: np.where(swap, y.counts[m], x.counts[m]) for m in x.counts},
            x.cd_gate,
        )

    return mix(a, b), mix(b, a)
