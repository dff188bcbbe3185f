"""Backend `llamacpp`: a GGUF file run in process by llama.cpp (llama-cpp-python), the fastest way to run the
packaged SmolLM2 on a CPU (benchmarks/llm.py; docs/llm.md has the figures) and so the default of `--llm smollm2`
where llama-cpp-python is installed.

* Chat template: the one stored in the GGUF file (llama-cpp-python's Jinja formatter).
* Decoding: greedy at temperature 0; above 0, temperature and top-p only (llama.cpp's top-k and min-p samplers
  are switched off so the settings mean what they mean for the hf backend), seeded with `settings.seed` per
  request. Each answer goes to the cache as it finishes, so progress moves per request.
* Constrained decoding: a JSON Schema becomes a GBNF grammar with llama-cpp-python's own converter
  (`LlamaGrammar.from_json_schema`); a GBNF constraint is used as written. The grammar masks every token it does
  not allow while sampling. Greedy decoding asks the grammar about the top token first and masks the whole
  vocabulary only when that token is forbidden (trace_llm/llama_greedy.py: the same replies, and the grammar's
  share of decoding falls from 18-43% to under 10%; docs/llm.md).
* parallel=N (default 1): a batch's requests decoded side by side, N sequences of one llama.cpp context, one
  token of each per step (trace_llm/llama_parallel.py). prompt_cache=MB (default 1024; 0: none): with one
  sequence, llama.cpp states kept in RAM after each request inside `trace_llm.prefix_reuse()` (CoRE's debates,
  Collab-REC's rounds: a prompt that starts like an earlier one, not only the one just before, reads only the
  rest); elsewhere no state is kept (keeping one costs 6-31% on distinct prompts). Either way a prompt is read
  as a fresh read reads it (trace_llm/llama_reads.py), so the replies are the same for every `parallel` and with
  or without the prompt cache.
* dtype=float16 (also float32, bfloat16; default: the file's own types): the weights rewritten once in that
  type by llama.cpp's quantizer (trace_llm/llama_dtype.py), which reads long prompts faster on a CPU than Q4_1.
  flash_attn=True: llama.cpp's flash attention, also faster at reading prompts. Both change the arithmetic, so
  greedy replies may differ from the default's where two tokens are nearly tied: the model's label, the run's
  identity and the response cache's key name them (docs/llm.md, "Faster prompt reading").
* threads=N: llama.cpp's CPU threads of each instance, for generating and for reading the prompt (default with
  one instance: llama-cpp-python's, half the cores for generating and all of them for reading the prompt; with
  several: each generates with its share of the cores, at least one, and reads a prompt with all of them:
  docs/llm.md, "CPU threads").
* instances=N (default 1): N copies of the model in this process (the weights' file mapped once) answering a
  batch's requests side by side, request i on copy i mod N, the same replies in the same order (a test compares
  them); a request sent again in the same position (a debater, an agent) finds its prefix in its copy (docs/llm.md,
  "Two copies of the model").
* Install: llama-cpp-python must be built from source on machines whose CPU the default native build
  mis-detects (it crashes on any prompt longer than one token); scripts/setup.sh builds it with the flags in
  docs/development.md.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_bench.shell import pip_install_command
from trace_llm.base import LLM, CachePath, Message, prefix_reuse_requested
from trace_llm.cache import Completion
from trace_llm.errors import LLMConfigError, LLMError
from trace_llm.llama_dtype import check_llama_dtype, gguf_as_dtype
from trace_llm.llama_parallel import Job, SideBySide, on_threads
from trace_llm.llama_reads import PROMPT_CHUNK
from trace_llm.llama_schema import converter_schema
from trace_llm.settings import DecodingSettings
from trace_llm.structured import DEFAULT_STRUCTURED, GRAMMAR, Constraint

log = logging.getLogger(__name__)

MODULE = "llama_cpp"
DEFAULT_CONTEXT = 8192  # tokens; SmolLM2's training context, enough for 16 candidate cards and a long history
DEFAULT_PROMPT_CACHE_MB = 1024
DEFAULT_PARALLEL = 1
MAX_GRAMMARS = 64


def llamacpp_available() -> bool:
    return importlib.util.find_spec(MODULE) is not None


def missing_llamacpp_error() -> LLMConfigError:
    return LLMConfigError(
        f"the llamacpp backend needs llama-cpp-python: {pip_install_command('llama-cpp-python')} built as "
        "docs/development.md says (or use the hf backend: --llm hf:PATH#FILE.gguf, or smollm2:hf)"
    )


# llama-cpp-python's converter lets a JSON string hold raw control characters (a newline), which JSON forbids
# and json.loads refuses: its string character rule, and the same rule without them
_CHAR_RULE = 'char ::= [^"\\\\] |'
_JSON_CHAR_RULE = 'char ::= [^"\\\\\\x00-\\x1F] |'


# llama-cpp-python's converter spells "up to n more items" as n nested optional groups, `(x (x (x)?)?)?`,
# which llama.cpp's parser refuses past about 2,000 rules (a 1,500-character string); `x{0,n}` says the same.
_NESTED_OPTIONAL = re.compile(r"\((?P<item>[^()\s]+)(?P<more>(?: \((?P=item))*)(?P<close>(?:\)\?)+)")


def _flatten_repetitions(gbnf: str) -> str:
    def flat(m: re.Match) -> str:
        depth = 1 + m.group("more").count("(")
        closes = len(m.group("close")) // 2
        if depth < 2 or closes < depth:
            return m.group(0)
        return f"{m.group('item')}{{0,{depth}}}" + ")?" * (closes - depth)

    return _NESTED_OPTIONAL.sub(flat, gbnf)


def json_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar of a JSON Schema (llama-cpp-python's converter, on `converter_schema(schema)`), strings
    without raw control characters, long optional repetitions as `x{0,n}`."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(converter_schema(schema)))
    if _CHAR_RULE in gbnf:
        gbnf = gbnf.replace(_CHAR_RULE, _JSON_CHAR_RULE)
    return _flatten_repetitions(gbnf)


def _prompt_tokens_evaluated(llama: Any) -> int:
    """Prompt tokens this llama.cpp context has evaluated so far (its own performance counter)."""
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)


def grammar_error(llama: Any, gbnf: str) -> str | None:
    """None where llama.cpp's own parser accepts the grammar for this model's vocabulary, else why not.
    llama-cpp-python parses a grammar only when it builds the sampler, and a grammar its parser refuses is then
    left out: the reply would be decoded with no constraint at all, so every grammar is checked first."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        return "llama.cpp's grammar parser refused it (its message is on stderr)"
    llama_cpp.llama_sampler_free(sampler)
    return None


class LlamaCppLLM(LLM):
    backend = "llamacpp"
    answers_concurrently = False

    def __init__(
        self,
        gguf_path: str,
        settings: DecodingSettings | None = None,
        cache_path: CachePath = None,
        spec: str | None = None,
        *,
        model_label: str | None = None,
        threads: int | None = None,
        context: int = DEFAULT_CONTEXT,
        prompt_cache: int = DEFAULT_PROMPT_CACHE_MB,
        structured: str = DEFAULT_STRUCTURED,
        dtype: str | None = None,
        flash_attn: bool = False,
        instances: int = 1,
        parallel: int = DEFAULT_PARALLEL,
    ):
        for name, value, what in (
            ("instances", instances, "copies of the model"),
            ("parallel", parallel, "sequences decoded side by side"),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LLMConfigError(f"{name}={value!r}: expected a positive integer ({what})")
        cores = os.cpu_count() or 1
        if instances > cores:
            raise LLMConfigError(
                f"instances={instances}: more copies than this machine's {cores} cores; expected at most {cores} "
                "(each copy needs a core of its own, and every copy holds its own context in memory)"
            )
        if not isinstance(flash_attn, bool):
            raise LLMConfigError(f"flash_attn={flash_attn!r}: expected true or false")
        if isinstance(prompt_cache, bool) or not isinstance(prompt_cache, int) or prompt_cache < 0:
            raise LLMConfigError(
                f"prompt_cache={prompt_cache!r}: expected megabytes of RAM, a whole number >= 0 (0: no cache)"
            )
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise LLMConfigError(
                f"threads={threads!r}: expected a positive integer or None (llama.cpp's default)"
            )
        path = Path(gguf_path).expanduser()
        if not path.is_file():
            raise LLMConfigError(f"GGUF file {str(path)!r} not found (llamacpp:PATH.gguf)")
        if not llamacpp_available():
            raise missing_llamacpp_error()
        self.gguf_path = path.resolve()
        self.dtype = check_llama_dtype(dtype)
        self.flash_attn = flash_attn
        self.threads = threads
        self.context = context
        self.prompt_cache = prompt_cache
        self.instances = instances
        self.parallel = parallel
        self._llamas: list[Any] = []
        self._sides: list[Any] = []  # with parallel > 1: each copy's SideBySide (trace_llm/llama_parallel.py)
        self._ram_caches: list[Any] = []  # each copy's prompt cache (prompt_cache > 0, one at a time)
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._counts_lock = threading.Lock()
        self.decode_seconds = 0.0
        self.prompt_tokens_read = 0  # prompt tokens evaluated (not those reused from an earlier state)
        self.grammar_seconds = 0.0  # time spent converting and parsing grammars (not the per-token masking)
        label = model_label or str(self.gguf_path)
        how = []  # what runs differently from the file as it is, named in the label
        if self.dtype:
            how.append(f"as {self.dtype}")
        if flash_attn:
            how.append("flash attention")
        super().__init__(
            f"{label} ({', '.join(how)})" if how else label,
            settings,
            cache_path,
            spec or f"llamacpp:{self.gguf_path}",
            structured=structured,
        )

    def _describe_extra(self) -> dict[str, Any]:
        import llama_cpp

        return {
            "llama_cpp_python": getattr(llama_cpp, "__version__", "unknown"),
            "context": self.context,
            "prompt_cache": self.prompt_cache,  # MB
            # only where asked for: runs recorded before these options keep their identity
            **({"dtype": self.dtype} if self.dtype else {}),
            **({"flash_attn": True} if self.flash_attn else {}),
            # how the work was shared out, not what was computed: the replies are the same (module docstring)
            **({"instances": self.instances} if self.instances > 1 else {}),
            **({"parallel": self.parallel} if self.parallel > 1 else {}),
        }

    def _dialect_for(self, constraint: Constraint | None) -> tuple[str, bool]:
        return GRAMMAR, False

    def _threads_each(self) -> tuple[int | None, int | None]:
        """(generating, reading) CPU threads of each copy: as asked; llama-cpp-python's default for one copy;
        else the cores shared out for generating, and all of them for reading a prompt."""
        if self.threads is not None or self.instances == 1:
            return self.threads, self.threads
        cores = os.cpu_count() or 1
        return max(1, cores // self.instances), cores

    def _load(self) -> Any:
        """The first copy of the model (all `instances` copies are loaded)."""
        if not self._llamas:
            from trace_llm.llama_greedy import greedy_grammar_llama_class

            path = gguf_as_dtype(self.gguf_path, self.dtype) if self.dtype else self.gguf_path
            threads = self._threads_each()
            side_by_side = self.parallel > 1
            for _ in range(self.instances):
                try:
                    llama = greedy_grammar_llama_class()(
                        model_path=str(path),
                        # side by side, this context only tokenizes: the sequences have their own
                        n_ctx=PROMPT_CHUNK if side_by_side else self.context,
                        n_threads=threads[0],
                        n_threads_batch=threads[1],
                        flash_attn=self.flash_attn,
                        verbose=False,
                    )
                    self._llamas.append(llama)
                    if side_by_side:
                        both = (llama.n_threads, llama.n_threads_batch)
                        self._sides.append(
                            SideBySide(llama, self.parallel, self.context, both, self.flash_attn)
                        )
                except (ValueError, RuntimeError) as e:
                    self._close_copies()
                    raise LLMError(f"llama.cpp cannot load {self.gguf_path}: {e}") from e
                except MemoryError:
                    loaded = len(self._llamas)
                    self._close_copies()
                    raise LLMError(
                        f"llama.cpp ran out of memory loading copy {loaded + 1} of {self.instances} of "
                        f"{self.gguf_path}; use fewer --llm-instances"
                    ) from None
                if self.prompt_cache and not side_by_side:  # attached to the batches that reuse prefixes
                    from llama_cpp import LlamaRAMCache

                    share = max(1, self.prompt_cache // self.instances)
                    self._ram_caches.append(LlamaRAMCache(capacity_bytes=share << 20))
            log.info(
                "llama.cpp loaded %s (context %d, %d sequence%s, %d cop%s, threads %s, flash attention %s)",
                path,
                self.context,
                self.parallel,
                "" if self.parallel == 1 else "s side by side",
                self.instances,
                "y" if self.instances == 1 else "ies",
                "default" if threads[0] is None else f"{threads[0]} generating, {threads[1]} reading",
                "on" if self.flash_attn else "off",
            )
        return self._llamas[0]

    def _grammar(self, constraint: Constraint) -> Any:
        hit = self._grammars.get(constraint.digest)
        if hit is not None:
            return hit
        from llama_cpp import LlamaGrammar

        started = time.perf_counter()
        try:
            if constraint.kind == "json":
                schema = constraint.schema if isinstance(constraint.schema, dict) else {}
                gbnf = json_gbnf(schema)
            else:
                assert constraint.grammar is not None  # a gbnf Constraint is refused without one
                gbnf = constraint.grammar
            grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise LLMConfigError(
                f"llama.cpp cannot turn the {constraint.kind} constraint into a grammar: {e}"
            ) from e
        problem = grammar_error(self._load(), gbnf)
        if problem is not None:
            raise LLMConfigError(
                f"llama.cpp cannot use the grammar of the {constraint.kind} constraint: {problem}"
            )
        self.grammar_seconds += time.perf_counter() - started
        if len(self._grammars) >= MAX_GRAMMARS:
            self._grammars.pop(next(iter(self._grammars)))
        self._grammars[constraint.digest] = grammar
        return grammar

    def _complete(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        self._answer(conversations, settings, on_done, None)

    def _complete_structured(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        constraint: Constraint,
        dialect: str,
    ) -> None:
        self._answer(conversations, settings, on_done, constraint)

    def _answer(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        constraint: Constraint | None,
    ) -> None:
        with self._lock:
            self._load()
            grammar = self._grammar(constraint) if constraint is not None else None
            copies = self._llamas[: len(conversations)]
            if self._sides:
                self._side_by_side(conversations, settings, on_done, grammar)
                return
            reuse = prefix_reuse_requested()
            for llama, ram in zip(self._llamas, self._ram_caches, strict=False):
                llama.set_cache(ram if reuse else None)
            if len(copies) == 1:
                for i, messages in enumerate(conversations):
                    on_done(i, self._one(copies[0], messages, settings, grammar))
                return

            def work(j: int, put: Callable[[int, Completion], None]) -> None:  # request i on copy i mod N
                for i in range(j, len(conversations), len(copies)):
                    put(i, self._one(copies[j], conversations[i], settings, grammar))

            on_threads(len(conversations), work, len(copies), on_done)

    def _side_by_side(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        grammar: Any,
    ) -> None:
        """The batch decoded `parallel` sequences at a time on each copy (request i on copy i mod N); one request's
        error is raised once the others are answered."""
        errors: dict[int, BaseException] = {}
        sides = self._sides[: len(conversations)]

        def done(i: int, answer: Completion | BaseException) -> None:
            if isinstance(answer, BaseException):
                errors[i] = answer
            else:
                on_done(i, answer)

        def work(j: int, put: Callable[[int, Completion | BaseException], None]) -> None:
            jobs = [
                Job(i, conversations[i], settings, grammar) for i in range(j, len(conversations), len(sides))
            ]
            started = time.perf_counter()
            try:
                sides[j].answer(jobs, put)
            finally:
                with self._counts_lock:
                    self.decode_seconds += time.perf_counter() - started

        if len(sides) == 1:
            work(0, done)
        else:
            on_threads(len(conversations), work, len(sides), done)
        self.prompt_tokens_read = sum(side.prompt_tokens_read for side in self._sides)
        if errors:
            first = min(errors)
            raise LLMError(f"llama.cpp {self.gguf_path.name}: {errors[first]}") from errors[first]

    def _one(
        self, llama: Any, messages: list[Message], settings: DecodingSettings, grammar: Any
    ) -> Completion:
        """One request answered by one copy of the model."""
        kwargs: dict[str, Any] = {
            "messages": messages,
            "max_tokens": settings.max_new_tokens,
            "seed": settings.seed,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "top_k": 0,
            "min_p": 0.0,
            "repeat_penalty": 1.0,
        }
        if grammar is not None:
            kwargs["grammar"] = grammar
        started = time.perf_counter()
        read = _prompt_tokens_evaluated(llama)
        try:
            out = llama.create_chat_completion(**kwargs)
        except ValueError as e:  # e.g. a prompt longer than the context
            raise LLMError(f"llama.cpp {self.gguf_path.name}: {e}") from e
        with self._counts_lock:
            self.decode_seconds += time.perf_counter() - started
            self.prompt_tokens_read += _prompt_tokens_evaluated(llama) - read
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        finish = choice.get("finish_reason")
        return Completion(
            choice["message"].get("content") or "",
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            finish if isinstance(finish, str) else None,
        )

    def _close_copies(self) -> None:
        for side in self._sides:  # before its model
            side.close()
        self._sides = []
        for llama in self._llamas:
            llama.close() if hasattr(llama, "close") else None
        self._llamas = []
        self._ram_caches = []

    def _close_backend(self) -> None:
        if self._llamas:
            counts = [llama.grammar_counts() for llama in self._llamas]
            log.info(
                "llama.cpp: %d prompt tokens read; %d greedy steps under a grammar, %d of them with the whole "
                "vocabulary masked",
                self.prompt_tokens_read,
                sum(c[0] for c in counts),
                sum(c[1] for c in counts),
            )
            self._close_copies()
            self._grammars.clear()
