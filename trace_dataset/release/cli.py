"""`trace-bench corpus release`, `corpus hydrate`, `corpus blind` and `corpus push-gold`.

The `corpus` command group belongs to the generator package; it calls `add_parsers` to add these.
Heavy imports stay inside the callables so `--help` is fast.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from trace_bench.options import number_in


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
    _add_blind(corpus_subparsers)


def _add_blind(corpus_subparsers) -> None:
    b = corpus_subparsers.add_parser(
        "blind",
        help="generate a blind test set: inputs to publish, gold to keep private",
        description="Generate N new test dialogues over the data directory's knowledge base with a secret seed "
        "(the generator's stratification and validation) and write OUT/inputs/ (a [Q:N] release without gold, "
        "hydratable like any release) and OUT/gold/ (the private data directory to score against), each with "
        "period.json: the period, the date, and the statistics beside the public test split's.",
    )
    b.add_argument(
        "--data", required=True, type=Path, metavar="DIR", help="hydrated release or generated corpus"
    )
    b.add_argument("--period", required=True, metavar="NAME", help="period name, e.g. 2026-q1")
    b.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder to write inputs/ and gold/ to"
    )
    b.add_argument(
        "--n",
        type=number_in(int, 1),
        default=None,
        help="dialogues (default: as many as the public test split)",
    )
    b.add_argument(
        "--seed",
        type=number_in(int, 0),
        default=None,
        help="only to reproduce a set or in tests (default: a secret seed, written to gold/period.json only)",
    )
    b.add_argument(
        "--created", default=None, metavar="YYYY-MM-DD", help="date recorded (default: today, UTC)"
    )
    b.add_argument("--force", action="store_true", help="replace an existing OUT (and the gold it holds)")
    b.add_argument("--workers", type=number_in(int, 1), default=None, help="generator processes")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.set_defaults(func=run_blind)
    g = corpus_subparsers.add_parser(
        "push-gold",
        help="upload a blind set's gold folder to a private Hugging Face Hub dataset",
        description="Create the dataset private (an existing one must be private) and upload OUT/gold in one "
        "commit, with the token of HF_TOKEN or `hf auth login`.",
    )
    g.add_argument("--gold", required=True, type=Path, metavar="DIR", help="the gold folder (OUT/gold)")
    g.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the private dataset to upload to")
    g.set_defaults(func=run_push_gold)


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


def run_blind(args: argparse.Namespace) -> int:
    from trace_dataset.release.blind import format_comparison, make_blind

    record = make_blind(
        args.data,
        args.period,
        args.out,
        n=args.n,
        seed=args.seed,
        force=args.force,
        workers=args.workers,
        created=args.created,
        progress=False if args.no_progress else None,
    )
    print(format_comparison(record))
    print(
        f"blind set written to {args.out}: inputs/ to publish (no gold), gold/ to keep private "
        "(its period.json holds the seed)"
    )
    return 0


def run_push_gold(args: argparse.Namespace) -> int:
    from trace_dataset.release.blind_hub import push_gold

    message = push_gold(args.gold, args.repo)
    print(f"pushed to the private dataset {args.repo}: {message}")
    return 0
