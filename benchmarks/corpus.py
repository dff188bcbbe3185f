"""Dialogues per second for corpus generation, release and hydration (goals, on 2 cores:
10,000 dialogues generated in < 60 s; 10,000 hydrated in < 5 s beyond the single scan of the review file).

    python benchmarks/corpus.py                       # synthetic bundle -> KB -> 10,000 dialogues -> release -> hydrate
    python benchmarks/corpus.py --n 2000 --workers 2  # smaller / other settings
    python benchmarks/corpus.py --yelp PATH --kb DIR  # your own bundle / an existing knowledge base

Work files go under --work (default /tmp/trace-bench-corpus-bench); the bundle and the knowledge base are
reused when already there. "Beyond the scan" is the hydration wall time minus the time spent streaming the
review file; the plain scan (every line read, nothing parsed) is timed separately for reference. CPU seconds
are printed next to wall seconds because a shared machine inflates wall time.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from _common import machine, timed  # noqa: E402  (benchmarks/ is on sys.path when run as a script)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000, help="dialogues to generate (default 10000)")
    p.add_argument("--workers", type=int, default=2, help="generator worker processes (default 2)")
    p.add_argument("--work", type=Path, default=Path("/tmp/trace-bench-corpus-bench"))
    p.add_argument(
        "--yelp", type=Path, default=None, help="Yelp bundle (default: the built-in synthetic one)"
    )
    p.add_argument(
        "--kb", type=Path, default=None, help="existing knowledge base folder (default: build one)"
    )
    p.add_argument("--skip-generate", action="store_true", help="reuse WORK/corpus from an earlier run")
    return p.parse_args(argv)


def _bundle_and_kb(args: argparse.Namespace, work: Path) -> tuple[Path, Path]:
    """The Yelp bundle and the knowledge base: the given ones, else WORK's (written or built when missing)."""
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    bundle = args.yelp
    if bundle is None:
        bundle = work / "bundle"
        if not (bundle / "TRACE_SYNTHETIC.json").exists():
            _, wall, _ = timed(lambda: write_synthetic_bundle(bundle))
            print(f"synthetic bundle: {wall:.1f} s")
    kb = args.kb
    if kb is None:
        kb = work / "kb"
        if not (kb / "kb.json").exists():
            _, wall, _ = timed(lambda: build_kb(bundle, kb))
            print(f"knowledge base: {wall:.1f} s")
    return bundle, kb


def _generate(args: argparse.Namespace, kb: Path, corpus: Path) -> None:
    from trace_dataset.generate import generate_corpus

    shutil.rmtree(corpus, ignore_errors=True)
    _, wall, cpu = timed(
        lambda: generate_corpus(kb, corpus, n=args.n, seed=42, workers=args.workers, progress=False)
    )
    print(
        f"generate: {args.n} dialogues in {wall:.2f} s = {args.n / wall:,.0f} dialogues/s "
        f"(workers={args.workers}; parent-process CPU {cpu:.2f} s; goal < 60 s for 10,000)"
    )


def _plain_scan(bundle: Path) -> None:
    """Every line of the review file read, nothing parsed: the reference for "beyond the scan"."""
    from trace_dataset.yelp.reader import open_bundle

    def scan_only() -> int:
        count = 0
        for _ in open_bundle(bundle).iter_lines("review"):
            count += 1
        return count

    lines, scan_wall, scan_cpu = timed(scan_only)
    print(f"plain scan of the review file: {lines:,} lines in {scan_wall:.2f} s (CPU {scan_cpu:.2f} s)")


def _hydrate(release: Path, bundle: Path, hydrated: Path, n: int) -> None:
    from trace_dataset.release import hydrate_release

    report, wall, cpu = timed(lambda: hydrate_release(release, bundle, hydrated))
    t = report["timing"]
    beyond = wall - t["scan_s"]
    beyond_cpu = cpu - report["scan"]["scan_cpu_seconds"]
    print(
        f"hydrate: {n} dialogues in {wall:.2f} s (CPU {cpu:.2f} s): scan {t['scan_s']:.2f} s "
        f"(CPU {report['scan']['scan_cpu_seconds']:.2f} s, {report['scan']['lines_read']:,} lines, referenced ones "
        f"parsed), read release {t['read_release_s']:.2f} s, fill + write {t['fill_and_write_s']:.2f} s"
    )
    print(
        f"hydrate beyond the scan: {beyond:.2f} s wall = {n / beyond:,.0f} dialogues/s, CPU {beyond_cpu:.2f} s "
        f"(goal < 5 s for 10,000); {report['quotes_hydrated']:,} quotes, {report['reviews_written']:,} reviews, "
        f"byte-identical to the corpus: {report['byte_identical']}"
    )


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)

    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.release import write_release

    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    print(f"command: {' '.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])])}")
    print(f"machine: {machine()}")
    bundle, kb = _bundle_and_kb(args, work)
    corpus = work / "corpus"
    if not args.skip_generate:
        _generate(args, kb, corpus)
    n = sum(1 for _ in iter_dialogues(corpus))

    release = work / "release"
    _, wall, cpu = timed(lambda: write_release(corpus, release))
    print(
        f"release: {n} dialogues in {wall:.2f} s = {n / wall:,.0f} dialogues/s (CPU {cpu:.2f} s, "
        "six-word check of every file included)"
    )
    _plain_scan(bundle)
    _hydrate(release, bundle, work / "hydrated", n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
