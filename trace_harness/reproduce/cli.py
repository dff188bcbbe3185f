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

ENGINES: tuple[str, ...] = ("client", "ray")


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
        "SmolLM2 on the CPU: slow, over 17 minutes on 2 cores; --dry-run counts its requests first), paper "
        "(every key, commented), demo and demo_llm (the main job's runs, `trace-bench demo`). See "
        "docs/reproducing.md.",
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
    _add_scaling_options(p)
    p.set_defaults(func=_reproduce)


def _add_scaling_options(p: argparse.ArgumentParser) -> None:
    """--shard (a share of the dialogues, merged with `trace-bench merge`) and --engine (who sends the requests)."""
    from trace_bench.options import number_in
    from trace_dataset.shards import shard_argument
    from trace_harness.reproduce.ray_engine import PROCESSORS

    p.add_argument(
        "--shard",
        type=shard_argument,
        default=None,
        metavar="I/N",
        help="live: only shard I of N of every run, interactive run and CoRE run, in OUT/shards/I-of-N/; "
        "join them with --merge-shards N (docs/reproducing.md#scaling-out)",
    )
    p.add_argument(
        "--merge-shards",
        type=number_in(int, 1),
        default=None,
        metavar="N",
        help="join the jobs the N shards (OUT/shards/*-of-N) finished into OUT; then, with nothing left in "
        "the shards, finish live as reproduce CONFIG does (judge, NLI, leaderboard, manifest)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="client",
        help="who sends the LLM requests: client (this process, over the config's servers; default) or ray "
        "(each round through Ray Data's HTTP request processor, answers checked into the response cache as "
        "--import-batch does; needs trace-bench[ray])",
    )
    p.add_argument(
        "--ray-processor",
        choices=PROCESSORS,
        default=PROCESSORS[0],
        help="--engine ray: http (Ray Data's HTTP request processor against the config's servers; default) or "
        "vllm (Ray Data's vLLM engine processor runs each batch file's model itself, on GPUs; needs vllm)",
    )
    p.add_argument(
        "--ray-concurrency",
        type=number_in(int, 1),
        default=1,
        metavar="N",
        help="--engine ray: processor tasks per server (http) or vLLM engine replicas (vllm) (default 1)",
    )


def _reproduce(args: argparse.Namespace) -> int:
    from trace_bench.errors import UsageError
    from trace_dataset.lock import output_lock
    from trace_harness.reproduce.config import load_config

    if args.engine == "ray" and (args.dry_run or args.export_batch or args.import_batch is not None):
        raise UsageError(
            "--engine ray answers the rounds itself: drop --dry-run, --export-batch and --import-batch"
        )
    if args.engine == "ray":
        from trace_harness.reproduce.ray_engine import require_ray, require_vllm

        require_ray()  # before any work: say how to install it
        if args.ray_processor == "vllm":
            require_vllm()
    if (args.price_input is None) != (args.price_output is None):
        raise UsageError("--price-input and --price-output go together: give both (USD per million tokens)")
    config = load_config(args.config)
    if args.shard is not None or args.merge_shards is not None:
        return _shard(args, config)  # each shard's folder and the merge hold their own lock
    with output_lock(config.out, "reproduce output folder"):  # one reproduce per out folder at a time
        return _reproduce_locked(args, config)


def _reproduce_locked(args: argparse.Namespace, config: Any) -> int:
    from trace_bench.shell import display_path, trace_bench_command
    from trace_harness.reproduce.jobs import Context

    ctx = Context(config)
    try:
        if args.dry_run:
            from trace_harness.leaderboard.stats_tables import dry_run_power
            from trace_harness.reproduce.dryrun import format_plan, plan, write_plan

            result = plan(ctx, {"input": args.price_input, "output": args.price_output})
            print(format_plan(result) + "\n\n" + dry_run_power(config))
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
        elif args.engine == "ray":
            from trace_harness.reproduce.ray_engine import run_ray

            board = run_ray(ctx, args.config, concurrency=args.ray_concurrency, processor=args.ray_processor)
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


def _shard(args: argparse.Namespace, config: Any) -> int:
    """--shard I/N (run this shard's jobs) or --merge-shards N (join them, then finish when nothing is left)."""
    from trace_bench.errors import UsageError
    from trace_bench.shell import display_path, trace_bench_command
    from trace_dataset.lock import output_lock
    from trace_harness.reproduce.jobs import Context
    from trace_harness.reproduce.shards import merge_shards, run_shard

    busy = args.dry_run or args.export_batch or args.import_batch is not None or args.engine != "client"
    if busy or (args.shard and args.merge_shards):
        raise UsageError(
            "--shard and --merge-shards run the live path with this process's client, one at a time: drop "
            "--dry-run, --export-batch, --import-batch and --engine"
        )
    if args.merge_shards is not None:
        with output_lock(config.out, "reproduce output folder"):
            result = merge_shards(config, args.merge_shards)
        print(result["line"])
        if not result["finished"]:
            return 0
        args.shard = args.merge_shards = None
        return _reproduce(args)
    ctx = Context(config, shard=args.shard)
    try:
        with output_lock(ctx.config.out, f"reproduce shard {args.shard} folder"):  # one writer per shard
            record = run_shard(ctx)
    finally:
        ctx.close()
    print(f"shard {args.shard}: {len(record['jobs'])} jobs complete in {display_path(ctx.config.out)}")
    if record["waiting"]:
        print(f"  CoRE waits for the merged closed runs: {', '.join(record['waiting'])}")
    merge = trace_bench_command("reproduce", args.config, "--merge-shards", args.shard.count)
    print(f"once every shard is done: {merge}")
    return 0
