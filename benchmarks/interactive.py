"""Simulated dialogues per second of each non-LLM baseline against the rules simulator.

Goal: the nine non-LLM baselines over 1,000 interactive dialogues each in under 2 minutes in total on 2 cores.

    python benchmarks/interactive.py --data DIR [--n 1000] [--workers 2] [--split test]
    python benchmarks/interactive.py --build /tmp/trace_builtin   # build the built-in corpus first

The travelers are seeded once (the generator's plans replayed, counted apart as "seeding"); then each
baseline talks to every traveler (`trace` protocol, closed pool, 8 system turns at most), the baselines
spread over `--workers` forked processes, `--batch` dialogues in lockstep per pipeline call. Dense and
Hybrid-RRF each start from an empty query cache of their own (a temporary cache folder holding only links
to the POI embeddings of the on-disk cache, a once-per-KB index): every distinct user turn of the run is
encoded once, as in a first `trace-bench interact` run. (`query_cache=False` would re-encode the whole
history at every system turn, about three times as many encodings, which no default run does.) Prints one
row per baseline (dialogues, system turns, wall and CPU seconds of the conversations, dialogues per wall and
per CPU second, queries encoded), the total wall time of the conversations, that of the whole command
(start to finish, after the interpreter's own start-up), and the machine. Metrics are not computed here
(benchmarks/metrics.py times the suite).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

_STARTED = time.perf_counter()  # the whole command: imports, knowledge base, seeding, conversations

# Run as a script, this file's folder comes first on sys.path and benchmarks/baselines.py would shadow the
# `baselines` package: drop that entry and load the two sibling helpers by path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


def _sibling(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_bench_{name}", _HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


_STATE: dict = {}
SLOW = ("dense", "hybrid_rrf")


def _empty_query_cache(tmp: Path) -> Path:
    """A cache folder with the POI embeddings of the default cache (linked) and no query embeddings."""
    from trace_metrics.lib.entailment import default_cache_dir

    src, dst = default_cache_dir() / "dense", tmp / "dense"
    dst.mkdir(parents=True)
    for f in sorted(src.glob("*.npy")) + sorted(src.glob("*.json")) if src.is_dir() else []:
        (dst / f.name).symlink_to(f)
    return tmp


def _one(name: str) -> tuple[str, int, int, float, float, int | None, str]:
    """(baseline, dialogues, system turns, wall s, CPU s, queries encoded, error) over every traveler."""
    import tempfile

    from trace_harness.protocols.interactive.loop import converse
    from trace_harness.protocols.interactive.run import make_simulator
    from trace_harness.protocols.interactive.systems import load_system

    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    world, goals, turns, batch = _STATE["world"], _STATE["goals"], _STATE["turns"], _STATE["batch"]
    with tempfile.TemporaryDirectory(prefix="trace-bench-ia-") as tmp:
        try:
            params = {"cache_dir": str(_empty_query_cache(Path(tmp)))} if name in SLOW else {}
            system = load_system(name, world.kb, params=params)
        except (ImportError, KeyError, RuntimeError) as e:
            return name, 0, 0, 0.0, 0.0, None, f"{type(e).__name__}: {e}"
        sim = make_simulator("rules", world)
        t, c = time.perf_counter(), time.process_time()
        n_turns = 0
        for start in range(0, len(goals), batch):
            lives = converse(
                system,
                sim,
                goals[start : start + batch],
                pool="closed",
                max_turns=turns,
                seed=42,
                metadata={},
            )
            n_turns += sum(len(x.predictions) for x in lives)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        pipe = getattr(system, "pipe", None)
        index = getattr(pipe, "index", None) or getattr(pipe, "dense", None)
        encoded = getattr(index, "encoded_queries", None)
        system.close()
    return name, len(goals), n_turns, wall, cpu, encoded, ""


def main(argv: list[str] | None = None) -> int:
    machine = _sibling("_common").machine
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", type=Path, help="an existing Trace data directory (a generated corpus)")
    src.add_argument(
        "--build", type=Path, metavar="DIR", help="build (or reuse) the built-in corpus under DIR"
    )
    ap.add_argument("--n", type=int, default=1000, help="interactive dialogues per baseline (default 1000)")
    ap.add_argument("--split", default="test", help="split the travelers are seeded from (default test)")
    ap.add_argument("--workers", type=int, default=2, help="baselines run side by side (default 2)")
    ap.add_argument("--turns", type=int, default=8, help="system turns per dialogue at most (default 8)")
    ap.add_argument(
        "--batch", type=int, default=64, help="dialogues in lockstep per system call (default 64)"
    )
    ap.add_argument("--baselines", nargs="*", default=None, help="default: the nine non-LLM baselines")
    args = ap.parse_args(argv)

    from baselines import NON_LLM_BASELINES
    from trace_harness.protocols.interactive.run import load_data_kb, seed_goals
    from trace_harness.protocols.interactive.simulator.goal import World

    data = args.data
    if args.build is not None:
        data = _sibling("baselines").build_builtin(args.build, 10000, args.workers)
    t = time.perf_counter()
    kb = load_data_kb(data)
    world = World(kb)
    goals = seed_goals(data, kb, world, args.split, args.n)
    seeding = time.perf_counter() - t
    _STATE.update(world=world, goals=goals, turns=args.turns, batch=args.batch)
    names = list(args.baselines or NON_LLM_BASELINES)
    print(f"seeding {len(goals)} travelers (generator plans replayed, cells indexed): {seeding:.1f} s wall")
    t = time.perf_counter()
    # longest first (the two that encode queries with a model), so the workers finish together
    order = sorted(names, key=lambda n: (n not in SLOW, names.index(n)))
    if args.workers > 1 and "fork" in mp.get_all_start_methods():
        with mp.get_context("fork").Pool(args.workers, maxtasksperchild=1) as pool:
            done = {r[0]: r for r in pool.imap_unordered(_one, order, chunksize=1)}
        rows = [done[n] for n in names]
    else:
        rows = [_one(n) for n in names]
    total = time.perf_counter() - t
    print(
        f"\n{'baseline':12s} {'dialogues':>9s} {'turns':>7s} {'wall s':>7s} {'CPU s':>7s} {'dlg/s':>7s} "
        f"{'dlg/CPU s':>9s} {'encoded':>8s}"
    )
    for name, n, turns, wall, cpu, encoded, err in rows:
        if err:
            print(f"{name:12s} FAILED {err}")
            continue
        enc = "-" if encoded is None else str(encoded)
        print(f"{name:12s} {n:9d} {turns:7d} {wall:7.1f} {cpu:7.1f} {n / wall:7.1f} {n / cpu:9.1f} {enc:>8s}")
    done = sum(r[1] for r in rows)
    print(
        f"\n{len(names)} baselines, {done} interactive dialogues in {total:.1f} s wall "
        f"({done / total:.0f} dialogues/s) with {args.workers} worker(s)"
    )
    print(f"{sum(r[4] for r in rows):.1f} CPU s of conversations in all")
    whole = time.perf_counter() - _STARTED
    print(
        f"whole command (imports, knowledge base, seeding, conversations): {whole:.1f} s wall; goal: under 120 s"
    )
    print(f"machine: {machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
