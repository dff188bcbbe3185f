"""The statistics every table of trace-bench uses: the leaderboard (marks, rank intervals, lead robustness),
`trace-bench evaluate --compare`, `trace-bench stats`, CoRE's meta-evaluation, the human evaluation's t-tests
(Table 15, corrected over the table) and the interactive tables.
docs/leaderboard.md ("Significance") says what each test assumes and which to pick.

    corrections   Holm (default), Benjamini-Hochberg, none; families of tests (`Family`)
    paired        paired tests between runs of one dialogue set, many at once: the cluster bootstrap (interval
                  and dual p-value), the randomization test (exact or Monte Carlo), the paper's t-test, d_z
    marks         one group of leaderboard rows: corrected "tied with the best" marks, ranks, robustness
    ranks         rank intervals (ranks recomputed on every bootstrap resample)
    robustness    the fewest dialogues whose removal reverses two runs' order
    power         power, minimum detectable difference and dialogues needed (paired t-test)
    comparison    two runs' per-item results compared metric by metric (`evaluate --compare`)
    estimates     a mean with its cluster-bootstrap interval; rank correlations with p-values

Underneath: `trace_metrics.lib.stats` (the paired cluster bootstrap of per-item values, the t-test) and
`trace_metrics.lib.intervals` (per-dialogue sums and counts, `DialogueTable`, and their bootstrap).
"""

from __future__ import annotations

from trace_metrics.lib.intervals import DialogueTable, bootstrap, percentile_interval
from trace_metrics.lib.significance.comparison import compare
from trace_metrics.lib.significance.corrections import (
    CORRECTIONS,
    DEFAULT_CORRECTION,
    DEFAULT_FAMILY,
    FAMILIES,
    FAMILY_HELP,
    Family,
    adjust,
    correct_families,
)
from trace_metrics.lib.significance.estimates import correlation, mean_ci
from trace_metrics.lib.significance.marks import GroupMarks, Settings, mark_group
from trace_metrics.lib.significance.paired import (
    DEFAULT_TEST,
    N_PERM,
    TEST_NAMES,
    TESTS,
    Comparison,
    correct,
    pairwise,
    randomization_method,
    randomization_pvalues,
)
from trace_metrics.lib.significance.power import (
    POWER,
    detectable_effect,
    dialogues_needed,
    pilot,
    plan,
    power_of,
)
from trace_metrics.lib.significance.ranks import rank_intervals
from trace_metrics.lib.significance.robustness import BOUND_NOTE, lead_robustness, reversal
from trace_metrics.lib.stats import (
    ALPHA,
    N_BOOT,
    bootstrap_pvalue,
    paired_cluster_bootstrap,
    paired_ttest,
)

__all__ = [
    "ALPHA",
    "BOUND_NOTE",
    "CORRECTIONS",
    "DEFAULT_CORRECTION",
    "DEFAULT_FAMILY",
    "DEFAULT_TEST",
    "FAMILIES",
    "FAMILY_HELP",
    "N_BOOT",
    "N_PERM",
    "POWER",
    "TESTS",
    "TEST_NAMES",
    "Comparison",
    "DialogueTable",
    "Family",
    "GroupMarks",
    "Settings",
    "adjust",
    "bootstrap",
    "bootstrap_pvalue",
    "compare",
    "correct",
    "correct_families",
    "correlation",
    "detectable_effect",
    "dialogues_needed",
    "lead_robustness",
    "mark_group",
    "mean_ci",
    "paired_cluster_bootstrap",
    "paired_ttest",
    "pairwise",
    "percentile_interval",
    "pilot",
    "plan",
    "power_of",
    "randomization_method",
    "randomization_pvalues",
    "rank_intervals",
    "reversal",
]
