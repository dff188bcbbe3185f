"""Constrained decoding in process (the `hf` backend): a `Constraint` compiled to a grammar with xgrammar, and a
transformers logits processor that masks every token the grammar does not allow, so the reply parses and
validates by construction (short of being cut at `max_new_tokens`).

Why xgrammar (measured with SmolLM2-135M on the 2-core sandbox, `python benchmarks/structured.py --engines`;
the table is in docs/llm.md): both constrain every schema the package sends, but llguidance's mask for the
ranking schema (an `enum` array with `maxItems`) costs ~105 ms a token, over half the decoding time, and one of
its Collab-REC agent replies failed the schema; xgrammar masks a token in ~0.4 ms (under 1% of decoding) and
compiles each schema once, in up to ~1.3 s. Neither engine enforces `uniqueItems`; the package's schemas leave
it out (the validator would still check it).

Install: `pip install 'trace-bench[structured]'` (xgrammar, installed without its CUDA-only triton dependency
by scripts/setup.sh). Without it, `auto` decodes in process without a grammar and logs that once.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import time
from collections import OrderedDict
from typing import Any

from trace_bench.shell import pip_install_command
from trace_llm.errors import LLMConfigError
from trace_llm.structured import Constraint

log = logging.getLogger(__name__)

ENGINE = "xgrammar"
MAX_COMPILED = 64  # compiled grammars kept per model (schemas differ with the number of candidates shown)


def grammar_available() -> bool:
    return importlib.util.find_spec(ENGINE) is not None


def missing_engine_error() -> LLMConfigError:
    return LLMConfigError(
        f"constrained decoding in process needs {ENGINE}: {pip_install_command('trace-bench[structured]')} "
        "(or pass --structured prompt)"
    )


class GrammarCompiler:
    """Compiles constraints for one tokenizer, keeping the last MAX_COMPILED grammars."""

    def __init__(self, tokenizer: Any, vocab_size: int | None = None):
        if not grammar_available():
            raise missing_engine_error()
        import xgrammar as xgr

        self._xgr = xgr
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
        self.vocab_size = info.vocab_size
        self._compiler = xgr.GrammarCompiler(info, max_threads=2, cache_enabled=False)
        self._compiled: OrderedDict[str, Any] = OrderedDict()
        self.compile_seconds = 0.0

    def compile(self, constraint: Constraint) -> Any:
        hit = self._compiled.get(constraint.digest)
        if hit is not None:
            self._compiled.move_to_end(constraint.digest)
            return hit
        started = time.perf_counter()
        try:
            if constraint.kind == "json":
                schema = constraint.schema if isinstance(constraint.schema, dict) else {}
                compiled = self._compiler.compile_json_schema(
                    json.dumps(schema), any_whitespace=False, strict_mode=True
                )
            else:
                assert constraint.grammar is not None  # a gbnf Constraint is refused without one
                compiled = self._compiler.compile_grammar(constraint.grammar)
        except (RuntimeError, ValueError, TypeError) as e:
            raise LLMConfigError(
                f"cannot compile the {constraint.kind} constraint to a grammar ({ENGINE}): {e}"
            ) from e
        self.compile_seconds += time.perf_counter() - started
        self._compiled[constraint.digest] = compiled
        if len(self._compiled) > MAX_COMPILED:
            self._compiled.popitem(last=False)
        return compiled

    def processor(self, constraint: Constraint, batch_size: int) -> GrammarLogitsProcessor:
        return GrammarLogitsProcessor(self._xgr, self.compile(constraint), batch_size, self.vocab_size)


class GrammarLogitsProcessor:
    """A transformers logits processor for one `generate` call: one grammar matcher per row of the batch.

    The first call sees the prompt; each later call sees the token just sampled (the last column), which the
    row's matcher consumes before it fills the next mask. A row whose matcher has terminated (it accepted the
    stop token) is left alone: transformers pads finished rows itself. `seconds` is the time spent in matching
    and masking, what benchmarks/structured.py reports against the decoding time.
    """

    def __init__(self, xgr: Any, compiled: Any, batch_size: int, vocab_size: int):
        self._xgr = xgr
        self.matchers = [xgr.GrammarMatcher(compiled) for _ in range(batch_size)]
        self.bitmask = xgr.allocate_token_bitmask(batch_size, vocab_size)
        self.started = False
        self.seconds = 0.0
        self.tokens = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        began = time.perf_counter()
        if input_ids.shape[0] != len(self.matchers):
            raise LLMConfigError(
                f"grammar processor made for {len(self.matchers)} rows, got {input_ids.shape[0]}"
            )
        if self.started:
            for i, matcher in enumerate(self.matchers):
                if not matcher.is_terminated():
                    matcher.accept_token(int(input_ids[i, -1]))
        self.started = True
        for i, matcher in enumerate(self.matchers):
            if not matcher.is_terminated():
                matcher.fill_next_token_bitmask(self.bitmask, i)
        if scores.device.type == "cpu":
            self._xgr.apply_token_bitmask_inplace(scores, self.bitmask)
        else:
            masked = scores.to("cpu")
            self._xgr.apply_token_bitmask_inplace(masked, self.bitmask)
            scores = masked.to(scores.device)
        self.seconds += time.perf_counter() - began
        self.tokens += 1
        return scores
