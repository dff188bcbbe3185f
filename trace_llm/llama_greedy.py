"""Greedy decoding under a grammar on llama.cpp, with the grammar asked about one token first.

llama.cpp's grammar sampler checks every token of the vocabulary (49,152 for SmolLM2) against the grammar at
each step, which costs 18-43% of the packaged model's decoding time (docs/llm.md). Under greedy decoding only
the highest-scoring token the grammar allows is ever used, so this sampler asks the grammar about the
highest-scoring token alone and checks the whole vocabulary only when the grammar forbids that token (llama.cpp's
own `common_sampler` does the same). The token chosen is the one the full check would choose: when the top
token is allowed it is also the top allowed token (ties go to the lowest token id either way, as in llama.cpp's
greedy sampler), and when it is not, the whole vocabulary is masked as before. So greedy replies are
byte-identical to llama-cpp-python's own grammar sampler (tests/trace_llm/test_smollm2.py compares them).

Sampling at a temperature above 0 keeps llama-cpp-python's sampler chain: checking the drawn token first
gives the same distribution but draws different random numbers, which would change seeded replies.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any

import numpy as np


class GrammarFirstTop:
    """A custom llama.cpp sampler (for llama-cpp-python's `LlamaSampler.add_custom`) that masks the candidates
    with `gbnf` lazily; put it before a greedy sampler. Counts the steps and how many needed the full mask."""

    def __init__(self, vocab: Any, gbnf: str, root: str = "root"):
        import llama_cpp

        self._lib = llama_cpp
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, gbnf.encode("utf-8"), root.encode("utf-8")
        )
        if not self._grammar:
            raise ValueError("llama.cpp's grammar parser refused the grammar (its message is on stderr)")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._one, llama_cpp.llama_token_data_p), size=1, selected=-1, sorted=False
        )
        self._pending: int | None = None  # the token chosen at the previous step, not yet fed to the grammar
        self.steps = 0
        self.full_masks = 0

    def _allowed(self, token: int, logit: float) -> bool:
        entry: Any = self._one[0]  # ctypes fields take Python numbers (the stubs type them as ctypes)
        entry.id, entry.logit, entry.p = token, logit, 0.0
        self._one_array.size = 1
        self._one_array.selected = -1
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(self._one_array))
        return not math.isinf(self._one[0].logit)

    def apply(self, cur_p: Any) -> None:
        if self._pending is not None:
            self._lib.llama_sampler_accept(self._grammar, self._pending)
        size = cur_p.contents.size
        view = np.ctypeslib.as_array(cur_p.contents.data, shape=(size,))
        logits = view["logit"]
        best = int(np.argmax(logits))
        self.steps += 1
        if not self._allowed(int(view["id"][best]), float(logits[best])):
            self.full_masks += 1
            self._lib.llama_sampler_apply(self._grammar, cur_p)
            best = int(np.argmax(view["logit"]))
        self._pending = int(view["id"][best])

    def close(self) -> None:
        if self._grammar:
            self._lib.llama_sampler_free(self._grammar)
            self._grammar = None


def request_sampler(llama: Any, settings: Any, grammar: Any) -> tuple[Any, GrammarFirstTop | None]:
    """The sampler chain llama-cpp-python builds for one of this backend's requests (the settings of
    `LlamaCppLLM._one`: temperature and top-p only, seeded with `settings.seed`), and, under greedy decoding with a
    grammar, the GrammarFirstTop in it (the caller closes it when the request ends). Side-by-side decoding
    (trace_llm/llama_parallel.py) builds one per sequence with this, so a sequence samples as it would alone."""
    from llama_cpp import Llama, LlamaGrammar

    llama.set_seed(settings.seed)
    if isinstance(grammar, LlamaGrammar) and settings.temperature == 0.0:
        return grammar_first_sampler(llama, grammar)
    chain = Llama._init_sampler(
        llama,
        top_k=0,
        top_p=settings.top_p,
        min_p=0.0,
        temp=settings.temperature,
        repeat_penalty=1.0,
        grammar=grammar,
    )
    return chain, None


def grammar_first_sampler(
    llama: Any, grammar: Any, repeat_penalty: float = 1.0, frequency: float = 0.0, presence: float = 0.0
) -> tuple[Any, GrammarFirstTop]:
    """Greedy decoding under `grammar` (a LlamaGrammar) with the top token checked first: llama-cpp-python's
    chain (penalties, then greedy) with GrammarFirstTop in place of its grammar sampler."""
    from llama_cpp import _internals as internals

    sampler = internals.LlamaSampler()
    sampler.add_penalties(
        n_vocab=llama._n_vocab,
        penalty_last_n=llama.last_n_tokens_size,
        penalty_repeat=repeat_penalty,
        penalty_freq=frequency,
        penalty_present=presence,
    )
    lazy = GrammarFirstTop(llama._model.vocab, grammar._grammar, grammar._root)
    sampler.add_custom(lazy.apply)
    sampler.add_greedy()
    return sampler, lazy


def _lower_held_cells(llama: Any, tokens: list[int]) -> None:
    """Lower a loaded model's held cells to those a fresh read of `tokens` would compute the same way (the
    reusable prefix, cut where the read would start a batch; trace_llm/llama_reads.py)."""
    from trace_llm.llama_reads import common_prefix, read_start

    held = llama._input_ids[: min(llama.n_tokens, llama._reusable)].tolist()
    keep = read_start(len(tokens), common_prefix(held, tokens), llama.n_batch)
    if keep < llama.n_tokens:
        if not llama._ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0
        llama.n_tokens = keep
        llama._requires_eval = True


@functools.cache
def greedy_grammar_llama_class() -> type:
    """llama-cpp-python's `Llama` whose greedy decoding under a grammar uses GrammarFirstTop (every other setting
    builds llama-cpp-python's own sampler chain) and whose prompts are read as a fresh read reads them
    (trace_llm/llama_reads.py: the held cells it reuses and where the read starts). Defined once, on first use
    (llama_cpp is optional)."""
    from llama_cpp import Llama, LlamaGrammar

    from trace_llm.llama_reads import reusable_after

    class GreedyGrammarLlama(Llama):  # type: ignore[misc]
        grammar_steps = 0
        grammar_full_masks = 0
        _lazy: GrammarFirstTop | None = None
        _reusable = 0  # leading cells a later prompt may reuse (read with others, not generated)

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
            """llama-cpp-python's generate, after lowering the held cells to those a fresh read would compute
            the same way (its own prefix match then reuses exactly those)."""
            tokens = list(tokens)
            if kwargs.get("reset", True) and self.n_tokens > 0:
                _lower_held_cells(self, tokens)
            start = self.n_tokens if self.n_tokens > 0 else 0
            self._reusable = min(self._reusable, start)
            inner = super().generate(tokens, *args, **kwargs)
            try:
                token = next(inner)
            except StopIteration:
                return
            self._reusable = reusable_after(len(tokens), start, self.n_batch)  # the prompt is read
            while True:
                sent = yield token
                try:
                    token = inner.send(sent)
                except StopIteration:
                    return

        def save_state(self) -> Any:
            state = super().save_state()
            state.reusable = self._reusable  # type: ignore[attr-defined]  # what a later prompt may reuse of it
            return state

        def load_state(self, state: Any) -> None:
            super().load_state(state)
            self._reusable = getattr(state, "reusable", 0)

        def _init_sampler(self, *args: Any, **kwargs: Any) -> Any:
            grammar = kwargs.get("grammar")
            if self._lazy is not None:  # the previous request's: count it and free it
                self.retire(self._lazy)
                self._lazy = None
            greedy = kwargs.get("temp") == 0.0 and not args and kwargs.get("logits_processor") is None
            if not (greedy and isinstance(grammar, LlamaGrammar)):
                return super()._init_sampler(*args, **kwargs)
            sampler, self._lazy = grammar_first_sampler(
                self,
                grammar,
                kwargs.get("repeat_penalty", 1.0),
                kwargs.get("frequency_penalty", 0.0),
                kwargs.get("presence_penalty", 0.0),
            )
            return sampler

        def grammar_counts(self) -> tuple[int, int]:
            """(greedy steps under a grammar, steps that needed the full mask) since this model was loaded."""
            live = (self._lazy.steps, self._lazy.full_masks) if self._lazy is not None else (0, 0)
            return self.grammar_steps + live[0], self.grammar_full_masks + live[1]

        def retire(self, lazy: GrammarFirstTop) -> None:
            """Count a finished request's GrammarFirstTop and free it."""
            self.grammar_steps += lazy.steps
            self.grammar_full_masks += lazy.full_masks
            lazy.close()

        def close(self) -> None:
            if self._lazy is not None:
                self.retire(self._lazy)
                self._lazy = None
            super().close()

    return GreedyGrammarLlama
