"""How close Dense's encoding comes to this CPU's arithmetic ceiling, and what batching the queries of a whole run
would change.

    python benchmarks/dense.py --data runs/demo/hydrated            # the main job's Dense step (test, closed)
    python benchmarks/dense.py --data DIR --limit 1000               # the first 1,000 queries only (faster)
    python benchmarks/dense.py --data runs/demo/hydrated --precision bf16   # and the step in bf16 beside it

1. **What the step sends.** The Dense baseline runs over the split with an encoder that records its calls (and
   answers with seeded unit vectors), so the texts and their grouping are exactly the run's: the knowledge base's
   POI documents in one call, then the new user turns of each batch of rows (`_forward`, within the runner's
   chunks of dialogues), encoded in batches of `QUERY_BATCH_SIZE`. Each text's word pieces are counted with the model's own tokenizer (cut at its
   `max_seq_length`), and each batch is padded to its longest text after sentence-transformers' sort by length,
   as `encode` does.
2. **Arithmetic.** The multiply-adds of the encoder for those padded batches, from the model's config: per layer
   and token 4 h^2 (attention projections) + 2 h i (feed-forward), plus 2 h n per token for a batch padded to n
   (scores and the weighted sum); two FLOPs per multiply-add.
3. **Timed.** The documents and the queries through the real model (torch's default threads), grouped as the run
   groups them; then the same queries in one call (one length sort over the whole run), with whether the vectors
   are bit-identical to the run's.
4. **The peer, in the same process:** torch's own matrix product at the encoder's largest shape (rows x h times h x
   i, fp32, the same threads), best of five. The step's FLOP rate over that rate is how much of the CPU's matrix
   throughput it already uses; the floor printed is the step's arithmetic at that rate.
5. **`--precision bf16`:** the documents and the run's queries again, grouped into the same calls, under the
   bfloat16 autocast of `DenseIndex(precision="bf16")` and its query batch (`QUERY_BATCH_SIZES`): the speed-up
   over the fp32 step and how far its vectors are from the fp32 ones (smallest cosine). bf16 changes the
   scores, so it is an opt-in (`--param precision=bf16`), not the default.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import machine, timed  # noqa: E402

GEMM_ROWS = 4096  # rows of the peer's product: a batch of 16 texts of 256 word pieces


class _Recorder:
    """An encoder that keeps every call's texts and batch size and answers with seeded unit vectors."""

    def __init__(self, dim: int):
        self.dim = dim
        self.calls: list[tuple[list[str], int]] = []

    def encode(self, texts: list[str], batch_size: int = 32, **_: Any) -> Any:
        import numpy as np

        self.calls.append((list(texts), batch_size))
        v = np.random.default_rng(len(self.calls)).normal(size=(len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim


def recorded_calls(data: Path, split: str, pool: str, dim: int, tmp: Path) -> list[tuple[list[str], int]]:
    """(texts, batch size) of every encode call of a cold Dense run over `split` under `pool`."""
    from baselines.non_llm.dense import DenseBaseline
    from baselines.toolkit.dense import DenseIndex
    from trace_dataset.datadir import iter_dialogues, kb_dir
    from trace_dataset.kb.store import KnowledgeBase
    from trace_harness.protocols.teacher_forced.runner import DEFAULT_CHUNK_DIALOGUES
    from trace_harness.protocols.teacher_forced.workers import predict_lines

    kb = KnowledgeBase.load(kb_dir(data))
    recorder = _Recorder(dim)
    pipe = DenseBaseline(kb, index=DenseIndex(kb, encoder=recorder, cache_dir=tmp, query_cache=False))
    dialogues = list(iter_dialogues(data, [split]))
    for at in range(0, len(dialogues), DEFAULT_CHUNK_DIALOGUES):  # the runner's chunks, one process
        predict_lines(pipe, dialogues[at : at + DEFAULT_CHUNK_DIALOGUES], pool)
    return recorder.calls


def padded_batches(tokens: dict[str, int], texts: list[str], size: int) -> list[tuple[int, int]]:
    """(texts, padded length) of each forward pass of one encode call, which sentence-transformers sorts as
    `np.argsort([-len(text) ...])` before cutting it into batches of `size`."""
    import numpy as np

    order = [int(i) for i in np.argsort([-len(t) for t in texts])]
    return [
        (len(part), max(tokens[texts[i]] for i in part))
        for part in (order[at : at + size] for at in range(0, len(order), size))
    ]


def word_pieces(encoder: Any, texts: list[str]) -> dict[str, int]:
    """text -> word pieces the encoder reads (special tokens included, cut at its max_seq_length)."""
    unique = list(dict.fromkeys(texts))
    ids = encoder.tokenizer(unique, add_special_tokens=True)["input_ids"]
    return {t: min(encoder.max_seq_length, len(i)) for t, i in zip(unique, ids, strict=True)}


def flops(batches: list[tuple[int, int]], config: Any) -> float:
    h, i, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    macs = sum(b * n * (4 * h * h + 2 * h * i + 2 * h * n) for b, n in batches) * layers
    return 2.0 * macs


def gemm_rate(h: int, i: int) -> float:
    """Best of five fp32 products (GEMM_ROWS x h) @ (h x i), in FLOP/s."""
    import torch

    a, b = torch.randn(GEMM_ROWS, h), torch.randn(h, i)
    torch.mm(a, b)
    best = min(timed(lambda: torch.mm(a, b))[1] for _ in range(5))
    return 2.0 * GEMM_ROWS * h * i / best


def encode(encoder: Any, texts: list[str], size: int, precision: str = "fp32") -> Any:
    """Normalised float32 vectors of `texts` in batches of `size`, as `DenseIndex.encode` computes them."""
    import numpy as np

    from baselines.toolkit.dense import precision_context

    with precision_context(encoder, precision):
        out = encoder.encode(texts, batch_size=size, normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(out, dtype=np.float32)


def precision_pass(
    encoder: Any,
    precision: str,
    docs: list[str],
    doc_size: int,
    queries: list[tuple[list[str], int]],
    fp32: Any,
) -> None:
    """Print the step's encoding under `precision` against the fp32 vectors `fp32` (documents, then queries)."""
    import numpy as np

    from baselines.toolkit.dense import QUERY_BATCH_SIZES

    size = QUERY_BATCH_SIZES[precision]  # the index's query batch in this precision, not the fp32 run's
    vecs, wall, cpu = timed(
        lambda: np.concatenate(
            [
                encode(encoder, docs, doc_size, precision),
                *(encode(encoder, t, size, precision) for t, _ in queries),
            ]
        )
    )
    ref_wall, ref_vecs = fp32
    print(
        f"  {precision} step (documents and queries) {wall:6.1f} s wall {cpu:6.1f} s CPU: {ref_wall / wall:.2f}x "
        f"the fp32 step's speed; smallest cosine to the fp32 vectors "
        f"{float((vecs * ref_vecs).sum(axis=1).min()):.6f}"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from baselines.toolkit.dense import DEFAULT_PRECISION, PRECISIONS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("runs/demo/hydrated"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--pool", default="closed", choices=("closed", "open"))
    parser.add_argument("--limit", type=int, default=None, help="time only the first N queries")
    parser.add_argument(
        "--precision",
        choices=[p for p in PRECISIONS if p != DEFAULT_PRECISION],
        default=None,
        help="also time the step in this precision (opt-in)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    import tempfile

    import numpy as np
    import torch

    from baselines.toolkit.dense import load_encoder

    encoder = load_encoder()
    config = encoder[0].auto_model.config
    with tempfile.TemporaryDirectory() as tmp:
        calls = recorded_calls(args.data, args.split, args.pool, config.hidden_size, Path(tmp))
    (docs, doc_size), queries = calls[0], calls[1:]
    if args.limit is not None:  # the first N query texts, in the run's calls
        kept, left = [], args.limit
        for texts, size in queries:
            if left > 0:
                kept.append((texts[:left], size))
                left -= len(kept[-1][0])
        queries = kept
    everything = [t for texts, _ in queries for t in texts]
    tokens = word_pieces(encoder, [*docs, *everything])
    doc_batches = padded_batches(tokens, docs, doc_size)
    run_batches = [b for texts, size in queries for b in padded_batches(tokens, texts, size)]
    one_call = padded_batches(tokens, everything, queries[0][1])
    print(f"Dense encoding on {machine()}, torch {torch.__version__} with {torch.get_num_threads()} threads")
    print(
        f"  {args.data} {args.split}/{args.pool}: {len(docs)} documents, {len(everything)} query texts "
        f"in {len(queries)} calls"
    )

    doc_vecs, doc_wall, doc_cpu = timed(lambda: encode(encoder, docs, doc_size))
    run_vecs, q_wall, q_cpu = timed(lambda: np.concatenate([encode(encoder, t, s) for t, s in queries]))
    one_vecs, one_wall, one_cpu = timed(lambda: encode(encoder, everything, queries[0][1]))
    rate = gemm_rate(config.hidden_size, config.intermediate_size)
    step_flops, step_wall = flops(doc_batches, config) + flops(run_batches, config), doc_wall + q_wall
    for what, texts, batches, wall, cpu in (
        ("documents", docs, doc_batches, doc_wall, doc_cpu),
        ("queries as the run groups them", everything, run_batches, q_wall, q_cpu),
        ("queries in one call", everything, one_call, one_wall, one_cpu),
    ):
        real = sum(tokens[t] for t in texts)
        padded = sum(b * n for b, n in batches)
        print(
            f"  {what:<31} {wall:6.1f} s wall {cpu:6.1f} s CPU, {real:,} word pieces ({padded:,} padded), "
            f"{flops(batches, config) / wall / 1e9:5.1f} GFLOP/s"
        )
    print(
        f"  queries in one call: {q_wall / one_wall:.2f}x the speed of the run's grouping; vectors "
        f"{'bit-identical' if np.array_equal(run_vecs, one_vecs) else 'not bit-identical'} (largest "
        f"difference {float(np.abs(run_vecs - one_vecs).max()):.1e})"
    )
    print(
        f"  torch's own {GEMM_ROWS}x{config.hidden_size} @ {config.hidden_size}x{config.intermediate_size} "
        f"product: {rate / 1e9:.1f} GFLOP/s"
    )
    print(
        f"dense share of the matrix peak: {step_flops / step_wall / rate:.0%} (the step's encoding "
        f"{step_wall:.1f} s; {step_flops / 1e12:.2f} TFLOP at the peak rate: {step_flops / rate:.1f} s)"
    )
    if args.precision:
        precision_pass(
            encoder,
            args.precision,
            docs,
            doc_size,
            queries,
            (step_wall, np.concatenate([doc_vecs, run_vecs])),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
