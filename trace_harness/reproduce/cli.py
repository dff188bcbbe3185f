"""`trace-bench reproduce CONFIG`: every part of the paper a config asks for, resumable.

    trace-bench reproduce CONFIG                       # live: plan, preflight, run, leaderboard, manifest
    trace-bench reproduce CONFIG --dry-run             # requests, tokens, cost per part; nothing is sent
    trace-bench reproduce CONFIG --export-batch        # the next round of OpenAI batch files (or the finish)
    trace-bench reproduce CONFIG --import-batch FILE.. # answers of a round, into the response cache

CONFIG is a .yaml/.toml file or the name of a packaged example (offline, paper, demo, demo_llm). One
invocation per out folder at a time: a second is refused while the first holds OUT.lock. docs/reproducing.md.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    from trace_bench.options import number_in
    from trace_harness.reproduce.config import EXAMPLES

    p = subparsers.add_parser(
        "reproduce",
        help="run the paper's tables from one config (live, dry run, or OpenAI batch files)",
        description="Reproduce the parts of the Trace paper a config file asks for (tables 5, 6 and 9, CoRE, the "
        "interactive protocol, NLI, the LLM judge) through `trace-bench run`, `interact`, `core`, `evaluate` and "
        "`leaderboard`, resumably, and end with the leaderboard (the Space's data) and OUT/manifest.json. "
        "CONFIG: a .yaml or .toml file, or a packaged example: offline (the built-in corpus and the packaged "
        "SmolLM2, minutes), paper (every key, commented), demo and demo_llm (the main job's runs, "
        "`trace-bench demo`). See docs/reproducing.md.",
    )
    p.add_argument(
        "config",
        metavar="CONFIG",
        help=f"config file (.yaml, .toml) or packaged example: {', '.join(EXAMPLES)}",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--dry-run",
        action="store_true",
        help="count each part's LLM requests, prompt and output tokens and cost; send nothing",
    )
    mode.add_argument(
        "--export-batch",
        action="store_true",
        help="advance from the response cache, then write the next round of OpenAI batch files "
        "(OUT/batch/round-N/); with nothing left to ask, finish the run from the cache",
    )
    mode.add_argument(
        "--import-batch",
        nargs="+",
        metavar="FILE",
        default=None,
        help="import batch output files (OpenAI batch output format, e.g. from vLLM's run_batch) "
        "into the response cache, checked against the exported requests and the model",
    )
    p.add_argument(
        "--price-input",
        type=number_in(float, 0),
        default=None,
        metavar="USD",
        help="dry run: USD per million prompt tokens for models whose config gives no price",
    )
    p.add_argument(
        "--price-output",
        type=number_in(float, 0),
        default=None,
        metavar="USD",
        help="dry run: USD per million output tokens for models whose config gives no price",
    )
    p.add_argument(
        "--no-plan",
        action="store_true",
        help="live: skip the planning pass (progress bars then have no total and no ETA)",
    )
    p.add_argument(
        "--no-preflight", action="store_true", help="live: skip the preflight request to every server"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    from trace_bench.errors import UsageError
    from trace_dataset.lock import output_lock
    from trace_harness.reproduce.config import load_config

    if (args.price_input is None) != (args.price_output is None):
        raise UsageError("--price-input and --price-output go together: give both (USD per million tokens)")
    config = load_config(args.config)
    with output_lock(config.out, "reproduce output folder"):  # one reproduce per out folder at a time
        return _reproduce_locked(args, config)


def _reproduce_locked(args: argparse.Namespace, config: Any) -> int:
    from trace_bench.shell import display_path, trace_bench_command
    from trace_harness.reproduce.jobs import Context

    ctx = Context(config)
    try:
        if args.dry_run:
            from trace_harness.reproduce.dryrun import format_plan, plan, write_plan

            result = plan(ctx, {"input": args.price_input, "output": args.price_output})
            print(format_plan(result))
            print(f"\nwrote {display_path(write_plan(config, result))}")
            return 0
        if args.import_batch is not None:
            from trace_harness.reproduce.rounds import format_imports, import_outputs

            print(format_imports(import_outputs(ctx, args.import_batch), args.config))
            return 0
        if args.export_batch:
            from trace_harness.reproduce.rounds import export_round, format_export

            result = export_round(ctx, args.config)
            if not result["finished"]:
                print(format_export(result, args.config))
                return 0
            board = result["board"]
            print(
                "nothing left to ask: every request of this config is in the response cache; finished from it"
            )
        else:
            from trace_harness.reproduce.run import run_live

            board = run_live(
                ctx,
                args.config,
                plan=not args.no_plan,
                preflight=not args.no_preflight,
                progress=not args.no_progress,
            )
    finally:
        ctx.close()
    print(board["text"])
    json_path = board["paths"].get("json")
    print(
        f"\nwrote {display_path(board['manifest'])} and the leaderboard in {display_path(config.out / 'leaderboard')}"
    )
    if json_path:
        print(f"serve it: {trace_bench_command('serve', '--baselines', json_path)}")
    return 0
