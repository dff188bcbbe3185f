"""Peak memory of corpus generation: dialogues streamed to disk (the generator) against every dialogue held in
memory until the end (the generator before it streamed), same knowledge base, same run, same output bytes.

    python benchmarks/corpus_memory.py                    # 1,000 and 5,000 dialogues, both ways
    python benchmarks/corpus_memory.py --sizes 1000 10000 --workers 2

Each measurement runs in a fresh process: the parent's peak resident set (VmHWM; the workers are forked
children and hold no results) from the moment the knowledge base is indexed (the peak is reset there, Linux's
clear_refs) to the moment the split files are written (before the dataset card, whose `datasets` import
weighs more than a small corpus), beside the resident set once indexed. "held" gathers the results in a list
before writing, as the generator did before; "streamed" is the generator as it is. The knowledge base is the
synthetic bundle's at --scale (the built-in corpus's by default, 100 POIs per cell), built under --work
(reused when there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from _common import machine  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

MODES = ("held", "streamed")


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith(field + ":"))
    return int(line.split()[1]) / 1024


def _reset_peak() -> None:
    """Linux: VmHWM back to the current resident set (clear_refs 5), so the peak after is that of what follows."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _child(kb: Path, out: Path, n: int, workers: int, mode: str) -> None:
    """One generation in this process; prints its peak memory and the split files' hashes as JSON."""
    from trace_dataset.generate import generate_corpus, pipeline

    indexed: list[float] = []
    build = pipeline.build_context

    def build_then_reset(*a, **kw):  # the knowledge base indexed: the peak from here on is generation's
        ctx = build(*a, **kw)
        indexed.append(_status_mb("VmRSS"))
        _reset_peak()
        return ctx

    written: list[float] = []
    write = pipeline._write_data

    def write_then_read_peak(*a, **kw):  # the peak of generating and writing, before the card's imports
        tally = write(*a, **kw)
        written.append(_status_mb("VmHWM"))
        return tally

    pipeline.build_context = build_then_reset  # type: ignore[assignment]
    pipeline._write_data = write_then_read_peak  # type: ignore[assignment]
    if mode == "held":
        run = pipeline._run_template
        pipeline._run_template = lambda ctx, w, bar: iter(list(run(ctx, w, bar)))  # type: ignore[assignment]
    shutil.rmtree(out, ignore_errors=True)
    generate_corpus(kb, out, n=n, seed=42, workers=workers, progress=False)
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((out / "data").iterdir())}
    print(json.dumps({"indexed_mb": indexed[0], "peak_mb": written[0], "files": digests}))


def _kb(work: Path, scale: float) -> Path:
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    kb = work / f"kb_{scale}"
    if not (kb / "kb.json").exists():
        bundle = work / f"bundle_{scale}"
        write_synthetic_bundle(bundle, seed=42, scale=scale)
        build_kb(bundle, kb)
    return kb


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000], help="dialogues (default 1000 5000)")
    p.add_argument("--workers", type=int, default=2, help="generator worker processes (default 2)")
    p.add_argument(
        "--scale", type=float, default=1.0, help="synthetic bundle scale (default 1.0: the built-in corpus)"
    )
    p.add_argument("--work", type=Path, default=Path("/tmp/trace-bench-corpus-memory"))
    p.add_argument("--child", nargs=4, metavar=("KB", "OUT", "N", "MODE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        kb, out, n, mode = args.child
        _child(Path(kb), Path(out), int(n), args.workers, mode)
        return 0
    kb = _kb(args.work, args.scale)
    print(machine())
    for n in args.sizes:
        seen: dict[str, dict] = {}
        for mode in MODES:
            cmd = [sys.executable, __file__, "--workers", str(args.workers), "--child"]
            cmd += [str(kb), str(args.work / f"corpus_{mode}"), str(n), mode]
            seen[mode] = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        same = seen["held"]["files"] == seen["streamed"]["files"]
        grown = {m: seen[m]["peak_mb"] - seen[m]["indexed_mb"] for m in MODES}
        print(
            f"{n:>6} dialogues: peak while generating and writing {seen['held']['peak_mb']:.0f} MB held, "
            f"{seen['streamed']['peak_mb']:.0f} MB streamed; above the indexed knowledge base "
            f"({seen['streamed']['indexed_mb']:.0f} MB): {grown['held']:.0f} MB held, {grown['streamed']:.0f} MB "
            f"streamed; "
            f"split files {'byte-identical' if same else 'DIFFER'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
