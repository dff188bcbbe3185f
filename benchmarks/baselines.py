"""System turns per second of each baseline through `trace-bench run` (the runner, files and all).

Goal: all nine non-LLM baselines over the full 10,000-dialogue corpus (~50,000 system turns)
in under 10 minutes in total on 2 cores.

    python benchmarks/baselines.py --data DIR [--split all] [--pool closed] [--num-proc 2]
    python benchmarks/baselines.py --build /tmp/trace_builtin   # build the built-in corpus first:
                                   # synthetic Yelp bundle -> knowledge base -> 10,000 dialogues
    python benchmarks/baselines.py --build /tmp/trace_builtin --tfidf-peer 200   # TF-IDF against scikit-learn

Prints one row per baseline (rows, wall seconds, turns/s, CPU seconds of the run and its workers, turns per
CPU second) and the total, with the machine it ran on. On a shared machine the wall time depends on what
else runs; the CPU columns do not. `--tfidf-peer N` instead times the TF-IDF scorer against scikit-learn's on N
queries per cell of the knowledge base (benchmarks/_tfidf_peer.py) and prints the CPU-time ratios.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name would shadow the `baselines`
# package; drop that entry (nothing else lives there that this script imports).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


def build_builtin(root: Path, n: int, workers: int) -> Path:
    """The built-in corpus: synthetic bundle -> KB -> n template dialogues (reused when present)."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    corpus = root / "corpus"
    if (corpus / "corpus.json").exists():
        return corpus
    t = time.perf_counter()
    bundle = write_synthetic_bundle(root / "yelp")
    build_kb(bundle, root / "kb")
    generate_corpus(root / "kb", corpus, n=n, workers=workers, progress=False)
    print(
        f"built the built-in corpus ({n} dialogues) in {time.perf_counter() - t:.0f} s -> {corpus}",
        file=sys.stderr,
    )
    return corpus


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (worker processes), user + system."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", type=Path, help="an existing Trace data directory")
    src.add_argument(
        "--build", type=Path, metavar="DIR", help="build (or reuse) the built-in corpus under DIR"
    )
    ap.add_argument("--n", type=int, default=10_000, help="dialogues for --build (default 10000)")
    ap.add_argument("--split", default="all", help="split to run (default: all = the full corpus)")
    ap.add_argument("--pool", default="closed")
    ap.add_argument("--num-proc", type=int, default=2)
    ap.add_argument("--baselines", default=None, help="comma-separated names (default: every available one)")
    ap.add_argument(
        "--out-dir", type=Path, default=None, help="keep the predictions here (default: a temp dir)"
    )
    ap.add_argument(
        "--tfidf-peer", type=int, default=0, metavar="N", help="TF-IDF against scikit-learn instead"
    )
    args = ap.parse_args(argv)

    from baselines import NON_LLM_BASELINES
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    data = args.data if args.data else build_builtin(args.build, args.n, args.num_proc)
    names = args.baselines.split(",") if args.baselines else list(NON_LLM_BASELINES)
    t0 = time.perf_counter()
    kb = KnowledgeBase.load(kb_dir(data))
    print(
        f"knowledge base: {len(kb.pois)} POIs, {len(kb.reviews)} reviews, loaded in "
        f"{time.perf_counter() - t0:.1f} s"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs visible, "
        f"python {platform.python_version()}; --num-proc {args.num_proc}, split {args.split}, pool {args.pool}"
    )
    if args.tfidf_peer:
        import importlib.util

        spec = importlib.util.spec_from_file_location("_tfidf_peer", _HERE / "_tfidf_peer.py")
        peer = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(peer)  # type: ignore[union-attr]
        return peer.tfidf_peer(kb, args.tfidf_peer)
    print(f"{'baseline':<12} {'rows':>8} {'seconds':>9} {'turns/s':>9} {'cpu s':>9} {'turns/cpu s':>12}")
    total_s, total_cpu, total_rows = 0.0, 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.out_dir or Path(tmp)
        for name in names:
            t, c = time.perf_counter(), cpu_seconds()
            meta = run_baseline(
                name,
                data,
                out_dir / f"{name}.jsonl",
                split=args.split,
                pool=args.pool,
                num_proc=args.num_proc,
                overwrite=True,
                progress=False,
                kb=kb,
            )
            s, cpu = time.perf_counter() - t, cpu_seconds() - c
            total_s, total_cpu, total_rows = total_s + s, total_cpu + cpu, total_rows + meta["n_rows"]
            print(
                f"{name:<12} {meta['n_rows']:>8} {s:>9.1f} {meta['n_rows'] / s:>9.0f} {cpu:>9.1f} "
                f"{meta['n_rows'] / cpu:>12.0f}",
                flush=True,
            )
    print(
        f"{'total':<12} {total_rows:>8} {total_s:>9.1f} {total_rows / total_s:>9.0f} {total_cpu:>9.1f} "
        f"{total_rows / total_cpu:>12.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
