"""`trace-bench demo`: the main job on the built-in synthetic data (trace_harness.main_job.job)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trace_bench.options import number_in
from trace_dataset.constants import SEED, SPLITS
from trace_harness.main_job.layout import DEFAULT_OUT


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="the main job: synthetic Yelp bundle -> KB -> dialogues -> release -> hydration -> "
        "stats -> baselines -> leaderboard -> interactive runs -> app",
        description="Run every stage on the built-in synthetic Yelp bundle (defaults: the full bundle, the "
        "paper's 100 POIs per city x type, 10,000 dialogues, all nine baselines on the test split, "
        "closed and open pools, then each of them live with the rules traveller). Each stage is "
        "skipped when its output already exists, so an interrupted run resumes; the settings are "
        "recorded in OUT/demo.json and a rerun with other settings is refused.",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"working folder (default {DEFAULT_OUT})")
    p.add_argument(
        "--n", type=number_in(int, 1), default=10_000, help="dialogues to generate (default 10,000)"
    )
    p.add_argument(
        "--scale",
        type=number_in(float, 0, low_open=True),
        default=1.0,
        help="size of the synthetic Yelp bundle (default 1.0)",
    )
    p.add_argument(
        "--per-cell",
        type=number_in(int, 1),
        default=None,
        help="POIs per city x type in the KB (default 100)",
    )
    p.add_argument("--seed", type=number_in(int, 0), default=SEED)
    p.add_argument(
        "--split", default="test", choices=SPLITS, help="split the baselines run on (default test)"
    )
    p.add_argument("--baselines", default="all", help="comma-separated baseline names, or 'all' (default)")
    p.add_argument(
        "--workers",
        type=number_in(int, 1),
        default=None,
        help="generator and interactive worker processes (default: CPU count)",
    )
    p.add_argument(
        "--num-proc", type=number_in(int, 1), default=1, help="worker processes per baseline run (default 1)"
    )
    p.add_argument(
        "--no-interactive",
        action="store_true",
        help="skip the interactive runs (each baseline with the rules traveller on the whole split)",
    )
    p.add_argument(
        "--interactive-n",
        type=number_in(int, 1),
        default=None,
        metavar="N",
        help="travellers of the interactive runs: the first N dialogues of the split (default: all)",
    )
    p.add_argument("--serve", action="store_true", help="start the leaderboard app at the end")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=number_in(int, 0, 65535), default=7860)
    p.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    from trace_harness.main_job.job import run_demo
    from trace_harness.main_job.options import DemoConfig

    return run_demo(
        DemoConfig(
            out=args.out,
            n=args.n,
            scale=args.scale,
            per_cell=args.per_cell,
            seed=args.seed,
            split=args.split,
            baselines=args.baselines,
            workers=args.workers,
            num_proc=args.num_proc,
            interactive=not args.no_interactive,
            interactive_n=args.interactive_n,
            serve=args.serve,
            host=args.host,
            port=args.port,
        )
    )
