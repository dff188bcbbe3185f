"""`trace-bench corpus release` and `trace-bench corpus hydrate`.

The `corpus` command group belongs to the generator package; it calls `add_parsers` to add these two.
Heavy imports stay inside the callables so `--help` is fast.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parsers(corpus_subparsers) -> None:
    """Add `release` and `hydrate` to the `corpus` sub-parsers."""
    p = corpus_subparsers.add_parser(
        "release",
        help="write the redistributable [Q:N] release of a generated corpus",
        description="Replace every quote by a [Q:N] placeholder backed by quote_spans (review id, offsets, "
        "checksum); copy the knowledge base without review text; write the dataset card. Refuses to write a "
        "release that would contain six consecutive words of any review.",
    )
    p.add_argument(
        "--corpus", required=True, type=Path, metavar="DIR", help="generated corpus (data directory)"
    )
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="release folder to write")
    p.set_defaults(func=run_release)

    h = corpus_subparsers.add_parser(
        "hydrate",
        help="fill a release's [Q:N] placeholders from your own Yelp Open Dataset copy",
        description="Stream the Yelp review file once, fill every placeholder, verify every checksum, and write "
        "a complete data directory (with knowledge_base/reviews.jsonl.gz).",
    )
    h.add_argument(
        "--release",
        required=True,
        metavar="DIR|hub|hf:OWNER/NAME",
        help="release folder; 'hub' fetches the official taoist/TRACE from the Hugging Face Hub first",
    )
    h.add_argument(
        "--yelp",
        required=True,
        type=Path,
        metavar="PATH",
        help="Yelp bundle: extracted folder, yelp_dataset.tar, a .zip, or the review .json/.json.gz",
    )
    h.add_argument("--out", required=True, type=Path, metavar="DIR", help="hydrated data directory to write")
    h.add_argument(
        "--allow-partial",
        action="store_true",
        help="hydrate what matches; leave quotes of missing or changed reviews as [Q:N]",
    )
    h.add_argument("--revision", default=None, help="Hub revision (with --release hub)")
    h.set_defaults(func=run_hydrate)


def run_release(args: argparse.Namespace) -> int:
    from trace_dataset.release.writer import write_release

    meta = write_release(args.corpus, args.out)
    total = sum(meta["dialogues"].values())
    print(
        f"release written to {args.out}: {total} dialogues ({json.dumps(meta['dialogues'])}), "
        f"{meta['quotes']} quotes as [Q:N] placeholders, no review text"
    )
    return 0


def run_hydrate(args: argparse.Namespace) -> int:
    from trace_dataset.release.hub import fetch_release, is_hub_spec
    from trace_dataset.release.hydrate import hydrate_release

    release = args.release
    if is_hub_spec(release):
        release = fetch_release(release, revision=args.revision)
    report = hydrate_release(release, args.yelp, args.out, allow_partial=args.allow_partial)
    total = sum(report["dialogues"].values())
    print(
        f"hydrated {total} dialogues into {args.out}: {report['quotes_hydrated']}/{report['quotes']} quotes, "
        f"{report['reviews_written']} reviews (Yelp scan {report['timing']['scan_s']} s, "
        f"rest {report['timing']['read_release_s'] + report['timing']['fill_and_write_s']:.2f} s)"
    )
    if report["partial"]:
        print(
            f"PARTIAL: {report['quotes_unhydrated']} quote(s) left as [Q:N]; "
            f"{len(report['missing_reviews'])} review(s) missing, "
            f"{len(report['checksum_mismatches'])} with checksum mismatches, "
            f"{len(report['version_mismatches'])} differing from the index (details in hydration.json)"
        )
    if report["byte_identical"] is False:
        print("note: hydrated files differ from the corpus the release was made from (see the log)")
    return 0
