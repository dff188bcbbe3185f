"""`trace-bench run`: predictions of one baseline (or all) for a split of a Trace data directory."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from baselines import NON_LLM_BASELINES
from trace_dataset.constants import POOLS, SPLITS


def _param(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value  # a bare string


def register_run(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a baseline over a split and write its predictions (JSON lines)",
        description="Run a baseline pipeline over every system turn of a split and write the predictions "
        "file (resumable: rerun the same command after an interruption). Run metadata goes to FILE.meta.json.",
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("name", nargs="?", metavar="NAME", help=f"baseline name: {', '.join(NON_LLM_BASELINES)}")
    target.add_argument("--all", action="store_true", help="every available baseline; --out is then a folder")
    p.add_argument("--data", required=True, metavar="DIR", help="Trace data directory (data/ and knowledge_base/)")
    p.add_argument("--split", default="test", choices=(*SPLITS, "all"), help="split to run (default: test)")
    p.add_argument("--pool", default="closed", choices=POOLS, help="candidate pool (default: closed)")
    p.add_argument("--out", required=True, metavar="FILE|DIR", help="predictions file (a folder with --all)")
    p.add_argument("--batch-size", type=int, default=64, help="rows per _forward call (default: 64)")
    p.add_argument("--num-proc", type=int, default=1, help="worker processes (same output for any value)")
    p.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=VALUE",
                   help="baseline parameter (JSON value), e.g. --param text_weight=0.6; repeatable")
    p.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from baselines.runner import run_all, run_baseline

    kwargs = dict(split=args.split, pool=args.pool, batch_size=args.batch_size, num_proc=args.num_proc,
                  params=dict(args.param), overwrite=args.overwrite, progress=not args.no_progress)
    if args.all:
        if args.param:
            print("trace-bench run: --param applies to one baseline; drop it with --all", file=sys.stderr)
            return 2
        results = run_all(args.data, args.out, **kwargs)
        failed = {n: r for n, r in results.items() if isinstance(r, str)}
        for name, result in results.items():
            status = f"FAILED ({result})" if isinstance(result, str) else f"{result['n_rows']} rows"
            print(f"{name:12s} {status}  {Path(args.out) / (name + '.jsonl')}")
        return 1 if failed else 0
    meta = run_baseline(args.name, args.data, args.out, **kwargs)
    print(f"{args.name}: {meta['n_rows']} predictions ({meta['split']}, pool {meta['pool']}) in {args.out}")
    return 0
