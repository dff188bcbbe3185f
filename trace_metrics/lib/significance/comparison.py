"""Two runs on the same split compared metric by metric (`trace-bench evaluate --compare`).

For every metric with per-item values in both runs, over the items where both have a value: the paired cluster
bootstrap of the difference (dialogues resampled, `stats.paired_cluster_bootstrap`) with its interval and dual
p-value, the paired randomization test over dialogues and the per-dialogue paired t-test (`pairwise`), and
Cohen's d_z of the per-dialogue differences. `cgs` / `cgs_ent`, formulas of means, get the bootstrap and the
randomization test of the formula itself (`intervals`; no t-test and no d_z: they have no per-dialogue value).

The comparison's metrics form one family (the table shows them all) unless `family` says otherwise, and
`significant` is the chosen test's decision after the correction (`p_adjusted <= alpha`); None where the test
could not be run (one dialogue, no variance).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trace_bench.errors import UsageError
from trace_dataset.constants import SEED
from trace_metrics.lib import intervals, stats
from trace_metrics.lib.grounding import DEFAULT_CD_GATE
from trace_metrics.lib.significance.corrections import DEFAULT_CORRECTION, Family, correct_families
from trace_metrics.lib.significance.paired import (
    DEFAULT_TEST,
    N_PERM,
    Comparison,
    check_test,
    paired_differences,
    randomization_pvalues,
    ttest_of,
)

log = logging.getLogger(__name__)

PerItem = Mapping[str, Mapping[str, list]]  # a result's `per_item`: group -> {ids..., metric: values}
_BOOTSTRAP_KEYS = ("mean_a", "mean_b", "delta", "ci_low", "ci_high", "significant", "n", "n_clusters")
P_KEYS = {"bootstrap": "p_bootstrap", "randomization": "p_randomization", "ttest": "ttest_p"}  # each test's p


def compare(
    a: PerItem,
    b: PerItem,
    n_boot: int = stats.N_BOOT,
    seed: int = SEED,
    cd_gate: float = DEFAULT_CD_GATE,
    *,
    test: str = DEFAULT_TEST,
    correction: str = DEFAULT_CORRECTION,
    family: Family | None = None,
    n_perm: int = N_PERM,
    alpha: float = stats.ALPHA,
) -> dict[str, dict]:
    """{metric: {mean_a, mean_b, delta, ci_low, ci_high, n, n_clusters, ttest_t, ttest_p, ttest_n_dialogues,
    p_bootstrap, p_randomization, d_z, p_adjusted, significant, note?}} of run A against run B (module
    docstring); UsageError when the runs' items do not line up (another split)."""
    check_test(test)
    out: dict[str, dict] = {}
    for group, items in a.items():
        other = b[group]
        if items["dialogue_id"] != other["dialogue_id"] or items.get("turn_id") != other.get("turn_id"):
            raise UsageError(
                f"--compare: the two runs' {group} do not line up; were they scored on the same split?"
            )
        for metric, xs in items.items():
            if metric in ("dialogue_id", "turn_id") or metric not in other:
                continue
            found = _paired(metric, xs, other[metric], items["dialogue_id"], n_boot, n_perm, seed)
            if found is not None:
                out[metric] = found
    flat = sorted(m for m, c in out.items() if "note" in c)
    if flat:
        log.warning("no interval for %s: %s", ", ".join(flat), stats.NO_VARIANCE)
    out.update(_composites(a, b, n_boot, n_perm, seed, cd_gate))
    _correct(out, test, correction, family or Family(), alpha)
    return out


def _correct(out: dict[str, dict], test: str, correction: str, family: Family, alpha: float) -> None:
    metrics = list(out)
    p = [out[m][P_KEYS[test]] for m in metrics]
    adjusted, _ = correct_families(p, [family.key(m) for m in metrics], correction)
    for m, q in zip(metrics, adjusted, strict=True):
        out[m]["p_adjusted"] = q
        out[m]["significant"] = None if q is None else bool(q <= alpha)


def _aligned(
    metric: str, x: Sequence[float], y: Sequence[float], clusters: Sequence[str]
) -> tuple[intervals.DialogueTable, intervals.DialogueTable]:
    """Per-dialogue sums of the paired items of both runs (shared counts): what the randomization test swaps."""
    ids, codes = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    n = len(ids)
    counts = np.bincount(codes, minlength=n).astype(np.int64)
    key = intervals.dialogue_set_id(ids.tolist())
    return tuple(  # type: ignore[return-value]
        intervals.DialogueTable(
            key, n, {metric: np.bincount(codes, weights=v, minlength=n)}, {metric: counts}
        )
        for v in (np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    )


def _paired(
    metric: str, xs: Sequence[Any], ys: Sequence[Any], ids: Sequence[str], n_boot: int, n_perm: int, seed: int
) -> dict[str, Any] | None:
    """One metric's comparison over the items where both runs have a value; None when there is none."""
    keep = [i for i, (x, y) in enumerate(zip(xs, ys, strict=True)) if x is not None and y is not None]
    if not keep:
        return None
    x = [xs[i] for i in keep]
    y = [ys[i] for i in keep]
    clusters = [ids[i] for i in keep]
    boot = stats.paired_cluster_bootstrap(x, y, clusters, n_boot=n_boot, seed=seed)
    try:
        t = stats.paired_ttest(x, y, clusters=clusters)
    except ValueError as e:  # fewer than two dialogues
        t = {"t": None, "p": None, "error": str(e)}
    ta, tb = _aligned(metric, x, y, clusters)
    [p_perm] = randomization_pvalues([ta, tb], [Comparison(0, 1, metric)], n_perm, seed)
    return {
        **{k: boot[k] for k in _BOOTSTRAP_KEYS},
        "ttest_t": _finite(t.get("t")),
        "ttest_p": _finite(t.get("p")),
        "ttest_n_dialogues": t.get("n"),
        "p_bootstrap": boot["p"],
        "p_randomization": None if boot["ci_low"] is None else p_perm,
        "d_z": ttest_of(paired_differences(ta, tb, metric))["d_z"],
        **({"note": boot["note"]} if "note" in boot else {}),
    }


def _composites(
    a: PerItem, b: PerItem, n_boot: int, n_perm: int, seed: int, cd_gate: float
) -> dict[str, dict]:
    """The paired bootstrap and randomization test of each CGS formula both runs have
    (`intervals.COMPOSITES`), on the same dialogues."""
    out: dict[str, dict] = {}
    ta, tb = intervals.dialogue_table(a, cd_gate), intervals.dialogue_table(b, cd_gate)
    both = [m for m in intervals.COMPOSITES if m in ta.metrics() and m in tb.metrics()]
    if not both or ta.dialogues != tb.dialogues:
        return out
    ra, rb = intervals.bootstrap([ta, tb], [both, both], n_boot=n_boot, seed=seed)
    perms = randomization_pvalues([ta, tb], [Comparison(0, 1, m) for m in both], n_perm, seed)
    for m, p_perm in zip(both, perms, strict=True):
        ci = intervals.percentile_interval(ra[m] - rb[m])
        if ci is None:
            continue
        mean_a, mean_b = intervals.point_value(ta, m), intervals.point_value(tb, m)
        out[m] = {
            "mean_a": mean_a,
            "mean_b": mean_b,
            "delta": None if mean_a is None or mean_b is None else mean_a - mean_b,
            "ci_low": ci[0],
            "ci_high": ci[1],
            "significant": bool(ci[0] > 0 or ci[1] < 0),
            "n": int(ta.counts[intervals.COMPOSITES[m][0]].sum()),
            "n_clusters": ta.n_dialogues,
            "ttest_t": None,
            "ttest_p": None,
            "ttest_n_dialogues": None,
            "p_bootstrap": stats.bootstrap_pvalue(ra[m] - rb[m]),
            "p_randomization": p_perm,
            "d_z": None,
        }
    return out


def _finite(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
