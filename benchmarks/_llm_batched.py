"""`benchmarks/llm.py --batched`: requests decoded side by side (`--llm-parallel N`) against one by one.

Both models are the packaged SmolLM2 under llama.cpp in this process, loaded once each (one with `parallel=N`,
one with `parallel=1`), without a response cache or a prompt cache, on the same CPU threads. Each round answers
the same `n` short prompts (about 30 tokens each, so the time is mostly generation) greedily with each model,
the two alternated so that a change in the machine's load falls on both, after a warm-up batch of as many
other prompts on each (the first batch side by side costs about twice a later one: it sets up every sequence);
the speed-up is the median wall time one by one over the median side by side. The replies are compared too (side by side must answer the same).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any


def _round(llm: Any, convs: list) -> tuple[float, float, list[str]]:
    t0, c0 = time.perf_counter(), time.process_time()
    texts = llm.generate_batch(convs)
    return time.perf_counter() - t0, time.process_time() - c0, list(texts)


def batched_speedup(
    convs: list, max_new_tokens: int, threads: int | None, repeats: int, parallel: int
) -> dict[str, Any]:
    from trace_llm import DecodingSettings, load_llm

    settings = DecodingSettings(temperature=0.0, max_new_tokens=max_new_tokens)
    models = {
        p: load_llm(
            "smollm2:llamacpp", settings, cache_path=False, threads=threads, parallel=p, prompt_cache=0
        )
        for p in (1, parallel)
    }
    warm = [[{"role": "user", "content": f"warm-up {i}"}] for i in range(len(convs))]
    for llm in models.values():  # a whole batch: the first batch side by side sets up every sequence
        llm.generate_batch(warm)
    rounds: dict[int, list[tuple[float, float]]] = {p: [] for p in models}
    replies: dict[int, list[str]] = {}
    for _ in range(repeats):
        for p, llm in models.items():
            wall, cpu, texts = _round(llm, convs)
            rounds[p].append((wall, cpu))
            replies.setdefault(p, texts)
            print(
                f"  parallel {p}: {wall:.2f} s wall, {cpu:.2f} s CPU (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    one = statistics.median(w for w, _ in rounds[1])
    side = statistics.median(w for w, _ in rounds[parallel])
    return {
        "requests": len(convs),
        "parallel": parallel,
        "max_new_tokens": max_new_tokens,
        "threads": threads,
        "rounds": {
            str(p): [{"wall_s": round(w, 3), "cpu_s": round(c, 3)} for w, c in r] for p, r in rounds.items()
        },
        "speed_up": round(one / side, 3),
        "identical_replies": replies[1] == replies[parallel],
    }
