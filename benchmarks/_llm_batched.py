"""`benchmarks/llm.py --batched`: requests decoded side by side (`--llm-parallel N`) against one by one.

Both models are the packaged SmolLM2 under llama.cpp in this process, loaded once each (one with `parallel=N`,
one with `parallel=1`), without a response cache or a prompt cache, on the same CPU threads. Each round answers
`n` short prompts (about 30 tokens each, new ones each round, the same for both models) greedily with each
model, the two alternated so that a change in the machine's load falls on both, on the same threads (`--threads N`,
else llama.cpp's defaults: half the cores generating, all reading; a call of more than one token, which is a
step side by side, runs on the reading threads, trace_llm/llama_parallel.py), after `WARM_UP` batches on each
(side by side, the first batches cost up to twice a later one while every sequence's cells are first touched).
New prompts each round, because both models keep what they last read and reread only what differs (a sequence
side by side keeps its last prompt): a repeated prompt would be read for free. A round's generation
time is its wall time less the time spent reading prompts, which both models read one at a time: llama.cpp's
own prompt-evaluation time one by one (`llama_perf_context`), the time of the prompt decode calls side by side
(`SideBySide.read_seconds`). The speed-up printed is generation only, the median generation time one by one over
the median side by side; the speed-up with prompt reading (median whole rounds) is printed beside it. The replies
are compared too (side by side must answer the same).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

WARM_UP = 2


def _reading_seconds(llm: Any) -> float:
    """Seconds this llama.cpp model has spent reading prompts so far (module docstring)."""
    if llm._sides:
        return float(sum(side.read_seconds for side in llm._sides))
    import llama_cpp

    return sum(llama_cpp.llama_perf_context(llama._ctx.ctx).t_p_eval_ms for llama in llm._llamas) / 1000


def _round(llm: Any, convs: list) -> tuple[float, float, float, list[str]]:
    """(wall, CPU, reading seconds, replies) of one batch."""
    t0, c0, r0 = time.perf_counter(), time.process_time(), _reading_seconds(llm)
    texts = llm.generate_batch(convs)
    return time.perf_counter() - t0, time.process_time() - c0, _reading_seconds(llm) - r0, list(texts)


def batched_speedup(
    prompts: Callable[[int], list],
    n: int,
    max_new_tokens: int,
    threads: int | None,
    repeats: int,
    parallel: int,
) -> dict[str, Any]:
    """Batches of `n` of the conversations `prompts(count)` gives, new ones for each batch."""
    from trace_llm import DecodingSettings, load_llm

    convs = prompts(n * (WARM_UP + repeats))
    batches = [convs[at : at + n] for at in range(0, len(convs), n)]

    settings = DecodingSettings(temperature=0.0, max_new_tokens=max_new_tokens)
    models = {
        p: load_llm(
            "smollm2:llamacpp", settings, cache_path=False, threads=threads, parallel=p, prompt_cache=0
        )
        for p in (1, parallel)
    }
    for llm in models.values():
        for batch in batches[:WARM_UP]:
            llm.generate_batch(batch)
    rounds: dict[int, list[tuple[float, float, float]]] = {p: [] for p in models}
    replies: dict[int, list[str]] = {}
    for batch in batches[WARM_UP:]:
        for p, llm in models.items():
            wall, cpu, read, texts = _round(llm, batch)
            rounds[p].append((wall, cpu, wall - read))
            replies.setdefault(p, []).extend(texts)
            print(
                f"  parallel {p}: {wall:.2f} s wall, {cpu:.2f} s CPU, of which generating {wall - read:.2f} s "
                f"(load {os.getloadavg()[0]:.1f})",
                flush=True,
            )

    def median(p: int, k: int) -> float:
        return statistics.median(r[k] for r in rounds[p])

    llama = models[1]._llamas[0]
    return {
        "requests": n,
        "parallel": parallel,
        "max_new_tokens": max_new_tokens,
        "threads": threads,
        # what llama.cpp ran on: one token a call (one by one) on the first, a step of several on the second
        "threads_generating_reading": [llama.n_threads, llama.n_threads_batch],
        "rounds": {
            str(p): [
                {"wall_s": round(w, 3), "cpu_s": round(c, 3), "generating_s": round(g, 3)} for w, c, g in r
            ]
            for p, r in rounds.items()
        },
        "speed_up": round(median(1, 2) / median(parallel, 2), 3),
        "speed_up_with_reading": round(median(1, 0) / median(parallel, 0), 3),
        "identical_replies": replies[1] == replies[parallel],
    }
