"""`trace-bench leaderboard`: evaluate every run and print the paper-style tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from trace_dataset.constants import SPLITS


def register(sub) -> None:
    p = sub.add_parser(
        "leaderboard", help="score every baseline run and print Tables 5, 6 and 9",
        description="Evaluate every complete predictions file under --runs (written by `trace-bench run`) "
                    "with the metrics suite; print the paper's Table 5, 6 and 9 columns and write "
                    "leaderboard.json plus one CSV per table and pool to --out.")
    p.add_argument("--data", type=Path, required=True, help="hydrated Trace data directory")
    p.add_argument("--runs", type=Path, required=True, help="folder of prediction files (searched recursively)")
    p.add_argument("--split", choices=SPLITS, help="only runs of this split")
    p.add_argument("--out", type=Path, help="folder for leaderboard.json and the CSV tables (default: --runs)")
    p.set_defaults(func=_leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    from baselines.leaderboard import build_leaderboard, format_tables, write_leaderboard

    rows = build_leaderboard(args.data, args.runs, split=args.split)
    if not rows:
        print(f"no complete runs under {args.runs}")
        return 1
    print(format_tables(rows))
    paths = write_leaderboard(rows, args.out or args.runs)
    print(f"wrote {paths['json']} and {len(paths) - 1} CSV tables (serve them: trace-bench serve "
          f"--baselines {paths['json']})")
    return 0
