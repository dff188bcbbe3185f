"""What `trace-bench evaluate` writes beside its results and prints: the per-item file's name, the results
table, the App. L sweeps and the comparison of two runs (the command line only parses and calls these)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_metrics.specs import METRICS
from trace_metrics.tables import format_p, text_table


def per_item_path(out: Path) -> Path:
    """`<out stem>.per_item.json.gz` beside the results file: every per-item value with its ids."""
    return out.with_name(out.stem + ".per_item.json.gz")


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def format_table(result: dict) -> str:
    """The results table: every value with its direction, n and per-item standard deviation, then the
    aggregates."""
    std = result.get("std") or {}
    rows = []
    for m, v in result["values"].items():
        spec = METRICS.get(m)
        arrow = "" if spec is None else (" ↑" if spec.higher_is_better else " ↓")
        rows.append([m + arrow, _fmt(v), str(result["n"].get(m, "")), _fmt(std.get(m))])
    for k, v in result.get("aggregates", {}).items():
        if not isinstance(v, dict):
            rows.append([k, _fmt(v), "", ""])
    cfg, ver = result["config"], result["versions"]
    head = (
        f"{cfg['predictions'].get('file', '')}: split={cfg['split']} pool={cfg['pool']} "
        f"corpus={ver['corpus'] or '?'} kb={ver['kb'] or '?'}"
    )
    return head + "\n" + text_table(["metric", "value", "n", "std"], rows)


def format_sweeps(sweeps: dict) -> str:
    """The App. L sensitivity sweeps of a result."""
    rows = []
    for t, v in sweeps["fuzzy_threshold"].items():
        rows.append([f"fuzzy threshold {t}", "grounding_score", _fmt(v["grounding_score"])])
    for g, v in sweeps["cd_gate"].items():
        rows.append([f"cd gate {g}", "cgs", _fmt(v["cgs"])])
    for w, v in sweeps["pc_window"].items():
        rows.append([f"pc window {w}", "provenance_coverage", _fmt(v["provenance_coverage"])])
    for name, v in sweeps["cgs_variants"].items():
        rows.append([f"cgs variant {name}", "mean / of means", f"{_fmt(v['mean'])} / {_fmt(v['of_means'])}"])
    for m, v in sweeps["spatial_radius_km"].items():
        rows.append([m, f"n={v['n']}", _fmt(v["value"])])
    return "sensitivity sweeps (App. L)\n" + text_table(["setting", "metric", "value"], rows)


def format_comparison(comparison: dict) -> str:
    """The comparison of two runs (`significance.compare`, with the files and the tests' settings)."""
    from trace_metrics.lib.significance import ALPHA, DEFAULT_CORRECTION, DEFAULT_TEST, TEST_NAMES
    from trace_metrics.lib.significance.corrections import NAMES

    rows = []
    for m, c in comparison["metrics"].items():
        sig = "*" if c["significant"] else ""
        ci = "no variance" if c["ci_low"] is None else f"[{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]"
        rows.append(
            [
                m,
                _fmt(c["mean_a"]),
                _fmt(c["mean_b"]),
                f"{c['delta']:+.4f}{sig}",
                ci,
                format_p(c.get("p_bootstrap")),
                format_p(c.get("p_randomization")),
                format_p(c["ttest_p"]),
                _fmt(c.get("d_z"), 3),
                format_p(c.get("p_adjusted")),
                str(c["n"]),
            ]
        )
    test = comparison.get("test", DEFAULT_TEST)
    correction = comparison.get("correction", DEFAULT_CORRECTION)
    family = comparison.get("family", "board")
    members = sum(c.get("p_adjusted") is not None for c in comparison["metrics"].values())
    title = (
        f"A = {comparison['a']['file']}, B = {comparison['b']['file']}: delta = mean(A) - mean(B); 95% CI by "
        f"paired cluster bootstrap over dialogues (n_boot={comparison['n_boot']}, seed={comparison['seed']}); "
        f"p: the bootstrap's (dual of the CI), the paired randomization test over dialogues "
        f"({comparison.get('permutations', '-')} permutations, exact for few dialogues), the per-dialogue "
        "paired t-test; d_z = mean / sd of the per-dialogue differences\n"
        f"* = significant by the {TEST_NAMES[test]} after {NAMES[correction]} over "
        + (f"the {members} compared metrics" if family == "board" else f"family {family} ({members} tests)")
        + f" (p adj. <= {ALPHA})"
    )
    head = ["metric", "A", "B", "delta", "95% CI", "p boot", "p perm", "p t", "d_z", "p adj.", "n"]
    return title + "\n" + text_table(head, rows)
