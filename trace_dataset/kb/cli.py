"""`trace-bench kb build|stats`: build the balanced knowledge base from a Yelp bundle, print Table 3."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import number_in


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "kb",
        help="build the balanced knowledge base or print its statistics",
        description="The balanced Trace knowledge base: 8 cities x 3 POI types x --per-cell POIs with reviews.",
    )
    sub = p.add_subparsers(dest="kb_command", metavar="SUBCOMMAND", required=True)

    b = sub.add_parser(
        "build",
        help="build a knowledge base from a Yelp bundle",
        description="Classify businesses (restaurant/hotel/attraction), keep the 8 Trace cities, pick --per-cell "
        "POIs per city x type by stratified rating/category sampling, keep ~14.3 reviews per POI (text "
        "truncated to 500 characters) and write pois.jsonl.gz, review_index.jsonl.gz, reviews.jsonl.gz, kb.json.",
    )
    b.add_argument(
        "--yelp",
        required=True,
        metavar="PATH",
        help="Yelp bundle: folder, yelp_dataset.tar, .zip, .json.gz files, or a synthetic bundle",
    )
    b.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    b.add_argument(
        "--per-cell",
        type=number_in(int, 1),
        default=100,
        help="POIs per city x type (default 100 -> 2,400 POIs)",
    )
    b.add_argument(
        "--min-reviews", type=number_in(int, 1), default=3, help="minimum reviews a POI must have (default 3)"
    )
    b.add_argument("--seed", type=number_in(int, 0), default=42, help="sampling seed (default 42)")
    b.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    from trace_dataset.kb.catalogue import add_catalogue_arguments

    add_catalogue_arguments(b)
    b.set_defaults(func=_build)

    s = sub.add_parser(
        "stats",
        help="print the Table 3 statistics of a knowledge base",
        description="Print a Table-3-style summary of a built knowledge base folder.",
    )
    s.add_argument("dir", metavar="DIR", help="knowledge base folder (or a Trace data directory)")
    s.add_argument("--json", action="store_true", help="print the statistics as JSON")
    s.set_defaults(func=_stats)


def _build(args: argparse.Namespace) -> int:
    from trace_dataset.kb.build import build_kb
    from trace_dataset.kb.catalogue import build_from_args, catalogue_requested
    from trace_dataset.kb.reviews import RESERVOIR
    from trace_dataset.kb.stats import format_table

    if catalogue_requested(args):
        return build_from_args(args)
    if args.min_reviews > RESERVOIR:
        raise UsageError(f"--min-reviews: expected an integer in [1, {RESERVOIR}], got {args.min_reviews}")
    meta = build_kb(
        args.yelp,
        args.out,
        per_cell=args.per_cell,
        min_reviews=args.min_reviews,
        seed=args.seed,
        strict=args.strict,
        progress=sys.stderr.isatty(),
    )
    print(format_table(meta))
    print(f"\nknowledge base written to {args.out} (kb_version {meta['kb_version'][:12]})")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from trace_dataset.kb.catalogue import catalogue_meta, format_stats
    from trace_dataset.kb.stats import format_table, kb_stats

    catalogue = catalogue_meta(args.dir)
    if catalogue is not None:  # a catalogue (any cities): its own summary
        print(json.dumps(catalogue, indent=2, ensure_ascii=False) if args.json else format_stats(catalogue))
        return 0
    stats = kb_stats(args.dir)
    if args.json:
        print(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        print(format_table(stats))
    return 0
