"""The leaderboard's marks for one group of comparable runs (one dialogue set, pool and split): "the best of
the column, or not significantly different from it" after multiple-comparison control, each run's rank with
its bootstrap interval, and how many dialogues the lead of each column rests on.

Which comparisons form the family. A mark compares a run with the best of its column, and the best is picked
from the same data, so the comparisons a table shows are chosen by the data: Holm over only those (k - 1 per
column) would not hold its error rate (with 20 runs of one system, the best against the worst is the largest
of 190 differences, and it comes out "significant" far more often than 5% of the time). The family therefore
holds **every pair of runs** of each column it covers, k (k - 1) / 2 per column, which contains whichever
best-against-run comparisons the data select; a run is marked when its comparison with the best is not
significant after the correction. `Family` says which columns are corrected together: `board` (default: every
column of the table, i.e. every comparison the table shows), `column`, or the metrics a user names.

`mark_group` takes the group's tables, the runs' values and their bootstrap resamples (which the intervals
already drew) and returns the marks, the family sizes, the ranks and the leads' robustness.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trace_dataset.constants import SEED
from trace_metrics.lib import intervals as iv
from trace_metrics.lib.significance.corrections import (
    DEFAULT_CORRECTION,
    Family,
    check_correction,
    correct_families,
    smallest_level,
)
from trace_metrics.lib.significance.paired import (
    DEFAULT_TEST,
    N_PERM,
    P_KEYS,
    Comparison,
    bootstrap_pvalue,
    check_test,
    pairwise,
    randomization_method,
)
from trace_metrics.lib.significance.ranks import rank_intervals
from trace_metrics.lib.significance.robustness import lead_robustness
from trace_metrics.lib.stats import ALPHA

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """How marks are made: the test, the correction, the family, alpha and the randomization test's
    permutations and seed (the bootstrap's resamples come with the replicates)."""

    test: str = DEFAULT_TEST
    correction: str = DEFAULT_CORRECTION
    family: Family = field(default_factory=Family)
    alpha: float = ALPHA
    n_perm: int = N_PERM
    seed: int = SEED

    def __post_init__(self) -> None:
        check_test(self.test)
        check_correction(self.correction)
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha {self.alpha!r} must lie in (0, 1)")
        if self.n_perm < 1:
            raise ValueError(f"permutations {self.n_perm!r} must be >= 1")

    def describe(self) -> dict[str, Any]:
        """The settings as stored beside the marks (a row's `marks_method`, without the family sizes)."""
        out: dict[str, Any] = {
            "test": self.test,
            "correction": self.correction,
            "family": self.family.describe(),
            "alpha": self.alpha,
        }
        if self.test == "randomization":
            out["permutations"], out["seed"] = self.n_perm, self.seed
        return out


@dataclass
class GroupMarks:
    """What `mark_group` returns, per run of the group (same order): marks, family sizes, ranks with their
    intervals, and per metric the robustness of the leader's lead (in the leader's entry)."""

    tied: list[dict[str, bool]]
    family_size: list[dict[str, int]]
    rank: list[dict[str, int]]
    rank_ci: list[dict[str, list[int]]]
    robustness: list[dict[str, dict[str, Any]]]
    warnings: list[str]

    @classmethod
    def empty(cls, k: int) -> GroupMarks:
        return cls(
            [{} for _ in range(k)],
            [{} for _ in range(k)],
            [{} for _ in range(k)],
            [{} for _ in range(k)],
            [{} for _ in range(k)],
            [],
        )


def _participants(
    points: Sequence[Mapping[str, Any]], replicates: Sequence[Mapping[str, np.ndarray]], metric: str
) -> list[int]:
    """The runs with a value and a defined resample of `metric` (a run with no variance takes no part)."""
    return [
        i
        for i in range(len(points))
        if points[i].get(metric) is not None
        and replicates[i].get(metric) is not None
        and not np.isnan(replicates[i][metric]).all()
    ]


def _pvalues(
    tables: Sequence[iv.DialogueTable],
    replicates: Sequence[Mapping[str, np.ndarray]],
    comparisons: list[Comparison],
    settings: Settings,
) -> list[float | None]:
    if settings.test == "bootstrap":
        return [bootstrap_pvalue(replicates[c.a][c.metric] - replicates[c.b][c.metric]) for c in comparisons]
    found = pairwise(tables, comparisons, tests=(settings.test,), n_perm=settings.n_perm, seed=settings.seed)
    return [f[P_KEYS[settings.test]] for f in found]


def resolution_warning(settings: Settings, sizes: Mapping[str, int], n_dialogues: int) -> str | None:
    """A warning when the Monte Carlo randomization test cannot reach the corrected level of a lone
    comparison (its smallest p-value, 1 / (permutations + 1), is above alpha / m)."""
    if (
        settings.test != "randomization"
        or not sizes
        or randomization_method(n_dialogues, settings.n_perm)["exact"]
    ):
        return None
    m = max(sizes.values())
    floor = 1 / (settings.n_perm + 1)
    level = smallest_level(m, settings.alpha, settings.correction)
    if floor <= level:
        return None
    need = int(np.ceil(1 / level))
    return (
        f"the randomization test's smallest p-value with {settings.n_perm} permutations, "
        f"1/{settings.n_perm + 1}, is above {settings.correction}'s level {level:.2g} for a family of {m} "
        f"comparisons: no lone comparison can be significant; use at least {need} permutations"
    )


def mark_group(
    tables: Sequence[iv.DialogueTable],
    points: Sequence[Mapping[str, Any]],
    replicates: Sequence[Mapping[str, np.ndarray]],
    directions: Mapping[str, bool],
    settings: Settings | None = None,
) -> GroupMarks:
    """Marks, family sizes, rank intervals and lead robustness of one group of runs (module docstring).

    `tables[i]`, `points[i]` ({metric: value}) and `replicates[i]` ({metric: resampled values}, from one
    `intervals.bootstrap` of the group's dialogue set) describe run i; `directions` says which metrics to
    mark and whether higher is better. The best of a column is its best value (the first run on ties); a run
    with the best value is always marked.
    """
    settings = settings or Settings()
    k = len(points)
    out = GroupMarks.empty(k)
    who: dict[str, list[int]] = {m: _participants(points, replicates, m) for m in directions}
    comparisons = [
        Comparison(i, j, m)
        for m, runs in who.items()
        if settings.family.key(m)
        for i, j in itertools.combinations(runs, 2)
    ]
    pvalues = _pvalues(tables, replicates, comparisons, settings)
    adjusted, sizes = correct_families(
        pvalues, [settings.family.key(c.metric) for c in comparisons], settings.correction
    )
    by_pair = {(c.a, c.b, c.metric): p for c, p in zip(comparisons, adjusted, strict=True)}
    for m, runs in who.items():
        if not runs:
            continue
        higher = directions[m]
        best = max(runs, key=lambda i: points[i][m]) if higher else min(runs, key=lambda i: points[i][m])
        _ranks(
            out,
            runs,
            [points[i][m] for i in runs],
            [replicates[i][m] for i in runs],
            m,
            higher,
            settings.alpha,
        )
        found = lead_robustness(tables, best, [i for i in runs if i != best], m, higher)
        if found is not None:
            out.robustness[best][m] = found
        key = settings.family.key(m)
        if key is None:
            continue
        for i in runs:
            if i == best or points[i][m] == points[best][m]:
                tie: bool | None = True
            else:
                p = by_pair[(min(i, best), max(i, best), m)]
                tie = None if p is None else p > settings.alpha
            if tie is not None:
                out.tied[i][m] = tie
                out.family_size[i][m] = sizes.get(key, 0)
    warning = resolution_warning(settings, sizes, tables[0].n_dialogues if tables else 0)
    if warning:
        log.warning("%s", warning)
        out.warnings.append(warning)
    return out


def _ranks(
    out: GroupMarks,
    runs: list[int],
    values: list[float],
    reps: list[np.ndarray],
    metric: str,
    higher: bool,
    alpha: float,
) -> None:
    for i, (rank, ci) in zip(runs, rank_intervals(values, reps, higher, alpha), strict=True):
        out.rank[i][metric] = rank
        if ci is not None:
            out.rank_ci[i][metric] = list(ci)
