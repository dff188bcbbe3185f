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

from trace_bench.options import number_in
from trace_dataset.constants import ALL_SPLITS, POOLS, SPLITS
from trace_metrics.specs import OPTIONS, SUITE_OPTIONS, Option


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="score a predictions file (all Trace metrics) and write results.json",
        description="Score a predictions JSONL file on one split and pool of a Trace data directory: accuracy, "
        "grounding, text, practical value and recovery (plus entailment with --nli and the LLM judge with "
        "--judge). With --compare, against another predictions file: paired cluster-bootstrap CIs, the paired "
        "randomization test and per-dialogue paired t-tests, effect sizes, and significance after Holm's "
        "correction over the compared metrics.",
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
        help="a second predictions file: paired bootstrap, randomization and t-tests by dialogue, corrected",
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
    p.add_argument(
        "--seed", type=number_in(int, 0), default=42, help="bootstrap and permutation seed (default 42)"
    )
    add_significance_arguments(p, "--compare's significance")
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


def add_significance_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """--test, --correction, --family and --permutations (`trace_metrics.lib.significance`), for the marks and
    comparisons of `what` (docs/leaderboard.md, "Significance"): `trace-bench evaluate --compare`,
    `trace-bench leaderboard` and `trace-bench stats compare` take the same ones."""
    from trace_metrics.lib import significance as sig

    parser.add_argument(
        "--test",
        choices=sig.TESTS,
        default=sig.DEFAULT_TEST,
        help=f"the test behind {what} (default {sig.DEFAULT_TEST}: the paired cluster bootstrap; "
        "randomization: the paired permutation test over dialogues; ttest: the paper's per-dialogue t-test)",
    )
    parser.add_argument(
        "--correction",
        choices=sig.CORRECTIONS,
        default=sig.DEFAULT_CORRECTION,
        help=f"multiple-comparison control (default {sig.DEFAULT_CORRECTION}: Holm; bh: Benjamini-Hochberg)",
    )
    parser.add_argument("--family", type=_family, default=sig.Family(), help=sig.FAMILY_HELP)
    parser.add_argument(
        "--permutations",
        type=number_in(int, 1),
        default=sig.N_PERM,
        help=f"randomization test: Monte Carlo assignments, exact when 2^dialogues is no more (default {sig.N_PERM})",
    )


def _family(text: str) -> Any:
    """--family's value: 'board', 'column' or metric ids (each a declared metric)."""
    from trace_metrics.lib.significance import Family
    from trace_metrics.specs import METRICS

    try:
        family = Family.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    unknown = [m for m in family.metrics if m not in METRICS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown metric ids {unknown}; expected ids such as recall@1, cgs")
    return family


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


def run(args: argparse.Namespace) -> int:
    import gc
    import json

    from trace_dataset.io import atomic_open, check_output_file, sha256_file, write_json
    from trace_metrics.lib import suite
    from trace_metrics.lib.significance import compare
    from trace_metrics.report import format_comparison, format_sweeps, format_table, per_item_path

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
                "test": args.test,
                "correction": args.correction,
                "family": args.family.describe(),
                "permutations": args.permutations,
                "metrics": compare(
                    per_item,
                    other["per_item"],
                    n_boot=args.n_boot,
                    seed=args.seed,
                    cd_gate=args.cd_gate,
                    test=args.test,
                    correction=args.correction,
                    family=args.family,
                    n_perm=args.permutations,
                ),
            }
    finally:
        if judge is not None:
            judge.close()
    if not _is_main_process():
        return 0  # under `accelerate launch` every process scores its NLI shard; only the main one writes
    if args.core:  # CoRE (docs/core.md): resumable per-dialogue outputs beside --out
        from trace_metrics.core.runner import core_out_dir, run_for_evaluate

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
        from trace_metrics.core.reliability import read_verdicts
        from trace_metrics.core.report import format_summary

        print(f"\nCoRE ({args.core}; outputs in {result['core']['out_dir']}/)")
        print(format_summary(result["core"]["summary"], read_verdicts(result["core"]["out_dir"])))
    print(f"\nwrote {args.out} and {per_item_path(args.out)}")
    return 0


def _is_main_process() -> bool:
    """False only in the non-main processes of a distributed launch (accelerate / torchrun)."""
    import os

    return os.environ.get("RANK", "0") == "0"
