"""NLI throughput of the entailment metric: (premise, claim) pairs per second, cold and from the cache.

    python benchmarks/nli.py --tiny                       # tiny random DeBERTa-v2: checks the machinery only
    python benchmarks/nli.py --random-base --pairs 2000   # DeBERTa-v3-base architecture, random weights
    python benchmarks/nli.py --model /path/to/nli-deberta-v3-base --device cuda --batch-size 128
    accelerate launch --multi_gpu --num_processes 4 benchmarks/nli.py --model /path/to/model --pairs 200000

Pairs are synthetic review-like texts (premises 40-110 words, claims 6-20 words; seed 42), all distinct, so
the cold run scores every pair. `--random-base` builds a random-weight model with DeBERTa-v3-base's sizes and
attention offline (speed does not depend on the weights; its word-level tokenizer gives ~1 token per word, the
real SentencePiece tokenizer ~1.3). Under `accelerate launch` each process scores its share; the main process
prints the total rate. Prints one line per figure and, with --json, writes them to a file.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trace_metrics.lib.entailment import NLIScorer


def synthetic_pairs(n: int, seed: int = 42) -> list[tuple[str, str]]:
    from trace_metrics.lib.tiny_nli import VOCABULARY

    rng = random.Random(seed)
    words = list(VOCABULARY)
    pairs = []
    for i in range(n):
        premise = " ".join(rng.choice(words) for _ in range(rng.randint(40, 110)))
        claim = " ".join(rng.choice(words) for _ in range(rng.randint(6, 20)))
        pairs.append((premise, f"{claim} {i}"))  # the index keeps every pair distinct
    return pairs


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="NLI model: local folder or Hub id")
    which.add_argument("--tiny", action="store_true", help="a tiny random DeBERTa-v2 (machinery only)")
    which.add_argument(
        "--random-base", action="store_true", help="random weights, DeBERTa-v3-base architecture"
    )
    parser.add_argument(
        "--device", default=None, help="cpu, cuda, cuda:1 (default: the accelerate process's device)"
    )
    parser.add_argument("--dtype", default=None, choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    return parser.parse_args(argv)


def _nli_scorer(model: str, args: argparse.Namespace, cache: Path) -> NLIScorer:
    from trace_metrics.lib.entailment import NLIScorer

    return NLIScorer(
        model,
        args.batch_size,
        cache_path=cache,
        device=args.device,
        dtype=args.dtype,
        max_length=args.max_length,
        show_progress=False,
    )


def _synchronize(scorer: NLIScorer) -> None:
    """Wait for the device's queued work and for every accelerate process."""
    import torch

    if scorer.device.type == "cuda":
        torch.cuda.synchronize()
    scorer._state.wait_for_everyone()


def _cold_run(
    scorer: NLIScorer, pairs: list[tuple[str, str]], args: argparse.Namespace
) -> tuple[list, float]:
    """The pairs' entailment probabilities after an untimed warm-up batch, and the seconds they took."""
    scorer.entailment_probs(synthetic_pairs(args.batch_size, args.seed + 1))  # warm-up, not timed
    _synchronize(scorer)
    t0 = time.perf_counter()
    probs = scorer.entailment_probs(pairs)
    _synchronize(scorer)
    return probs, time.perf_counter() - t0


def _figures(
    args: argparse.Namespace,
    model: str,
    scorer: NLIScorer,
    rerun: NLIScorer,
    pairs: list[tuple[str, str]],
    seconds: dict[str, float],
) -> dict[str, Any]:
    import torch

    state = scorer._state
    tokens = [
        len(ids)
        for ids in scorer.tokenizer([p for p, _ in pairs[:500]], [c for _, c in pairs[:500]])["input_ids"]
    ]
    load_s, cold_s, cached_s = seconds["load_s"], seconds["cold_s"], seconds["cached_s"]
    return {
        "model": "tiny random DeBERTa-v2"
        if args.tiny
        else "random DeBERTa-v3-base architecture"
        if args.random_base
        else model,
        "device": str(scorer.device)
        if state.num_processes == 1
        else f"{state.num_processes} x {scorer.device.type}",
        "device_name": torch.cuda.get_device_name(scorer.device) if scorer.device.type == "cuda" else "cpu",
        "torch_threads": torch.get_num_threads(),
        "dtype": scorer.dtype,
        "processes": state.num_processes,
        "batch_size": args.batch_size,
        "pairs": len(pairs),
        "mean_tokens_per_pair": sum(tokens) / len(tokens),
        "load_s": round(load_s, 2),
        "cold_s": round(cold_s, 3),
        "cold_pairs_per_s": round(len(pairs) / cold_s, 1),
        "cached_s": round(cached_s, 3),
        "cached_pairs_per_s": round(len(pairs) / cached_s, 1),
        "model_calls_on_rerun": rerun.model_calls,
    }


def _benchmark(args: argparse.Namespace, tmp: Path) -> int:
    """Load, score cold, rescore from the cache, check the rerun, print (main process) and write the figures."""
    from trace_metrics.lib.entailment import NLIScorer  # noqa: F401  (imported before the timed load)
    from trace_metrics.lib.tiny_nli import write_tiny_nli_model

    model = args.model
    if model is None:
        model = str(write_tiny_nli_model(tmp / "model", base_architecture=args.random_base))
    cache = tmp / "nli.sqlite"
    pairs = synthetic_pairs(args.pairs, args.seed)
    t0 = time.perf_counter()
    scorer = _nli_scorer(model, args, cache)
    load_s = time.perf_counter() - t0
    probs, cold_s = _cold_run(scorer, pairs, args)
    rerun = _nli_scorer(model, args, cache)
    t0 = time.perf_counter()
    again = rerun.entailment_probs(pairs)
    cached_s = time.perf_counter() - t0
    if again != probs or rerun.model_calls:
        print("cached rerun differs from the cold run", file=sys.stderr)
        return 1
    seconds = {"load_s": load_s, "cold_s": cold_s, "cached_s": cached_s}
    figures = _figures(args, model, scorer, rerun, pairs, seconds)
    if scorer._state.is_main_process:
        for key, value in figures.items():
            print(f"{key}: {value}")
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
    scorer.close()
    rerun.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        return _benchmark(args, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
