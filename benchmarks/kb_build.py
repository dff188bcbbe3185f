"""Knowledge-base build throughput and peak memory on big synthetic bundles.

    python benchmarks/kb_build.py                      # one bundle of >= 1M reviews (scale 17: 1.03M)
    python benchmarks/kb_build.py --scales 4 17        # two sizes
    python benchmarks/kb_build.py --repeat 2           # also the same businesses with every review twice (2M lines)

For each scale it writes (or reuses) a synthetic Yelp bundle under --workdir, then builds the balanced knowledge
base (`build_kb`, the same call as `trace-bench kb build`) in a fresh child process, so that the figures are the
build's alone, and prints: review lines, wall and CPU seconds, reviews per second (by wall clock and by CPU
time of the single core it uses) and the child's peak resident memory (ru_maxrss), next to the resident memory
of the same interpreter right after the imports. `--repeat N` adds a bundle with the last scale's businesses and
its review file repeated N times (review ids made unique): same POIs, N times the reviews, so any growth of the
peak would come from the review file's size alone. Goal: >= 100k reviews/s on one core and a peak
under 1.5 GB, independent of the review file's size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(bundle: str, out: str, per_cell: int) -> None:
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from trace_dataset.kb.build import build_kb  # noqa: F401  (import cost outside the timed part)
    from trace_dataset.yelp.reader import open_bundle  # noqa: F401

    import_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    w0, c0 = time.perf_counter(), time.process_time()
    meta = build_kb(bundle, out, per_cell=per_cell)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "review_lines": meta["input"]["review_lines"],
                "review_file_bytes": os.path.getsize(Path(bundle) / "yelp_academic_dataset_review.json"),
                "businesses": meta["input"]["businesses"],
                "pois": meta["stats"]["pois"],
                "kb_reviews": meta["stats"]["reviews"],
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "reviews_per_s_wall": round(meta["input"]["review_lines"] / wall),
                "reviews_per_s_cpu": round(meta["input"]["review_lines"] / cpu),
                "peak_rss_mb": round(peak / 1024, 1),
                "rss_after_imports_mb": round(import_rss / 1024, 1),
                "interpreter_rss_mb": round(base_rss / 1024, 1),
                "kb_version": meta["kb_version"],
            }
        )
    )


def _bundle(workdir: Path, scale: float, seed: int) -> tuple[Path, float | None]:
    from trace_dataset.yelp.synth import write_synthetic_bundle

    path = workdir / f"synthetic_scale{scale:g}"
    manifest = path / "TRACE_SYNTHETIC.json"
    if manifest.exists():
        m = json.loads(manifest.read_text())
        if m.get("scale") == scale and m.get("seed") == seed:
            return path, None
    t0 = time.perf_counter()
    write_synthetic_bundle(path, seed=seed, scale=scale, progress=sys.stderr.isatty())
    return path, time.perf_counter() - t0


def _repeated(src: Path, n: int) -> Path:
    """The bundle `src` with its review file written n times over (copy k prefixes review ids with `k~`)."""
    dst = src.parent / f"{src.name}_x{n}"
    review = "yelp_academic_dataset_review.json"
    if (dst / review).exists() and (dst / "TRACE_SYNTHETIC.json").exists():
        return dst
    dst.mkdir(exist_ok=True)
    shutil.copy(src / "yelp_academic_dataset_business.json", dst / "yelp_academic_dataset_business.json")
    with open(dst / review, "wb") as out:
        for k in range(n):
            with open(src / review, "rb") as f:
                for line in f:
                    out.write(line if k == 0 else line.replace(b'"review_id":"', b'"review_id":"%d~' % k, 1))
    manifest = json.loads((src / "TRACE_SYNTHETIC.json").read_text())
    manifest["reviews"] *= n
    manifest["note"] += f" Review file repeated {n} times by benchmarks/kb_build.py."
    (dst / "TRACE_SYNTHETIC.json").write_text(json.dumps(manifest, indent=2))
    return dst


def _run_child(bundle: Path, out: Path, per_cell: int) -> dict | int:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(bundle), str(out), str(per_cell)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return proc.returncode
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--scales",
        type=float,
        nargs="+",
        default=[17.0],
        help="synthetic bundle scales (17 -> 1.03M reviews)",
    )
    ap.add_argument("--per-cell", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "trace_kb_bench",
        help="where bundles and knowledge bases go (bundles are reused across runs)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="also build from the last bundle with its reviews repeated N times",
    )
    ap.add_argument("--child", nargs=3, metavar=("BUNDLE", "OUT", "PER_CELL"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs ({platform.processor() or platform.platform()}), "
        f"Python {platform.python_version()}"
    )
    rows = []
    jobs: list[tuple[str, float, Path, float | None]] = []
    for scale in args.scales:
        bundle, gen_s = _bundle(args.workdir, scale, args.seed)
        jobs.append((f"{scale:g}", scale, bundle, gen_s))
    if args.repeat > 1:
        jobs.append(
            (
                f"{args.scales[-1]:g} x{args.repeat}",
                args.scales[-1],
                _repeated(jobs[-1][2], args.repeat),
                None,
            )
        )
    for label, _scale, bundle, gen_s in jobs:
        row = _run_child(bundle, args.workdir / f"kb_{bundle.name}", args.per_cell)
        if isinstance(row, int):
            return row
        row["scale"] = label
        row["bundle_written_s"] = None if gen_s is None else round(gen_s, 1)
        rows.append(row)
        print(json.dumps(row))
    print()
    print(
        f"{'scale':>8} {'review lines':>13} {'file MB':>8} {'wall s':>7} {'cpu s':>6} {'reviews/s (wall)':>17} "
        f"{'reviews/s (cpu)':>16} {'peak RSS MB':>12}"
    )
    for r in rows:
        print(
            f"{r['scale']:>8} {r['review_lines']:>13,} {r['review_file_bytes'] / 2**20:>8.0f} {r['wall_s']:>7.1f} "
            f"{r['cpu_s']:>6.1f} {r['reviews_per_s_wall']:>17,} {r['reviews_per_s_cpu']:>16,} {r['peak_rss_mb']:>12.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
