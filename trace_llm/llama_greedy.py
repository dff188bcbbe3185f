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


@functools.cache
def greedy_grammar_llama_class() -> type:
    """llama-cpp-python's `Llama` whose greedy decoding under a grammar uses GrammarFirstTop; every other
    setting builds llama-cpp-python's own sampler chain. Defined once, on first use (llama_cpp is optional)."""
    from llama_cpp import Llama, LlamaGrammar
    from llama_cpp import _internals as internals

    class GreedyGrammarLlama(Llama):  # type: ignore[misc]
        grammar_steps = 0
        grammar_full_masks = 0
        _lazy: GrammarFirstTop | None = None

        def _init_sampler(self, *args: Any, **kwargs: Any) -> Any:
            grammar = kwargs.get("grammar")
            if self._lazy is not None:  # the previous request's: count it and free it
                self._retire()
            if not (
                isinstance(grammar, LlamaGrammar)
                and kwargs.get("temp") == 0.0
                and not args
                and kwargs.get("logits_processor") is None
            ):
                return super()._init_sampler(*args, **kwargs)
            sampler = internals.LlamaSampler()
            sampler.add_penalties(
                n_vocab=self._n_vocab,
                penalty_last_n=self.last_n_tokens_size,
                penalty_repeat=kwargs.get("repeat_penalty", 1.0),
                penalty_freq=kwargs.get("frequency_penalty", 0.0),
                penalty_present=kwargs.get("presence_penalty", 0.0),
            )
            self._lazy = GrammarFirstTop(self._model.vocab, grammar._grammar, grammar._root)
            sampler.add_custom(self._lazy.apply)
            sampler.add_greedy()
            return sampler

        def grammar_counts(self) -> tuple[int, int]:
            """(greedy steps under a grammar, steps that needed the full mask) since this model was loaded."""
            live = (self._lazy.steps, self._lazy.full_masks) if self._lazy is not None else (0, 0)
            return self.grammar_steps + live[0], self.grammar_full_masks + live[1]

        def _retire(self) -> None:
            assert self._lazy is not None
            self.grammar_steps += self._lazy.steps
            self.grammar_full_masks += self._lazy.full_masks
            self._lazy.close()
            self._lazy = None

        def close(self) -> None:
            if self._lazy is not None:
                self._retire()
            super().close()

    return GreedyGrammarLlama
