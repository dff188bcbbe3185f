"""The shared client: chat messages in, text (or schema-checked JSON) out, through the response cache.

Backends implement one hook, `_complete(conversations, settings, on_done)`, which answers a list of
conversations and calls `on_done(i, completion)` as each answer is ready. Everything else lives here once:
message checks, cache look-up and write-back (per answer, so an interrupted run resumes), de-duplication inside a
batch, usage accounting, JSON parsing, validation and repair retries.

Structured outputs (trace_llm.structured): `generate_json*` pass their schema down as a `Constraint`; a backend
that can honour it implements `_complete_structured(conversations, settings, on_done, constraint, dialect)` and
says which dialect a request gets (`_dialect_for`). Every other backend answers by prompt (`_complete`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from tqdm.auto import tqdm

from trace_llm.budget import fit_constraint
from trace_llm.cache import Completion, ResponseCache, cache_key, default_cache_path
from trace_llm.errors import LLMConfigError, LLMError, LLMOutputError
from trace_llm.jsonout import (
    JSONOutputInvalid,
    check_schema,
    parse_json_output,
    repair_instruction,
    schema_instruction,
)
from trace_llm.settings import DecodingSettings
from trace_llm.structured import DEFAULT_STRUCTURED, PROMPT, Constraint, check_structured

log = logging.getLogger(__name__)

Message = dict[str, str]
ROLES = ("system", "user", "assistant")
# constrained: requests sent under a grammar or a server's response_format; dialect_fallbacks: requests that asked
# for one and were answered by prompt (the server refused it, or no grammar engine is installed);
# constraint_violations: constrained replies that still failed the schema (cut at max_new_tokens, or a server
# that accepted response_format and ignored it)
USAGE_KEYS = (
    "requests",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "json_repairs",
    "json_failures",
    "constrained",
    "dialect_fallbacks",
    "constraint_violations",
)
DEFAULT_MAX_REPAIRS = 2

CachePath = str | os.PathLike[str] | ResponseCache | None | bool

_PREFIX_REUSE: contextvars.ContextVar[bool] = contextvars.ContextVar("trace_llm_prefix_reuse", default=False)


@contextlib.contextmanager
def prefix_reuse() -> Iterator[None]:
    """Requests sent inside continue earlier ones (a debater's next round, a Collab-REC agent's next round): a
    backend may keep states so that each reads only what follows the shared part (llama.cpp's prompt cache,
    `prompt_cache`). Speed only: the replies are the same (tests/trace_llm/test_llama_parallel.py). Outside, the
    backend keeps no state beyond what it holds anyway: llama-cpp-python's `LlamaRAMCache` was measured costing
    6-31% on distinct prompts (docs/llm.md)."""
    token = _PREFIX_REUSE.set(True)
    try:
        yield
    finally:
        _PREFIX_REUSE.reset(token)


def prefix_reuse_requested() -> bool:
    """True inside `prefix_reuse()` (in this thread)."""
    return _PREFIX_REUSE.get()


def open_cache(cache_path: CachePath) -> ResponseCache | None:
    """None or True: the default cache file; False: no cache; a path or a ResponseCache: that one."""
    if cache_path is False:
        return None
    if cache_path is None or cache_path is True:
        return ResponseCache(default_cache_path())
    if isinstance(cache_path, ResponseCache):
        return cache_path
    return ResponseCache(cache_path)


def check_messages(messages: Any, where: str = "messages") -> list[Message]:
    """A clean copy of one conversation, or LLMConfigError naming the bad message and field."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise LLMConfigError(
            f"{where}: expected a non-empty list of {{'role', 'content'}} dicts, got {messages!r:.80}"
        )
    clean: list[Message] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise LLMConfigError(
                f"{where}[{i}]: expected a dict with 'role' and 'content', got {type(message).__name__}"
            )
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise LLMConfigError(f"{where}[{i}].role: {role!r}; expected one of {ROLES}")
        if not isinstance(content, str):
            raise LLMConfigError(f"{where}[{i}].content: expected a string, got {type(content).__name__}")
        clean.append({"role": role, "content": content})
    return clean


def with_instruction(messages: list[Message], instruction: str) -> list[Message]:
    """Append an instruction to the last user message (or add a user message after an assistant one)."""
    if messages[-1]["role"] == "user":
        last = messages[-1]
        return [*messages[:-1], {"role": "user", "content": f"{last['content']}\n\n{instruction}"}]
    return [*messages, {"role": "user", "content": instruction}]


def request_bar(total: int, desc: str, *, hidden: bool = False) -> tqdm:
    """The per-request progress bar of one batch (with rate and ETA); hidden for a single request, and where a
    run's own progress (`LLM.progress`, per part) shows the requests instead."""
    return tqdm(
        total=total, desc=desc[:60], unit="req", disable=hidden or total < 2 or None, dynamic_ncols=True
    )


class Progress(Protocol):
    """Where an LLM reports its requests instead of its own bar (trace_llm.progress.RequestProgress)."""

    def served_from_cache(self, n: int) -> None: ...

    def answered(self, completion: Completion) -> None: ...


class LLM(ABC):
    """One model behind one interface. Build it with `load_llm(spec)`; record `describe()` with results."""

    # the backend's name: each backend class sets it; an instance may name another (a stand-in: its target's)
    backend: str
    # False where requests are answered one after another whatever the batch (llama.cpp in process): a caller
    # that batches only for concurrency may then order its requests to share prompt prefixes instead
    answers_concurrently: bool = True

    def __init__(
        self,
        model: str,
        settings: DecodingSettings | None = None,
        cache_path: CachePath = None,
        spec: str | None = None,
        structured: str = DEFAULT_STRUCTURED,
    ):
        if settings is not None and not isinstance(settings, DecodingSettings):
            raise LLMConfigError(f"settings: expected DecodingSettings, got {type(settings).__name__}")
        self.model = model
        self.settings = settings or DecodingSettings()
        self.spec = spec or f"{self.backend}:{model}"
        self.structured = check_structured(structured)
        self.cache = open_cache(cache_path)
        self._owns_cache = not isinstance(cache_path, ResponseCache)
        self._usage = dict.fromkeys(USAGE_KEYS, 0)
        self._usage_lock = threading.Lock()
        # a part's request bar (trace_llm.progress.RequestProgress): when set, it replaces the per-call bar
        self.progress: Progress | None = None

    # ---- the one hook backends implement -------------------------------------------------------------
    @abstractmethod
    def _complete(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        """Answer every conversation; call on_done(index, completion) as each answer is ready."""

    def _complete_structured(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        constraint: Constraint,
        dialect: str,
    ) -> None:
        """Answer every conversation under `constraint` in `dialect` (backends that support constraints)."""
        raise LLMConfigError(f"the {self.backend} backend cannot decode under a constraint ({dialect})")

    def _dialect_for(self, constraint: Constraint | None) -> tuple[str, bool]:
        """(dialect, fell_back) for a request under `constraint`: `prompt` unless the backend can do better;
        fell_back says a constrained dialect was wanted and is not available (counted)."""
        return PROMPT, False

    def _learn_dialect(
        self, conversations: list[list[Message]], settings: DecodingSettings, constraint: Constraint
    ) -> tuple[str, bool, Completion | None]:
        """Backends whose dialect depends on the server (`_dialect_for` gave "") find it out here, possibly by
        answering conversations[0] (returned as the third item, already counted in usage; see OpenAILLM)."""
        return PROMPT, False, None

    def _key(
        self,
        conversation: list[Message],
        settings_dict: dict[str, Any],
        dialect: str,
        constraint: Constraint | None,
    ) -> str:
        structured = (
            f"{dialect}:{constraint.digest}" if dialect != PROMPT and constraint is not None else None
        )
        return cache_key(self.backend, self.cache_model, settings_dict, conversation, structured)

    def _describe_extra(self) -> dict[str, Any]:
        return {}

    def _close_backend(self) -> None:
        return None

    @property
    def cache_model(self) -> str:
        """What names the weights in the cache key (a backend may make it more specific than `model`)."""
        return self.model

    # ---- public API --------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """{"backend", "model", "spec", "settings", ...}: store it beside every result."""
        return {
            "backend": self.backend,
            "model": self.model,
            "spec": self.spec,
            "settings": self.settings.to_dict(),
            "structured": self.structured,
            **self._describe_extra(),
        }

    @property
    def usage(self) -> dict[str, int]:
        """Requests sent, answers served from the cache, tokens spent, JSON repairs and failures, this run."""
        with self._usage_lock:
            return dict(self._usage)

    def reset_usage(self) -> None:
        with self._usage_lock:
            self._usage = dict.fromkeys(USAGE_KEYS, 0)

    def _count(self, **amounts: int) -> None:
        with self._usage_lock:
            for key, amount in amounts.items():
                self._usage[key] += amount

    def resolve_settings(self, settings: DecodingSettings | dict | None) -> DecodingSettings:
        """The decoding a request with `settings` gets (this model's own where None)."""
        if settings is None:
            return self.settings
        if isinstance(settings, dict):
            return DecodingSettings.from_dict(settings)
        if isinstance(settings, DecodingSettings):
            return settings
        raise LLMConfigError(
            f"settings: expected DecodingSettings, a dict or None, got {type(settings).__name__}"
        )

    def complete_batch(
        self,
        conversations: Sequence[list[Message]],
        settings: DecodingSettings | dict | None = None,
        constraint: Constraint | None = None,
    ) -> list[Completion]:
        """Like generate_batch, with token counts and finish reasons; `constraint` asks for constrained decoding
        (honoured as the `structured` mode and the backend allow, else answered by prompt)."""
        return self.complete_batch_dialect(conversations, settings, constraint)[0]

    def complete_batch_dialect(
        self,
        conversations: Sequence[list[Message]],
        settings: DecodingSettings | dict | None = None,
        constraint: Constraint | None = None,
    ) -> tuple[list[Completion], str]:
        """complete_batch, and the dialect the requests were sent in (`prompt`, `grammar`, `json_schema`...)."""
        if constraint is not None and not isinstance(constraint, Constraint):
            raise LLMConfigError(
                f"constraint: expected a trace_llm.structured.Constraint, got {type(constraint).__name__}"
            )
        settings = self.resolve_settings(settings)
        convs = [check_messages(c, f"conversations[{i}]") for i, c in enumerate(conversations)]
        settings_dict = settings.to_dict()
        if (
            constraint is not None
            and self.structured != PROMPT
            and self._dialect_for(constraint)[0] != PROMPT
        ):
            # a constrained reply closes within the budget (trace_llm.budget): the free lengths bounded where the
            # schema allows more; below the smallest budget that always closes, the request is refused
            constraint = fit_constraint(constraint, settings.max_new_tokens)
        dialect, fell_back, probed = self._batch_dialect(convs, settings, constraint)
        keys = [self._key(c, settings_dict, dialect, constraint) for c in convs]
        results, newly = self._cached_answers(keys, settings_dict, probed)
        todo: list[str] = [k for k in dict.fromkeys(keys) if k not in results]
        first: dict[str, list[Message]] = {}
        for key, conv in zip(keys, convs, strict=True):
            first.setdefault(key, conv)
        self._count(cache_hits=len(keys) - len(todo) - newly)
        if self.progress is not None:
            self.progress.served_from_cache(len(keys) - len(todo) - newly)
            if newly and probed is not None:
                self.progress.answered(probed)
        if todo:
            log.debug(
                "%s %s: %d requests (%d answered from cache)",
                self.backend,
                self.model,
                len(todo),
                len(keys) - len(todo),
            )
            self._send_batch(todo, first, settings, results, constraint, dialect, fell_back)
        return [results[k] for k in keys], dialect

    def _batch_dialect(
        self, convs: list[list[Message]], settings: DecodingSettings, constraint: Constraint | None
    ) -> tuple[str, bool, Completion | None]:
        """(dialect, fell_back, the answer to convs[0] that found the dialect out, if one was needed)."""
        if constraint is None or self.structured == PROMPT:
            return PROMPT, False, None
        dialect, fell_back = self._dialect_for(constraint)
        if dialect == "":  # not known yet (a server not asked before): find it out with these requests
            return self._learn_dialect(convs, settings, constraint)
        return dialect, fell_back, None

    def _cached_answers(
        self, keys: list[str], settings_dict: dict[str, Any], probed: Completion | None
    ) -> tuple[dict[str, Completion], int]:
        """The answers the cache holds for `keys`, with the probe's (cached now; counted as new: the int)."""
        results: dict[str, Completion] = self.cache.get_many(keys) if self.cache is not None else {}
        if probed is None or keys[0] in results:
            return results, 0
        results[keys[0]] = probed  # the request that found the dialect out
        if self.cache is not None:
            self.cache.put(keys[0], self.backend, self.cache_model, settings_dict, probed)
        return results, 1

    def _send_batch(
        self,
        todo: list[str],
        first: dict[str, list[Message]],
        settings: DecodingSettings,
        results: dict[str, Completion],
        constraint: Constraint | None,
        dialect: str,
        fell_back: bool,
    ) -> None:
        """Ask the backend for the conversations of `todo` (cache keys), each answer into `results` and the cache
        as it arrives; LLMError when one is missing."""
        settings_dict = settings.to_dict()
        progress = self.progress
        bar = request_bar(len(todo), f"{self.backend} {self.model}", hidden=progress is not None)

        def on_done(index: int, completion: Completion) -> None:
            key = todo[index]
            results[key] = completion
            if self.cache is not None:
                self.cache.put(key, self.backend, self.cache_model, settings_dict, completion)
            self._count(
                requests=1,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
            )
            bar.update(1)
            if progress is not None:
                progress.answered(completion)

        if dialect != PROMPT:
            self._count(constrained=len(todo))
        elif fell_back:
            self._count(dialect_fallbacks=len(todo))
        try:
            if dialect == PROMPT or constraint is None:
                self._complete([first[k] for k in todo], settings, on_done)
            else:
                self._complete_structured([first[k] for k in todo], settings, on_done, constraint, dialect)
        finally:
            bar.close()
        missing = [i for i, k in enumerate(todo) if k not in results]
        if missing:
            raise LLMError(
                f"{self.backend} {self.model}: no answer for {len(missing)} of {len(todo)} requests"
            )

    def generate_batch(
        self, conversations: Sequence[list[Message]], settings: DecodingSettings | dict | None = None
    ) -> list[str]:
        """One text answer per conversation, in order."""
        return [c.text for c in self.complete_batch(conversations, settings)]

    def generate(self, messages: list[Message], settings: DecodingSettings | dict | None = None) -> str:
        return self.generate_batch([messages], settings)[0]

    def generate_json_batch(
        self,
        conversations: Sequence[list[Message]],
        schema: dict[str, Any] | bool,
        settings: DecodingSettings | dict | None = None,
        max_repairs: int = DEFAULT_MAX_REPAIRS,
    ) -> list[Any]:
        """One schema-valid JSON value per conversation, or an LLMOutputError in its place.

        The schema is appended to the last user message. An invalid reply is sent back with what was wrong
        (up to `max_repairs` times per conversation, batched across conversations).
        """
        check_schema(schema)
        if isinstance(max_repairs, bool) or not isinstance(max_repairs, int) or max_repairs < 0:
            raise LLMConfigError(f"max_repairs={max_repairs!r}: expected a non-negative integer")
        convs = [
            with_instruction(check_messages(c, f"conversations[{i}]"), schema_instruction(schema))
            for i, c in enumerate(conversations)
        ]
        results: list[Any] = [None] * len(convs)
        pending = list(range(len(convs)))
        constraint = Constraint.json(schema)
        for attempt in range(max_repairs + 1):
            outputs, dialect = self.complete_batch_dialect([convs[i] for i in pending], settings, constraint)
            still: list[int] = []
            for i, out in zip(pending, outputs, strict=True):
                try:
                    results[i] = parse_json_output(out.text, schema)
                except JSONOutputInvalid as e:
                    if dialect != PROMPT:
                        self._count(constraint_violations=1)
                    error = str(e)
                    if out.finish_reason == "length":
                        error += " (the reply hit max_new_tokens and may be cut off)"
                    if attempt == max_repairs:
                        results[i] = LLMOutputError(
                            f"{self.backend} {self.model}: no valid JSON after {attempt + 1} attempt(s): {error}; "
                            f"last output: {out.text[:300]!r}",
                            raw=out.text,
                            error=error,
                            attempts=attempt + 1,
                        )
                    else:
                        convs[i] = [
                            *convs[i],
                            {"role": "assistant", "content": out.text},
                            {"role": "user", "content": repair_instruction(error, schema)},
                        ]
                        still.append(i)
            if attempt == max_repairs:
                self._count(json_failures=sum(isinstance(r, LLMOutputError) for r in results))
            self._count(json_repairs=len(still))
            pending = still
            if not pending:
                break
        return results

    def generate_json(
        self,
        messages: list[Message],
        schema: dict[str, Any] | bool,
        settings: DecodingSettings | dict | None = None,
        max_repairs: int = DEFAULT_MAX_REPAIRS,
    ) -> Any:
        """A schema-valid JSON value; raises LLMOutputError (with the last raw output) when repairs run out."""
        result = self.generate_json_batch([messages], schema, settings, max_repairs)[0]
        if isinstance(result, LLMOutputError):
            raise result
        return result

    def close(self) -> None:
        """Free the model (hf) and close the cache file."""
        self._close_backend()
        if self.cache is not None and self._owns_cache:
            self.cache.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r}, settings={self.settings})"
