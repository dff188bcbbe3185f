"""What `trace-bench stats` prints and writes, and the power note of `trace-bench reproduce --dry-run`: the
statistics themselves are `trace_metrics.lib.significance`'s."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_metrics.lib import intervals as iv
from trace_metrics.lib import significance as sig
from trace_metrics.lib.significance.corrections import NAMES as CORRECTION_NAMES
from trace_metrics.lib.significance.marks import resolution_warning
from trace_metrics.lib.significance.power import size_lines
from trace_metrics.specs import spec
from trace_metrics.tables import csv_text, format_p, format_value, text_table

PAIRWISE_FILES = ("pairwise.json", "pairwise.csv")


def pairwise_report(
    names: Sequence[str],
    tables: Sequence[iv.DialogueTable],
    pairs: Sequence[tuple[int, int]],
    metrics: Sequence[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Every (pair, metric) comparison with the three tests, d_z, the corrected p-value and mark (the
    family and correction of `args`) and the reversal count; with the settings, as `pairwise.json` holds."""
    settings = sig.Settings(args.test, args.correction, args.family, n_perm=args.permutations, seed=args.seed)
    comparisons = [sig.Comparison(i, j, m) for i, j in pairs for m in metrics]
    results = sig.pairwise(tables, comparisons, n_boot=args.n_boot, n_perm=args.permutations, seed=args.seed)
    sizes = sig.correct(results, args.test, args.correction, args.family, settings.alpha)
    for r in results:
        higher = spec(r["metric"]).higher_is_better
        a_leads = r["value_a"] is not None and (
            r["value_b"] is None or (r["value_a"] >= r["value_b"]) == higher or r["value_a"] == r["value_b"]
        )
        lead, other = (r["a"], r["b"]) if a_leads else (r["b"], r["a"])
        r["reversal"] = {
            "leader": names[lead],
            **sig.reversal(tables[lead], tables[other], r["metric"], higher),
        }
        r["a"], r["b"] = names[r["a"]], names[r["b"]]
    n = tables[0].n_dialogues
    warning = resolution_warning(settings, sizes, n)
    return {
        "settings": {**settings.describe(), "n_boot": args.n_boot, "seed": args.seed},
        "randomization": sig.randomization_method(n, args.permutations, args.seed),
        "n_dialogues": n,
        "family_size": sizes,
        **({"warning": warning} if warning else {}),
        "comparisons": results,
    }


def _notes(report: Mapping[str, Any]) -> list[str]:
    s, perm = report["settings"], report["randomization"]
    how = (
        f"exact: all {perm['assignments']:,} assignments"
        if perm["exact"]
        else f"Monte Carlo: {perm['assignments']:,} assignments, seed {perm['seed']}"
    )
    sizes = ", ".join(f"{k} {v}" for k, v in report["family_size"].items()) or "none"
    notes = [
        f"{report['n_dialogues']:,} dialogues; delta = A - B with its 95% paired cluster-bootstrap interval "
        f"(n_boot {s['n_boot']}, seed {s['seed']}); p boot: its dual p-value; p perm: paired randomization "
        f"test ({how}); p t: per-dialogue paired t-test; d_z: mean / sd of the per-dialogue differences",
        f"*: significant by the {sig.TEST_NAMES[s['test']]} after {CORRECTION_NAMES[s['correction']]} "
        f"(p adj. <= {s['alpha']}), family {s['family']} (tests per family: {sizes})",
        f"reversal: {sig.BOUND_NOTE.replace('another row', 'the other row')}; '~' marks a bound",
    ]
    if report.get("warning"):
        notes.append("warning: " + report["warning"])
    return notes


def _reversal(r: Mapping[str, Any]) -> str:
    rev = r["reversal"]
    if rev["removed"] is None:
        return "none"
    return f"{'' if rev['exact'] else '~'}{rev['removed']} ({rev['leader']} leads)"


def _line(r: Mapping[str, Any]) -> list[str]:
    ci = "-" if r.get("ci") is None else f"[{r['ci'][0]:+.4f}, {r['ci'][1]:+.4f}]"
    delta = "-" if r["delta"] is None else f"{r['delta']:+.4f}" + ("*" if r.get("significant") else "")
    return [
        r["metric"],
        r["a"],
        r["b"],
        format_value(r["value_a"]),
        format_value(r["value_b"]),
        delta,
        ci,
        format_p(r.get("p_bootstrap")),
        format_p(r.get("p_randomization")),
        format_p(r.get("p_ttest")),
        format_value(r.get("d_z")),
        format_p(r.get("p_adjusted")),
        _reversal(r),
    ]


HEADERS = [
    "metric",
    "A",
    "B",
    "A value",
    "B value",
    "delta",
    "95% CI",
    "p boot",
    "p perm",
    "p t",
    "d_z",
    "p adj.",
    "reversal",
]


def format_pairwise(report: Mapping[str, Any]) -> str:
    body = [_line(r) for r in report["comparisons"]]
    return "\n".join([*_notes(report), text_table(HEADERS, body, align="left", rule=False)])


def write_pairwise(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    from trace_dataset.io import write_json, write_text

    json_path, csv_path = (out_dir / name for name in PAIRWISE_FILES)
    write_json(json_path, report)
    keys = [
        "metric",
        "a",
        "b",
        "value_a",
        "value_b",
        "delta",
        "p_bootstrap",
        "p_randomization",
        "p_ttest",
        "t",
    ]
    keys += ["n_dialogues", "d_z", "p_adjusted", "significant"]
    rows = [
        [
            *(r.get(k) for k in keys),
            *(r["ci"] if r.get("ci") else (None, None)),
            r["reversal"]["removed"],
            int(r["reversal"]["exact"]),
        ]
        for r in report["comparisons"]
    ]
    write_text(csv_path, csv_text([*keys, "ci_low", "ci_high", "reversal_removed", "reversal_exact"], rows))
    return [json_path, csv_path]


# ---------------------------------------------------------------------------------------------------
# Power
# ---------------------------------------------------------------------------------------------------
def format_power(plans: Mapping[str, Mapping[str, Any]], what: str, alpha: float, power: float) -> str:
    """The plan per metric: n, sd of the per-dialogue differences, the pilot's difference and d_z, the
    minimum detectable difference (in the metric's units and in sd) and the dialogues --delta needs."""
    delta = next((p.get("delta") for p in plans.values() if p.get("delta") is not None), None)
    head = [
        "metric",
        "n",
        "sd",
        "observed",
        "d_z",
        "detectable",
        "(sd)",
        f"n for {delta}" if delta else "n for delta",
    ]
    body = []
    for m, p in plans.items():
        if "note" in p:
            body.append([m, f"{p['n']:,}" if "n" in p else "-", "-", "-", "-", "-", "-", p["note"]])
            continue
        body.append(
            [
                m,
                f"{p['n']:,}",
                format_value(p["sd"], 4),
                format_value(p.get("observed"), 4),
                format_value(p.get("d_z")),
                format_value(p["detectable"], 4),
                format_value(p["detectable_sd"]),
                "-" if p["needed"] is None else f"{p['needed']:,}",
            ]
        )
    title = (
        f"Power of the per-dialogue paired t-test (two-sided, alpha {alpha}, power {power:.0%}) from {what}: "
        "the smallest true difference detected at n dialogues, and the dialogues a difference needs"
    )
    return title + "\n" + text_table(head, body, align="left", rule=False)


def dry_run_power(config: Any) -> str:
    """The dry run's note (`trace-bench reproduce --dry-run`): the minimum detectable difference, in sd of the
    per-dialogue differences, for the dialogues of the config's closed and open run sets (and its interactive
    runs when it has them), at alpha and at Holm's first level for the board of each: every pair of its systems
    on every metric the suite computes (an upper bound on the board's family: a board shows the metrics its
    runs have)."""
    from trace_metrics.specs import SUITE_METRICS

    sets = [(f"{pool} pool", getattr(config, pool), config.systems) for pool in ("closed", "open")]
    if config.wants("interactive"):
        sets.append(("interactive", config.interactive, config.interactive.systems))
    lines = []
    for what, runs, systems in sets:
        label = f"{what} ({runs.split} split)"
        n, why = _run_set_size(config.data, runs.split, getattr(runs, "subset", getattr(runs, "n", None)))
        if n is None:
            lines.append(f"{label}: size unknown ({why})")
            continue
        k = len(systems)
        lines += size_lines([(label, n)], max(1, k * (k - 1) // 2 * len(SUITE_METRICS)))
    return (
        "Power (paired t-test over dialogues, alpha 0.05, 80%; in sd of the per-dialogue differences, "
        "`trace-bench stats power` turns it into a metric's units from a pilot pair):\n- "
        + "\n- ".join(lines)
    )


def _run_set_size(data: Any, split: str, asked: int | None) -> tuple[int | None, str]:
    """(dialogues a run set covers, why unknown): the split's dialogues, at most `asked` (a subset or an
    interactive n); `asked` alone when the data cannot be read."""
    from trace_dataset.constants import resolve_splits
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.io import TraceDataError

    try:
        count = sum(1 for _ in iter_dialogues(data, resolve_splits(split)))
    except (TraceDataError, OSError, ValueError) as e:
        return asked, str(e)
    return (count if asked is None else min(asked, count)), ""
