"""Side-by-side decoding on llama.cpp: the requests of a batch decoded together, as sequences of one context.

llama.cpp's context holds `parallel` sequences, each in its own stream of the KV cache (`kv_unified` off) of
`context` tokens, so a sequence attends to its own tokens only and every sequence has the context a request has
alone. A request's prompt is read alone, into a free sequence, in llama-cpp-python's 512-token chunks; then each
generation step decodes the next token of every sequence in one `llama_decode` call: the model's weights are read
once for all of them, which pays where reading them is what a step costs (8 sequences on one thread, the
packaged GGUF: 1.56-2.19x the generation throughput of the same 8 one after another on an Intel Xeon VM,
1.2-1.4x on AMD EPYC ones whose steps are bound by arithmetic, 1.8x there at the default threads, which step on
every core; `benchmarks/llm.py --batched`, docs/llm.md). A
sequence that ends frees its place for the next request at once (continuous batching). Threads follow
llama.cpp's own rule for a call: one token runs on the generating threads, more on the prompt-reading ones
(`n_threads_batch`), so a step of several sequences uses what a prompt read uses (by default every core;
`--llm-threads N` sets both).

* The same replies as one request at a time (tests/trace_llm/test_llama_parallel.py compares them, JSON under a
  grammar and seeded sampling included): every matrix product of a step computes each token's row on its own
  (llama.cpp's CPU kernels), a sequence's cells sit in its own stream in the order they would alone, and the
  cells past its end are masked to zero weight. A reply therefore depends neither on the other requests of its
  batch nor on the order they finish in.
* Per sequence, as llama-cpp-python does per request: the chat template stored in the GGUF file (the same
  formatter), its own sampler chain (`trace_llm.llama_greedy.request_sampler`: the grammar, the greedy top-token
  check, the seed), the stop rules (an end-of-generation token, the template's stop text, `max_new_tokens`,
  an incomplete UTF-8 character finished first) and the token counts.
* One request's error (a prompt longer than the context) is that request's: the others are answered, and the
  error is raised after them.
* A prompt that starts like what a sequence already holds (the same system text; a debater's or a Collab-REC
  agent's next round; a JSON repair, which continues the reply it repairs) reads only the rest: each request
  goes to the free sequence sharing its longest prefix (ties: the lowest), which costs nothing to keep.
"""

from __future__ import annotations

import ctypes
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_llm.cache import Completion
from trace_llm.errors import LLMConfigError, LLMError
from trace_llm.llama_greedy import request_sampler
from trace_llm.llama_reads import PROMPT_CHUNK, common_prefix, read_start, reusable_after
from trace_llm.settings import DecodingSettings

log = logging.getLogger(__name__)

TEMPLATE = "chat_template.default"  # the chat format llama-cpp-python uses for a GGUF file's own template
# UTF-8 lead bytes: (bytes in the character, the lead byte's pattern), as llama-cpp-python checks them
_LEADS = ((2, 192), (3, 224), (4, 240))


@dataclass
class Job:
    """One request: its index in the batch, its messages, and how to sample it."""

    index: int
    messages: list[dict[str, str]]
    settings: DecodingSettings
    grammar: Any = None


@dataclass
class _Live:
    """A request being answered in one sequence of the context."""

    job: Job
    slot: int
    prompt: list[int]
    max_tokens: int
    sampler: Any
    lazy: Any
    tokens: list[int] = field(default_factory=list)  # generated, in order
    raw: bytearray = field(default_factory=bytearray)
    multibyte: int = 0
    next_token: int = -1  # sampled, not yet decoded

    def text(self) -> bytes:
        """The reply's bytes so far (llama-cpp-python's detokenize: a leading space after BOS dropped)."""
        return bytes(self.raw)


class SideBySide:
    """`parallel` sequences of one llama.cpp context on the model of `llama` (a llama-cpp-python `Llama`, whose
    tokenizer, chat template and sampler settings the sequences use)."""

    def __init__(self, llama: Any, parallel: int, context: int, threads: tuple[int, int], flash_attn: bool):
        import llama_cpp
        from llama_cpp import _internals as internals
        from llama_cpp import llama_chat_format

        if llama.chat_handler is not None or llama.chat_format != TEMPLATE:
            raise LLMConfigError(
                f"parallel={parallel}: side-by-side decoding needs the chat template stored in the GGUF file "
                f"(this file's chat format is {llama.chat_format!r}); use parallel=1"
            )
        self._lib = llama_cpp
        self.llama = llama
        self.parallel = parallel
        self.context = context
        self.chunk = min(context, PROMPT_CHUNK)  # as llama-cpp-python's n_batch for a context of this size
        eos, bos = llama.token_eos(), llama.token_bos()
        self._bos = bos
        self._formatter: Any = llama_chat_format.Jinja2ChatFormatter(
            template=llama.metadata["tokenizer.chat_template"],
            eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )
        params = llama_cpp.llama_context_default_params()
        for name in ("rope_scaling_type", "pooling_type", "attention_type", "offload_kqv", "flash_attn_type"):
            setattr(params, name, getattr(llama.context_params, name))
        params.n_ctx = context * parallel
        params.n_seq_max = parallel
        params.kv_unified = False  # each sequence in its own stream: it attends to its own cells only
        params.n_batch = max(PROMPT_CHUNK, parallel)
        params.n_ubatch = PROMPT_CHUNK
        params.n_threads, params.n_threads_batch = threads
        params.no_perf = False
        self._ctx = internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self._batch = internals.LlamaBatch(n_tokens=params.n_batch, embd=0, n_seq_max=1, verbose=False)
        self._memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._held: list[list[int]] = [[] for _ in range(parallel)]  # the tokens in each sequence's cells
        self._reusable = [0] * parallel  # how many of them a later prompt may reuse
        self._piece = (ctypes.c_char * 32)()
        self.prompt_tokens_read = 0
        self.generated = 0
        self.steps = 0
        self.read_seconds = 0.0  # reading prompts (the rest of a batch's time is generating)

    # ---- one request's tokens and text ------------------------------------------------------------------
    def _prompt(self, messages: list[dict[str, str]]) -> tuple[list[int], list[bytes]]:
        """The prompt's tokens and the stop texts, as llama-cpp-python's chat handler makes them."""
        result = self._formatter(messages=messages)
        tokens = self.llama.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        stops = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
        return tokens, [s.encode("utf-8") for s in stops]

    def _token_bytes(self, token: int) -> bytes:
        n = self._lib.llama_token_to_piece(self.llama._model.vocab, token, self._piece, 32, 0, False)
        return self._piece.raw[:n]

    def _accept(self, live: _Live, token: int, stops: list[bytes]) -> Completion | None:
        """Take a sampled token; the completion once the request ends (llama-cpp-python's stop rules, in its
        order: an end-of-generation token, the stop texts, then max_tokens; an unfinished UTF-8 character is
        finished first)."""
        if self._lib.llama_vocab_is_eog(self.llama._model.vocab, token):
            return self._finish(live, live.text(), "stop")
        live.tokens.append(token)
        piece = self._token_bytes(token)
        if len(live.tokens) == 1 and token == self._bos and piece[:1] == b" ":
            piece = piece[1:]
        live.raw += piece
        text = live.text()
        for k, char in enumerate(text[-3:]):
            k = 3 - k
            for num, pattern in _LEADS:
                if num > k and pattern & char == pattern:
                    live.multibyte = num - k
        if live.multibyte > 0:
            live.multibyte -= 1
            live.next_token = token
            return None
        hits = [s for s in stops if s in text]
        if hits:
            return self._finish(live, text[: text.index(hits[0])], "stop")
        if len(live.tokens) >= live.max_tokens:
            return self._finish(live, text, "length")
        live.next_token = token
        return None

    def _finish(self, live: _Live, text: bytes, reason: str) -> Completion:
        if live.lazy is not None:
            self.llama.retire(live.lazy)
            live.lazy = None
        self.generated += len(live.tokens)
        return Completion(text.decode("utf-8", errors="ignore"), len(live.prompt), len(live.tokens), reason)

    # ---- decoding --------------------------------------------------------------------------------------
    def _decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        """One llama_decode call of (token, position, sequence, wants logits) entries, on llama.cpp's threads
        for its size (module docstring)."""
        batch = self._batch.batch
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.seq_id[i][0] = seq
            batch.n_seq_id[i] = 1
            batch.logits[i] = logits
        batch.n_tokens = len(entries)
        code = self._lib.llama_decode(self._ctx.ctx, batch)
        if code != 0:
            raise LLMError(f"llama.cpp: llama_decode returned {code} ({len(entries)} tokens)")

    def _slot_for(self, prompt: list[int], free: list[int]) -> tuple[int, int]:
        """(the free sequence sharing the longest reusable prefix with `prompt`, ties the lowest; its length)."""
        best, keep = free[0], -1
        for slot in sorted(free):
            shared = common_prefix(self._held[slot][: self._reusable[slot]], prompt)
            if shared > keep:
                best, keep = slot, shared
        return best, keep

    def _start(self, job: Job, free: list[int]) -> tuple[_Live, list[bytes]]:
        """Read a request's prompt into a free sequence and sample its first token (ValueError: too long)."""
        prompt, stops = self._prompt(job.messages)
        if len(prompt) >= self.context:
            raise ValueError(f"Requested tokens ({len(prompt)}) exceed context window of {self.context}")
        max_tokens = job.settings.max_new_tokens
        if max_tokens + len(prompt) >= self.context:
            max_tokens = self.context - len(prompt)
        slot, shared = self._slot_for(prompt, free)
        keep = read_start(len(prompt), shared, self.chunk)
        if not self._lib.llama_memory_seq_rm(self._memory, slot, keep, -1):
            self._lib.llama_memory_seq_rm(self._memory, slot, -1, -1)
            keep = 0
        held = self._held[slot] = self._held[slot][:keep]
        self._reusable[slot] = keep  # until the read is done
        sampler, lazy = request_sampler(self.llama, job.settings, job.grammar)
        live = _Live(job, slot, prompt, max_tokens, sampler, lazy)
        started = time.perf_counter()
        for start in range(keep, len(prompt), self.chunk):
            end = min(start + self.chunk, len(prompt))
            self._decode([(prompt[i], i, slot, i == len(prompt) - 1) for i in range(start, end)])
            held.extend(prompt[start:end])
        self._lib.llama_synchronize(self._ctx.ctx)  # llama_decode may return before the work is done
        self.prompt_tokens_read += len(prompt) - keep
        self.read_seconds += time.perf_counter() - started
        self._reusable[slot] = reusable_after(len(prompt), keep, self.chunk)
        free.remove(slot)
        live.next_token = sampler.sample(self._ctx, (len(prompt) - keep - 1) % self.chunk)
        return live, stops

    def _step(self, live: list[_Live]) -> None:
        """One token of every live sequence, in one llama_decode call (in sequence order: llama.cpp splits a
        batch of separate streams where the sequence ids stop being consecutive)."""
        live.sort(key=lambda x: x.slot)
        self._decode([(x.next_token, len(self._held[x.slot]), x.slot, True) for x in live])
        for x in live:
            self._held[x.slot].append(x.next_token)
        self.steps += 1
        for i, x in enumerate(live):
            x.next_token = x.sampler.sample(self._ctx, i)

    def answer(self, jobs: Sequence[Job], on_done: Callable[[int, Completion | BaseException], None]) -> None:
        """Answer every job; on_done(index, completion or the request's error) as each ends. An error of
        llama.cpp itself (a failed decode) ends the call."""
        pending = deque(jobs)
        free = list(range(self.parallel))
        live: dict[int, tuple[_Live, list[bytes]]] = {}
        try:
            while pending or live:
                while pending and free:
                    job = pending.popleft()
                    try:
                        started, stops = self._start(job, free)
                    except ValueError as e:
                        on_done(job.index, e)
                        continue
                    self._settle(started, stops, started.next_token, live, free, on_done)
                if not live:
                    continue
                current = [x for x, _ in live.values()]
                self._step(current)
                for x in current:
                    self._settle(x, live[x.slot][1], x.next_token, live, free, on_done)
        finally:
            for x, _ in live.values():
                self._drop(x)

    def _settle(
        self,
        x: _Live,
        stops: list[bytes],
        token: int,
        live: dict[int, tuple[_Live, list[bytes]]],
        free: list[int],
        on_done: Callable[[int, Completion | BaseException], None],
    ) -> None:
        """Take the token `x` sampled; hand its completion (or error) on and free its sequence when it ends."""
        done: Completion | BaseException | None = self._accept(x, token, stops)
        if done is None and len(self._held[x.slot]) >= self.context:
            self._drop(x)
            done = LLMError(f"the reply ran past the context of {self.context} tokens")
        if done is None:
            live[x.slot] = (x, stops)
            return
        live.pop(x.slot, None)
        free.append(x.slot)
        on_done(x.job.index, done)

    def _drop(self, live: _Live) -> None:
        if live.lazy is not None:
            self.llama.retire(live.lazy)
            live.lazy = None

    def close(self) -> None:
        self._batch.close()
        self._ctx.close()


class _Stopped(Exception):
    """A thread's work ends early: the batch failed elsewhere."""


def on_threads(
    n: int,
    work: Callable[[int, Callable[[int, Any], None]], Any],
    threads: int,
    on_done: Callable[[int, Any], None],
) -> None:
    """Run work(j, put) for j < threads, each in a thread of its own, until `n` answers came: every put(i, answer)
    reaches on_done here, in the caller's thread (an SQLite connection belongs to the thread that opened it); an
    error raised by a work ends the batch, raised here."""
    answers: queue.Queue[tuple[int, Any]] = queue.Queue()
    stop = threading.Event()

    def put(i: int, answer: Any) -> None:
        if stop.is_set():
            raise _Stopped
        answers.put((i, answer))

    def run(j: int) -> None:
        try:
            work(j, put)
        except _Stopped:
            return
        except BaseException as e:  # handed to the caller's thread, raised there
            answers.put((-1, e))

    workers = [threading.Thread(target=run, args=(j,), daemon=True) for j in range(threads)]
    for w in workers:
        w.start()
    try:
        for _ in range(n):
            i, answer = answers.get()
            if i == -1:
                raise answer
            on_done(i, answer)
    finally:
        stop.set()
        for w in workers:
            w.join()
