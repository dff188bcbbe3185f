"""How llama.cpp reads a prompt here, so that a reply depends on its request alone (not on what came before).

llama.cpp computes a token read alone (the only query row of its sequence in a `llama_decode` call) slightly
differently from a token read with others: the attention's matrix product takes another path. Every other row is
computed the same whatever the chunk around it (tests/trace_llm/test_llama_parallel.py reads prompts in other
chunks and compares the logits bit for bit). A fresh read goes in 512-token chunks from the start, so its only
token read alone is the last, where n % 512 == 1. A prompt that starts like cells already held (the previous
request's, a prompt cache's, a sequence's) reads only the rest, and that is where llama-cpp-python's own reuse
could change a reply: the rest may end in a one-token chunk (the same prompt again), or the held cells may be a
reply's, computed one token at a time while it was generated (a JSON repair right after the reply it repairs).
`read_start` and `reusable_after` keep every read a fresh read's: only cells read with others are reused, and the
read starts where its chunks have a one-token chunk exactly where a fresh read has one. The llamacpp backend
reads this way one request at a time (trace_llm/llama_greedy.py, `CanonicalReads`) and side by side
(trace_llm/llama_parallel.py), so its replies are the same with and without the prompt cache and for every
`parallel`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PROMPT_CHUNK = 512  # tokens read per llama_decode call (llama-cpp-python's n_batch)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(diff[0]) if diff.size else n


def read_start(n: int, shared: int, chunk: int = PROMPT_CHUNK) -> int:
    """Where to start reading an n-token prompt whose first `shared` tokens are already held, so that every token
    is computed as a fresh read computes it. A read goes in 512-token chunks from its start (llama-cpp-python's
    `eval`); llama.cpp computes a token read alone (one query row of its sequence) slightly differently from one
    read with others, and a fresh read has such a chunk only at the end, where n % 512 == 1. So the start is
    lowered until the chunks from it have a one-token chunk exactly where a fresh read has one; at least the last
    token is read (its logits are needed)."""
    keep = max(0, min(shared, n - 1))
    if n > 1 and n % chunk == 1:  # a fresh read ends with the last token alone: so must this one
        return keep - keep % chunk
    while keep > 0 and (n - keep) % chunk == 1:
        keep -= 1
    return keep


def reusable_after(n: int, start: int, chunk: int = PROMPT_CHUNK) -> int:
    """How many of an n-token prompt's cells, read from `start`, a later prompt may reuse: all of them, but a last
    token read alone (not as a longer prompt computes it)."""
    return n - ((n - start) % chunk == 1)
