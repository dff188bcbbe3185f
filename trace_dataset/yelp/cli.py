"""`trace-bench yelp inspect|synth`: look into a Yelp bundle, or write the built-in synthetic one."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trace_bench.options import number_in


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "yelp",
        help="inspect a Yelp Open Dataset bundle or write the built-in synthetic one",
        description="Read a Yelp Open Dataset bundle (folder, yelp_dataset.tar, .zip or .json.gz files) "
        "or write the built-in synthetic bundle in the same schema.",
    )
    sub = p.add_subparsers(dest="yelp_command", metavar="SUBCOMMAND", required=True)

    ins = sub.add_parser(
        "inspect",
        help="count businesses, reviews, malformed lines, cities and joins of a bundle",
        description="Stream a bundle and report: businesses, reviews, malformed lines (file:line: reason), "
        "businesses per Trace city (others summed), and how many reviews join a business.",
    )
    ins.add_argument(
        "path",
        metavar="PATH",
        help="extracted folder, yelp_dataset.tar, a .zip holding either, or the .json(.gz) files",
    )
    ins.add_argument("--json", action="store_true", help="print the report as JSON")
    ins.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    ins.set_defaults(func=_inspect)

    syn = sub.add_parser(
        "synth",
        help="write the built-in synthetic Yelp bundle (not Yelp data)",
        description="Write yelp_academic_dataset_business.json, yelp_academic_dataset_review.json and "
        "TRACE_SYNTHETIC.json: synthetic businesses and reviews for the 8 Trace cities in Yelp's schema. "
        "Scale 1.0 fills the 2,400-POI knowledge base with spares (~70k reviews); scale 17 writes ~1M reviews.",
    )
    syn.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    syn.add_argument("--seed", type=number_in(int, 0), default=42, help="random seed (default 42)")
    syn.add_argument(
        "--scale",
        type=number_in(float, 0, low_open=True),
        default=1.0,
        help="size factor (default 1.0; see the description)",
    )
    syn.set_defaults(func=_synth)


def _inspect(args: argparse.Namespace) -> int:
    from trace_dataset.yelp.reader import inspect_bundle

    report = inspect_bundle(args.path, strict=args.strict, progress=not args.json and sys.stderr.isatty())
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(format_report(report))
    return 0


def format_report(r: dict[str, Any]) -> str:
    lines = [
        f"bundle       {r['bundle']} ({r['container']}, source: {r['source']})",
        f"businesses   {r['businesses']:,}",
        f"reviews      {r['reviews']:,} ({r['reviews_joining_a_business']:,} join a business of the bundle)",
        f"malformed    {r['malformed_lines']['total']:,} lines",
    ]
    for ex in r["malformed_lines"]["examples"]:
        lines.append(f"  {ex['file']}:{ex['line']}: {ex['reason']}")
    lines.append("businesses per Trace city:")
    for city, n in r["trace_city_businesses"].items():
        lines.append(f"  {city:<14} {n:>8,}")
    lines.append(f"  {'(other cities)':<14} {r['other_city_businesses']:>8,}")
    return "\n".join(lines)


def _synth(args: argparse.Namespace) -> int:
    from trace_dataset.yelp.synth import write_synthetic_bundle

    out = write_synthetic_bundle(args.out, seed=args.seed, scale=args.scale, progress=sys.stderr.isatty())
    manifest = json.loads((out / "TRACE_SYNTHETIC.json").read_text(encoding="utf-8"))
    print(
        f"synthetic Yelp bundle: {manifest['businesses']:,} businesses, {manifest['reviews']:,} reviews -> {out}"
    )
    return 0
