"""`trace-bench evaluate`: score a predictions file on a Trace data directory and print the table.

Writes `--out` (values, n, standard deviations, counts, versions, configuration, optional sweeps and
comparison) and, beside it, `<out>.per_item.json.gz` (per-turn / per-dialogue values with dialogue ids, what
the statistics and later comparisons need). Heavy imports stay inside `run` so `trace-bench --help` is fast.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_dataset.constants import ALL_SPLITS, POOLS, SPLITS
from trace_metrics.specs import OPTIONS, SUITE_OPTIONS, Option
from trace_metrics.tables import text_table


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="score a predictions file (all Trace metrics) and write results.json",
        description="Score a predictions JSONL file on one split and pool of a Trace data directory: accuracy, "
        "grounding, text, practical value and recovery (plus entailment with --nli and the LLM judge with "
        "--judge). With --compare, paired cluster-bootstrap CIs and per-dialogue paired t-tests against another "
        "predictions file.",
    )
    p.add_argument("--data", required=True, type=Path, help="Trace data directory (hydrated)")
    p.add_argument(
        "--predictions", required=True, type=Path, help="predictions JSONL (one row per system turn)"
    )
    p.add_argument(
        "--split",
        default="test",
        choices=(*SPLITS, ALL_SPLITS),
        help="split the predictions cover (default test; 'all': every split, the full-corpus headline)",
    )
    p.add_argument("--pool", default="closed", choices=POOLS, help="candidate pool the rankings come from")
    p.add_argument("--out", required=True, type=Path, help="results JSON to write")
    p.add_argument("--nli", metavar="MODEL", help="NLI model id or folder: adds entailment and cgs_ent")
    p.add_argument("--judge", metavar="LLM_SPEC", help="LLM spec (trace_llm): adds the five judge scales")
    p.add_argument(
        "--core",
        metavar="LLM_SPEC",
        help="also run CoRE (12 factors + debate) with this LLM; per-dialogue outputs in <out>.core/ (docs/core.md)",
    )
    p.add_argument(
        "--compare",
        metavar="OTHER_PREDICTIONS",
        type=Path,
        help="a second predictions file: paired cluster bootstrap (by dialogue) and per-dialogue t-tests",
    )
    p.add_argument("--sweeps", action="store_true", help="add the App. L sensitivity sweeps")
    for name in SUITE_OPTIONS:  # the metric options, from their declarations (trace_metrics.specs.OPTIONS)
        add_option(p, OPTIONS[name])
    p.add_argument(
        "--n-boot",
        type=number_in(int, 1),
        default=10_000,
        help="bootstrap resamples for --compare (default 10000)",
    )
    p.add_argument("--seed", type=number_in(int, 0), default=42, help="bootstrap seed (default 42)")
    from trace_llm.cli import add_llm_backend_options

    add_llm_backend_options(
        p.add_argument_group("LLM judge and CoRE (--judge, --core): cache and server options")
    )
    p.set_defaults(func=run)


def add_option(parser: argparse.ArgumentParser, option: Option) -> None:
    """The command-line form of a declared metric option: `--name-with-dashes`, its default, and its admissible
    values checked while the options are parsed (`trace_bench.options.number_in` for numbers)."""
    default = option.default
    if option.type is bool:
        flag = option.flag if not default else "--no-" + option.flag[2:]
        parser.add_argument(
            flag,
            dest=option.name,
            action="store_false" if default else "store_true",
            help=f"{option.help} (default {'on' if default else 'off'})",
        )
        return
    kind: Any = option.type
    if option.type in (int, float):
        kind = number_in(
            option.type,
            -math.inf if option.low is None else option.low,
            math.inf if option.high is None else option.high,
            low_open=option.low_open,
        )
    parser.add_argument(
        option.flag,
        type=kind,
        default=default,
        choices=option.choices or None,
        help=f"{option.help} (default {default})",
    )


def add_convention_arguments(parser: argparse.ArgumentParser) -> None:
    """--compare-hit and --t2r, the readings that move published numbers (docs/metrics.md, "Recovery"), from
    their declarations: `trace-bench leaderboard` takes them as `trace-bench evaluate` does."""
    for name in ("compare_hit", "t2r"):
        add_option(parser, OPTIONS[name])


def _llm_loading(args: argparse.Namespace) -> dict[str, Any]:
    """The --llm-* cache and server options, as `load_llm` keyword arguments (judge and CoRE alike)."""
    from trace_llm.cli import llm_options

    return {"cache_path": False if args.no_llm_cache else args.llm_cache, **llm_options(args)}


def _load_judge(args: argparse.Namespace) -> Any:
    """The --judge LLM with the --llm-* options (a hanging judge server then costs --llm-timeout, not minutes)."""
    if not args.judge:
        return None
    from trace_llm import load_llm

    return load_llm(args.judge, **_llm_loading(args))


def per_item_path(out: Path) -> Path:
    return out.with_name(out.stem + ".per_item.json.gz")


def run(args: argparse.Namespace) -> int:
    import gc
    import json

    from trace_dataset.io import atomic_open, check_output_file, sha256_file, write_json
    from trace_metrics.lib import suite

    check_output_file(args.out)  # a folder, a path under a file or an unwritable place fails before scoring

    options: dict[str, Any] = {name: getattr(args, name) for name in SUITE_OPTIONS}
    options["sweeps"] = args.sweeps
    kb = suite.load_kb(args.data)
    gc.freeze()  # the knowledge base lives until exit: spare the cyclic GC from rescanning it (~10% faster)
    judge = _load_judge(args)
    try:
        result = suite.evaluate_run(
            args.data, args.predictions, args.split, args.pool, args.nli, judge, kb=kb, **options
        )
        per_item = result.pop("per_item")
        if args.compare is not None:
            other = suite.evaluate_run(
                args.data, args.compare, args.split, args.pool, args.nli, judge, kb=kb, **options
            )
            result["comparison"] = {
                "a": {"file": args.predictions.name, "sha256": result["config"]["predictions"]["sha256"]},
                "b": {"file": args.compare.name, "sha256": sha256_file(args.compare)},
                "n_boot": args.n_boot,
                "seed": args.seed,
                "metrics": compare(
                    per_item, other["per_item"], n_boot=args.n_boot, seed=args.seed, cd_gate=args.cd_gate
                ),
            }
    finally:
        if judge is not None:
            judge.close()
    if not _is_main_process():
        return 0  # under `accelerate launch` every process scores its NLI shard; only the main one writes
    if args.core:  # CoRE (docs/core.md): resumable per-dialogue outputs beside --out
        from trace_metrics.core.cli import core_out_dir, run_for_evaluate

        result["core"] = run_for_evaluate(
            args.data, args.predictions, args.split, args.core, core_out_dir(args.out), **_llm_loading(args)
        )
    write_json(args.out, result)
    with atomic_open(per_item_path(args.out), "w") as f:
        json.dump(per_item, f, ensure_ascii=False, separators=(",", ":"))
    print(format_table(result))
    if "sweeps" in result:
        print()
        print(format_sweeps(result["sweeps"]))
    if "comparison" in result:
        print()
        print(format_comparison(result["comparison"]))
    if "core" in result:
        from trace_metrics.core.cli import format_summary

        print(f"\nCoRE ({args.core}; outputs in {result['core']['out_dir']}/)")
        print(format_summary(result["core"]["summary"]))
    print(f"\nwrote {args.out} and {per_item_path(args.out)}")
    return 0


def compare(a: dict, b: dict, n_boot: int = 10_000, seed: int = 42, cd_gate: float = 0.05) -> dict[str, dict]:
    """Paired cluster bootstrap (resampling dialogues) and per-dialogue paired t-test for every metric
    with per-item values in both runs (`lib.stats`); `cgs` / `cgs_ent`, formulas of means, get the
    paired bootstrap of the formula itself (`intervals`, no t-test: they have no per-dialogue values)."""
    import logging

    from trace_metrics.lib import intervals, stats

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
            keep = [
                i
                for i, (x, y) in enumerate(zip(xs, other[metric], strict=True))
                if x is not None and y is not None
            ]
            if not keep:
                continue
            x = [xs[i] for i in keep]
            y = [other[metric][i] for i in keep]
            clusters = [items["dialogue_id"][i] for i in keep]
            boot = stats.paired_cluster_bootstrap(x, y, clusters, n_boot=n_boot, seed=seed)
            try:
                t = stats.paired_ttest(x, y, clusters=clusters)
            except ValueError as e:  # fewer than two dialogues
                t = {"t": None, "p": None, "error": str(e)}
            out[metric] = {
                **{
                    k: boot[k]
                    for k in (
                        "mean_a",
                        "mean_b",
                        "delta",
                        "ci_low",
                        "ci_high",
                        "significant",
                        "n",
                        "n_clusters",
                    )
                },
                "ttest_t": _finite(t.get("t")),
                "ttest_p": _finite(t.get("p")),
                "ttest_n_dialogues": t.get("n"),
                **({"note": boot["note"]} if "note" in boot else {}),
            }
    flat = sorted(m for m, c in out.items() if "note" in c)
    if flat:
        logging.getLogger(__name__).warning("no interval for %s: %s", ", ".join(flat), stats.NO_VARIANCE)
    ta, tb = intervals.dialogue_table(a, cd_gate), intervals.dialogue_table(b, cd_gate)
    both = [m for m in intervals.COMPOSITES if m in ta.metrics() and m in tb.metrics()]
    if both and ta.dialogues == tb.dialogues:
        ra, rb = intervals.bootstrap([ta, tb], [both, both], n_boot=n_boot, seed=seed)
        for m in both:
            ci = intervals.percentile_interval(ra[m] - rb[m])
            if ci is None:
                continue
            mean_a, mean_b = intervals.point_value(ta, m), intervals.point_value(tb, m)
            parts = intervals.COMPOSITES[m]
            out[m] = {
                "mean_a": mean_a,
                "mean_b": mean_b,
                "delta": None if mean_a is None or mean_b is None else mean_a - mean_b,
                "ci_low": ci[0],
                "ci_high": ci[1],
                "significant": bool(ci[0] > 0 or ci[1] < 0),
                "n": int(ta.counts[parts[0]].sum()),
                "n_clusters": ta.n_dialogues,
                "ttest_t": None,
                "ttest_p": None,
                "ttest_n_dialogues": None,
            }
    return out


def _finite(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def format_table(result: dict) -> str:
    from trace_metrics.specs import METRICS

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
                _fmt(c["ttest_p"]),
                str(c["n"]),
            ]
        )
    title = (
        f"A = {comparison['a']['file']}, B = {comparison['b']['file']}: delta = mean(A) - mean(B), 95% CI by paired "
        f"cluster bootstrap over dialogues (n_boot={comparison['n_boot']}, seed={comparison['seed']}; * = CI excludes 0), "
        "p = per-dialogue paired t-test"
    )
    return title + "\n" + text_table(["metric", "A", "B", "delta", "95% CI", "t-test p", "n"], rows)


def _is_main_process() -> bool:
    """False only in the non-main processes of a distributed launch (accelerate / torchrun)."""
    import os

    return os.environ.get("RANK", "0") == "0"
