"""`trace-bench run`: predictions of one baseline (or all) for a split of a Trace data directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from baselines import COUNTERFACTUAL_BASELINES, LLM_BASELINES, NON_LLM_BASELINES, SYSTEM_BASELINES
from baselines.identity import BY_NAME as IDENTITIES_BY_NAME
from baselines.identity import IDENTITIES
from baselines.llm import (
    APP_F_MAX_NEW_TOKENS,
    APP_F_TEMPERATURE,
    PREFILTER_BASELINES,
    PREFILTERS,
    REASONING_MAX_NEW_TOKENS,
    REASONING_TEMPERATURE,
)
from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_bench.shell import trace_bench_command
from trace_dataset.constants import ALL_SPLITS, POOLS, SEED, SPLITS
from trace_dataset.shards import add_shard_argument
from trace_harness.protocols.params import key_value_param
from trace_llm import add_llm_argument
from trace_llm.options import OPTIONS

# The decoding flags: None when not given (the six LLM baselines then get App. F's value, the systems their own).
# A None temperature / max_new_tokens reaches the pipeline, which takes App. F's for its model (reasoning or not).
DECODING_FLAGS: dict[str, tuple[str, Any]] = {
    "temperature": ("temperature", None),
    "top_p": ("top_p", 1.0),
    "max_new_tokens": ("max_new_tokens", None),
    "llm_seed": ("seed", SEED),
}
APP_F_HELP = {
    "temperature": f"0 = greedy, at most 5 (default for the LLM baselines: App. F's, {APP_F_TEMPERATURE}; "
    f"{REASONING_TEMPERATURE} for a reasoning model such as gpt-5.4-mini; collab_rec, sniprec*: their own)",
    "max_new_tokens": f"tokens per answer (default for the LLM baselines: App. F's, {APP_F_MAX_NEW_TOKENS}; "
    f"{REASONING_MAX_NEW_TOKENS} for a reasoning model; collab_rec, sniprec*: their own); less than a system's "
    "constrained replies need to close is refused, naming the least (docs/llm.md)",
}


def register_run(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a baseline over a split and write its predictions (JSON lines)",
        description="Run a baseline pipeline over every system turn of a split and write the predictions "
        "file (resumable: rerun the same command after an interruption). Run metadata goes to FILE.meta.json.",
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help=f"baseline name: {', '.join(NON_LLM_BASELINES)}; with an LLM: "
        f"{', '.join(LLM_BASELINES)}; the systems of other papers: "
        f"{', '.join(SYSTEM_BASELINES)} (collab_rec asks an LLM, the packaged one "
        "unless --llm names another; sniprec* run offline without --llm); the deliberately bad systems of "
        f"the simulator report: {', '.join(COUNTERFACTUAL_BASELINES)}",
    )
    target.add_argument(
        "--all", action="store_true", help="the nine non-LLM baselines; --out is then a folder"
    )
    target.add_argument(
        "--all-llm",
        action="store_true",
        help="the six LLM baselines with the --llm model; --out is then a folder",
    )
    p.add_argument(
        "--data", required=True, metavar="DIR", help="Trace data directory (data/ and knowledge_base/)"
    )
    p.add_argument(
        "--split", default="test", choices=(*SPLITS, ALL_SPLITS), help="split to run (default: test)"
    )
    p.add_argument("--pool", default="closed", choices=POOLS, help="candidate pool (default: closed)")
    p.add_argument("--out", required=True, metavar="FILE|DIR", help="predictions file (a folder with --all)")
    p.add_argument(
        "--batch-size", type=number_in(int, 1), default=64, help="rows per _forward call (default: 64)"
    )
    p.add_argument(
        "--num-proc", type=number_in(int, 1), default=1, help="worker processes (same output for any value)"
    )
    p.add_argument(
        "--param",
        action="append",
        type=key_value_param,
        default=[],
        metavar="KEY=VALUE",
        help="baseline parameter (JSON value), e.g. --param text_weight=0.6; repeatable",
    )
    p.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--subset",
        type=number_in(int, 1),
        default=None,
        metavar="N",
        help="run on a seeded N-dialogue subset of the split (the paper's open set: --pool open "
        "--subset 1000), written once as a data directory beside --out to evaluate against",
    )
    p.add_argument(
        "--subset-seed", type=number_in(int, 0), default=SEED, help=f"seed of --subset (default: {SEED})"
    )
    add_shard_argument(p)
    _add_llm_options(p)
    # None: not given (LLM baselines then use the default model and App. F's decoding; the systems their own)
    p.set_defaults(func=_run, llm=None, **dict.fromkeys(DECODING_FLAGS))


def _add_llm_options(p: argparse.ArgumentParser) -> None:
    """The --llm options, --prefilter and --snippets, with App. F's defaults named in their help."""
    llm = add_llm_argument(p, temperature=APP_F_TEMPERATURE, max_new_tokens=APP_F_MAX_NEW_TOKENS)
    llm.add_argument(
        "--prefilter",
        choices=PREFILTERS,
        default=None,
        help="LLM baselines with a candidate prompt (" + ", ".join(PREFILTER_BASELINES) + "): how a "
        "pool larger than 16 is cut for the prompt (default: tfidf, App. Q; dense: Table 25)",
    )
    p.add_argument(
        "--snippets",
        choices=("rules", "llm"),
        default=None,
        help="sniprec, sniprec_snippet: item snippets from the deterministic rules (offline) or from the "
        "--llm model (same as --param snippets=...; default: llm with --llm, else rules)",
    )
    # a backend option some systems declare a default of: its help names them (baselines.identity)
    declared = {OPTIONS[k].dest: OPTIONS[k].help_text(v) for k, v in system_llm_options().items()}
    for action in llm._group_actions:
        if action.dest in declared:
            action.help = declared[action.dest]
        elif action.dest in APP_F_HELP:
            action.help = APP_F_HELP[action.dest]
        elif (
            action.dest in DECODING_FLAGS and action.help
        ):  # the help keeps App. F's value, which the six LLM baselines use
            action.help = f"{action.help[:-1]} for the LLM baselines; collab_rec, sniprec*: their own)"


def system_llm_options() -> dict[str, dict[str, Any]]:
    """The backend options the systems declare for their runs (`baselines.identity`: `llm_options`), by option,
    then system: {"parallel": {"collab_rec": 4}}."""
    out: dict[str, dict[str, Any]] = {}
    for record in IDENTITIES:
        for option, value in record.llm_options:
            out.setdefault(option, {})[record.name] = value
    return out


def llm_params(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The LLM parameters the --llm options describe (the runner's workers rebuild the model from them).

    The six LLM baselines get every setting (App. F's decoding where no flag is given, the default model where
    --llm is not); the systems of other papers that take them (the identity table's `llm`: Collab-REC always,
    SnipRec's optionally) only what was given, so that their own defaults stand. A backend option no flag gives
    is the system's own where its identity record declares one (`llm_options`: Collab-REC decodes 4 side by
    side) and it runs with an LLM.
    """
    from trace_llm import DEFAULT_SPEC
    from trace_llm.cli import llm_options

    options = llm_options(args)
    own = name not in LLM_BASELINES
    params: dict[str, Any] = {"llm": args.llm if own else args.llm or DEFAULT_SPEC}
    for flag, (key, app_f) in DECODING_FLAGS.items():
        value = getattr(args, flag)
        params[key] = app_f if value is None and not own else value
    params["llm_cache"] = False if args.no_llm_cache else (str(args.llm_cache) if args.llm_cache else None)
    # a flag given wins; else the system's own default (baselines.identity), where it runs with an LLM
    record = IDENTITIES_BY_NAME[name]
    declared = dict(record.llm_options) if record.llm == "always" or args.llm else {}
    merged = {**declared, **{k: v for k, v in options.items() if v is not None}}
    params["llm_options"] = {k: merged[k] for k in options if k in merged}  # the flags' order
    if own:
        params = {k: v for k, v in params.items() if v is not None and v != {}}
    if args.prefilter and name in PREFILTER_BASELINES:
        params["prefilter"] = args.prefilter
    return params


def _report(name: str, meta: dict[str, Any], out: str, line: str | None = None) -> str:
    """The line printed for a finished run, then what the run counted, its LLM usage and how to score a subset."""
    line = line or f"{name}: {meta['n_rows']} predictions ({meta['split']}, pool {meta['pool']}) in {out}"
    summary = meta.get("summary") or {}
    if summary.get("rows"):
        line += "\n  counted: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["rows"].items()))
    usage = (summary.get("usage") or {}).get("llm_usage")
    if usage:
        line += "\n  LLM usage: " + ", ".join(f"{k} {v}" for k, v in usage.items())
    if summary.get("rows") or usage:
        from trace_harness.fallbacks import fallback_line, fallback_report

        line += "\n  fallbacks and failures: " + fallback_line(fallback_report(meta))
    if meta.get("subset"):
        results = Path(out).with_name(Path(out).name.removesuffix(".jsonl") + ".results.json")  # one per run
        score = trace_bench_command(
            "evaluate",
            "--data",
            Path(meta["subset"]["data_dir"]),
            "--predictions",
            Path(out),
            "--split",
            meta["split"],
            "--pool",
            meta["pool"],
            "--out",
            results,
        )
        line += f"\n  subset of {meta['subset']['n']} dialogues (seed {meta['subset']['seed']}); score it with: {score}"
    return line


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from trace_harness.protocols.params import usage_error
    from trace_harness.protocols.teacher_forced.runner import run_all, run_baseline

    if args.snippets and args.name:
        args.param.append(("snippets", args.snippets))
    problem = usage_error(args)
    if problem:
        raise UsageError(problem)
    kwargs = dict(
        split=args.split,
        pool=args.pool,
        batch_size=args.batch_size,
        num_proc=args.num_proc,
        params=dict(args.param),
        overwrite=args.overwrite,
        progress=not args.no_progress,
        subset=args.subset,
        subset_seed=args.subset_seed,
        shard=args.shard,
    )
    llm_given = args.llm is not None or args.prefilter is not None
    if args.all or args.all_llm:
        flag = "--all" if args.all else "--all-llm"
        if args.param:
            raise UsageError(f"--param applies to one baseline; drop it with {flag}")
        if args.all and llm_given:
            raise UsageError(
                "--llm and --prefilter are for the LLM baselines; use --all-llm (--all runs the nine "
                "non-LLM baselines)"
            )
        names = None if args.all else list(LLM_BASELINES)  # None: run_all's default, the nine non-LLM ones
        per_name = {n: llm_params(args, n) for n in LLM_BASELINES} if args.all_llm else None
        results = run_all(args.data, args.out, names=names, per_name_params=per_name, **kwargs)
        failed = {n: r for n, r in results.items() if isinstance(r, str)}
        for name, result in results.items():
            out = Path(args.out) / (name + ".jsonl")
            if isinstance(result, str):
                print(f"{name:12s} FAILED ({result})  {out}")
            else:
                print(_report(name, result, str(out), f"{name:12s} {result['n_rows']} rows  {out}"))
        return 1 if failed else 0
    if args.prefilter and args.name not in PREFILTER_BASELINES:
        raise UsageError(f"--prefilter applies to {', '.join(PREFILTER_BASELINES)}, not {args.name}")
    takes_llm = tuple(i.name for i in IDENTITIES if i.llm)  # the identity table: always, or optionally
    if args.name in takes_llm:
        kwargs["params"] = {**llm_params(args, args.name), **kwargs["params"]}
    elif llm_given:
        raise UsageError(
            f"{args.name} is not an LLM baseline; --llm applies to {', '.join(takes_llm)} "
            f"and --prefilter to {', '.join(PREFILTER_BASELINES)}"
        )
    meta = run_baseline(args.name, args.data, args.out, **kwargs)
    print(_report(args.name, meta, args.out))
    return 0
