"""`trace-bench simulators`: agreement between two simulated travellers (or two seeds of one).

trace-bench simulators --a runs/interactive/rules/* --b runs/interactive/llm/*
"""

from __future__ import annotations

import argparse
from typing import Any

from trace_bench.options import number_in


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "simulators",
        help="Kendall tau between the system rankings two simulated travellers (or seeds) give",
        description="Rank the systems of two sets of `trace-bench interact` runs (one run per system on each "
        "side: one simulator, or one seed, per side) by their live success on the travellers both sides "
        "share, and print Kendall tau_b between the two rankings with its bootstrap interval and verdict "
        "(docs/interactive.md, 'How far to trust the simulated traveller').",
    )
    p.add_argument("--a", nargs="+", required=True, metavar="RUN", help="the first side's run folders")
    p.add_argument("--b", nargs="+", required=True, metavar="RUN", help="the second side's run folders")
    p.add_argument("--out", metavar="FILE", help="also write the comparison as JSON")
    p.add_argument("--bootstrap", type=number_in(int, 1), default=10_000, help="resamples (default 10000)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from trace_dataset.io import write_json
    from trace_harness.protocols.interactive.validity.compare import (
        compare_sides,
        comparison_text,
        side_scores,
    )

    label_a, a = side_scores(args.a)
    label_b, b = side_scores(args.b)
    result = compare_sides(a, b, args.bootstrap)
    print(comparison_text(label_a, label_b, result))
    if args.out:
        write_json(args.out, {"a": label_a, "b": label_b, **result})
    return 0
