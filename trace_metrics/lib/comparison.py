"""Two runs on the same split compared metric by metric (`trace-bench evaluate --compare`): the paired
cluster bootstrap of the difference (dialogues resampled, `lib.stats`) and the per-dialogue paired t-test for
every metric with per-item values in both runs; `cgs` / `cgs_ent`, formulas of means, get the paired
bootstrap of the formula itself (`lib.intervals`, no t-test: they have no per-dialogue values)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from trace_bench.errors import UsageError
from trace_dataset.constants import SEED
from trace_metrics.lib import intervals, stats
from trace_metrics.lib.grounding import DEFAULT_CD_GATE

log = logging.getLogger(__name__)

PerItem = Mapping[str, Mapping[str, list]]  # a result's `per_item`: group -> {ids..., metric: values}
_BOOTSTRAP_KEYS = ("mean_a", "mean_b", "delta", "ci_low", "ci_high", "significant", "n", "n_clusters")


def compare(
    a: PerItem, b: PerItem, n_boot: int = stats.N_BOOT, seed: int = SEED, cd_gate: float = DEFAULT_CD_GATE
) -> dict[str, dict]:
    """{metric: {mean_a, mean_b, delta, ci_low, ci_high, significant, n, n_clusters, ttest_t, ttest_p,
    ttest_n_dialogues, note?}} of run A against run B (module docstring); UsageError when the runs' items do
    not line up (another split)."""
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
            found = _paired(xs, other[metric], items["dialogue_id"], n_boot, seed)
            if found is not None:
                out[metric] = found
    flat = sorted(m for m, c in out.items() if "note" in c)
    if flat:
        log.warning("no interval for %s: %s", ", ".join(flat), stats.NO_VARIANCE)
    out.update(_composites(a, b, n_boot, seed, cd_gate))
    return out


def _paired(
    xs: Sequence[Any], ys: Sequence[Any], ids: Sequence[str], n_boot: int, seed: int
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
    return {
        **{k: boot[k] for k in _BOOTSTRAP_KEYS},
        "ttest_t": _finite(t.get("t")),
        "ttest_p": _finite(t.get("p")),
        "ttest_n_dialogues": t.get("n"),
        **({"note": boot["note"]} if "note" in boot else {}),
    }


def _composites(a: PerItem, b: PerItem, n_boot: int, seed: int, cd_gate: float) -> dict[str, dict]:
    """The paired bootstrap of each CGS formula both runs have (`intervals.COMPOSITES`), on the same dialogues."""
    out: dict[str, dict] = {}
    ta, tb = intervals.dialogue_table(a, cd_gate), intervals.dialogue_table(b, cd_gate)
    both = [m for m in intervals.COMPOSITES if m in ta.metrics() and m in tb.metrics()]
    if not both or ta.dialogues != tb.dialogues:
        return out
    ra, rb = intervals.bootstrap([ta, tb], [both, both], n_boot=n_boot, seed=seed)
    for m in both:
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
        }
    return out


def _finite(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
