"""`trace-bench merge SHARD... --out OUT`: join the shards of one job (`--shard I/N` on run, interact, core score,
reproduce) into the output one unsharded run writes, refusing shards that do not belong together."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "merge",
        help="join the shards of one job (--shard I/N) into the output one run writes",
        description="Join the N shards of one job into the output an unsharded run writes (byte for byte): "
        "predictions files of `trace-bench run`, output folders of `trace-bench interact` or `trace-bench core "
        "score`, or the OUT folders of `trace-bench reproduce`. Refused, naming the shard, when the shards differ "
        "in settings, data or prompt hashes, when one is missing, given twice or unfinished, or when two hold the "
        "same dialogue. See docs/reproducing.md#scaling-out.",
    )
    p.add_argument(
        "shards", nargs="+", metavar="SHARD", help="the shards' outputs (files or folders), any order"
    )
    p.add_argument("--out", required=True, metavar="PATH", help="the merged output (a new file or folder)")
    p.set_defaults(func=_merge)


def _merge(args: argparse.Namespace) -> int:
    from trace_harness.shards.merge import merge

    kind, summary = merge(args.shards, args.out)
    print(f"merged {len(args.shards)} shards of a {kind} into {args.out}: {summary}")
    return 0
