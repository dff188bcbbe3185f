"""`trace-bench interact`: a simulated traveler talks to a system; logs and metrics go to --out.

trace-bench interact --system tfidf --data DIR --out runs/interactive/tfidf
trace-bench interact --system http://127.0.0.1:8080/turn --data DIR --out runs/interactive/mine
trace-bench interact --system openai:http://127.0.0.1:8000/v1#my-crs --data DIR --out runs/interactive/chat
trace-bench interact --system tfidf --simulator llm --llm smollm2 --data DIR --out runs/interactive/tfidf_llm
trace-bench interact --protocol sniprec --system tfidf --data CATALOGUE --out runs/sniprec/tfidf
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import byte_size, number_in, positive_seconds
from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES, POOLS, SPLITS
from trace_dataset.shards import add_shard_argument
from trace_harness.protocols.params import key_value_param


def _user_reviews(text: str) -> tuple[int, int]:
    lo, sep, hi = text.partition("-")
    try:
        pair = (int(lo), int(hi)) if sep else (int(lo), int(lo))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO-HI (e.g. 10-99), got {text!r}") from None
    if not 1 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"expected 1 <= LO <= HI, got {text!r}")
    return pair


def register(subparsers: Any) -> None:
    from trace_llm.cli import add_llm_argument

    p = subparsers.add_parser(
        "interact",
        help="let a simulated traveler talk to a system and score the live conversations",
        description="Seed simulated travelers from corpus dialogues (their persona and hidden preferences), let "
        "each talk to a system (a registered baseline NAME, an HTTP endpoint http(s)://..., or an OpenAI-compatible "
        "chat endpoint openai:BASE_URL#MODEL) and write the conversations (dialogue records + predictions), the "
        "travelers' hidden side and metrics.json (per-turn Hits@k/MRR/position, Trace metrics of the live turns, "
        "lost turns) to --out. --protocol sniprec runs SnipRec's simulator protocol on a catalogue instead. "
        "Resumable: rerun the same command after an interruption.",
    )
    p.add_argument(
        "--system",
        required=True,
        metavar="NAME|URL",
        help="a registered baseline (tfidf, dense, ..., sniprec), http(s)://... (docs/interactive.md, the "
        "HTTP contract) or openai:BASE_URL#MODEL (an OpenAI-compatible chat endpoint)",
    )
    p.add_argument(
        "--data",
        required=True,
        metavar="DIR",
        help="trace: a Trace data directory (a generated corpus or a hydrated release); sniprec: a catalogue "
        "(trace-bench kb build --cities ... --all)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (logs and metrics.json)")
    p.add_argument("--protocol", default="trace", choices=("trace", "sniprec"), help="default: trace")
    p.add_argument(
        "--simulator",
        default="rules",
        choices=("rules", "llm"),
        help="rules (offline, deterministic; default) or llm (--llm SPEC words the traveler)",
    )
    _add_dialogue_options(p)
    _add_external_options(p)
    p.add_argument(
        "--batch-dialogues",
        type=number_in(int, 1),
        default=64,
        help="dialogues run in lockstep (one batched system call per turn; the output does not depend "
        "on it; a system that is not session-isolated runs one at a time); default 64",
    )
    p.add_argument(
        "--user-reviews",
        type=_user_reviews,
        default=(10, 99),
        metavar="LO-HI",
        help="sniprec: seed users' review count range (default 10-99, SnipRec §5.1)",
    )
    p.add_argument(
        "--bootstrap",
        type=number_in(int, 1),
        default=10_000,
        help="cluster-bootstrap resamples (default 10000)",
    )
    p.add_argument(
        "--no-counterfactual",
        action="store_true",
        help="trace: leave out the simulator report's counterfactual check (by default the deliberately bad "
        "systems random_pick and contrary talk to the same travellers, in OUT/counterfactual/)",
    )
    p.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_llm_argument(p)
    p.set_defaults(func=_run)


def _add_dialogue_options(p: argparse.ArgumentParser) -> None:
    """Which dialogues, how long, on which pool, with which seed and parameters."""
    p.add_argument(
        "--turns",
        type=number_in(int, 1),
        default=None,
        help="system turns per dialogue at most (default: 8 for trace, 5 for sniprec)",
    )
    p.add_argument(
        "--n",
        type=number_in(int, 1),
        default=None,
        metavar="DIALOGUES",
        help="number of dialogues (trace: the first N of --split; sniprec: N seed pairs; default: all / 1000)",
    )
    p.add_argument(
        "--split", default="test", choices=SPLITS, help="split the travelers are seeded from (default test)"
    )
    p.add_argument("--pool", default="closed", choices=POOLS, help="trace: candidate pool (default closed)")
    p.add_argument(
        "--seed", type=number_in(int, 0), default=42, help="simulator and tie-breaking seed (default 42)"
    )
    add_shard_argument(p)
    p.add_argument(
        "--param",
        action="append",
        type=key_value_param,
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of the baseline (JSON value), e.g. --param llm=openai:http://host/v1#m; repeatable",
    )


def _add_external_options(p: argparse.ArgumentParser) -> None:
    """What an external system (HTTP or chat endpoint) runs under."""
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="external systems: deadline of one turn's whole reply; later replies lose the turn (default 30)",
    )
    p.add_argument(
        "--concurrency",
        type=number_in(int, 1),
        default=8,
        help="external systems: requests in flight (default 8)",
    )
    p.add_argument(
        "--max-reply-bytes",
        type=byte_size,
        default=MAX_PREDICTION_LINE_BYTES,
        metavar="BYTES",
        help="external systems: a longer reply loses the turn, read no further (default 1M, the "
        "prediction row limit of trace-bench submit; suffixes K, M, G)",
    )


def _check_system(args: argparse.Namespace) -> None:
    """The system and its parameters, checked before anything is loaded or written."""
    if args.system.startswith(("http://", "https://")):
        from trace_harness.protocols.interactive.http_system import check_system_url

        check_system_url(args.system)
    elif not args.system.startswith("openai:"):
        from baselines import BASELINES
        from trace_harness.protocols.params import check_params

        if args.system not in BASELINES:
            raise UsageError(
                f"unknown system {args.system!r}; expected a baseline "
                f"({', '.join(BASELINES)}), http(s)://... or openai:BASE_URL#MODEL"
            )
        problem = check_params(args.system, dict(args.param))
        if problem:
            raise UsageError(problem)


def _run(args: argparse.Namespace) -> int:
    from trace_harness.protocols.interactive.report import summary_text
    from trace_llm.cli import llm_from_args

    _check_system(args)
    llm = llm_from_args(args) if args.simulator == "llm" else None
    common = dict(
        simulator=args.simulator,
        llm=llm,
        n=args.n,
        split=args.split,
        seed=args.seed,
        params=dict(args.param),
        timeout=args.timeout,
        concurrency=args.concurrency,
        batch_dialogues=args.batch_dialogues,
        overwrite=args.overwrite,
        progress=not args.no_progress,
        n_boot=args.bootstrap,
        max_reply_bytes=args.max_reply_bytes,
    )
    try:
        if args.protocol == "sniprec":
            from trace_harness.protocols.interactive.simulator.sniprec_seeds import SeedCriteria
            from trace_harness.protocols.interactive.sniprec import SNIPREC_TURNS, run_sniprec

            if args.shard is not None:
                raise UsageError("--shard applies to --protocol trace (sniprec's seed pairs are not sharded)")
            if args.pool != "closed":
                raise UsageError(
                    "--pool does not apply to --protocol sniprec (the whole catalogue is ranked)"
                )
            metrics = run_sniprec(
                args.system,
                args.data,
                args.out,
                turns=args.turns or SNIPREC_TURNS,
                criteria=SeedCriteria(user_reviews=args.user_reviews),
                **common,
            )
        else:
            from trace_harness.protocols.interactive.run import DEFAULT_TURNS, run_interactive

            metrics = run_interactive(
                args.system,
                args.data,
                args.out,
                turns=args.turns or DEFAULT_TURNS,
                pool=args.pool,
                shard=args.shard,
                counterfactual=not args.no_counterfactual,
                **common,
            )
    except (KeyError, ValueError) as e:
        from trace_bench.errors import TraceBenchError

        if isinstance(e, TraceBenchError):
            raise
        raise UsageError(str(e).strip("'\"")) from None  # a pipeline's own parameter checks
    finally:
        if llm is not None:
            llm.close()
    print(summary_text(metrics))
    if args.protocol == "trace":
        _print_report(args.out)
    print(f"\nlogs and metrics.json written to {args.out}")
    return 0


def _print_report(out: str) -> None:
    """The simulator report's verdict line, after the run's summary."""
    from trace_harness.protocols.interactive.validity.report import REPORT_MD, figures, read_report

    report = read_report(out)
    if report is not None:
        print(f"\n{figures(report)} ({Path(out) / REPORT_MD})")
