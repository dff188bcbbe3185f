"""Backend `llamacpp`: a GGUF file run in process by llama.cpp (llama-cpp-python), the fastest way to run the
packaged SmolLM2 on a CPU (benchmarks/llm.py; docs/llm.md has the figures) and so the default of `--llm smollm2`
where llama-cpp-python is installed.

* Chat template: the one stored in the GGUF file (llama-cpp-python's Jinja formatter).
* Decoding: greedy at temperature 0; above 0, temperature and top-p only (llama.cpp's top-k and min-p samplers
  are switched off so the settings mean what they mean for the hf backend), seeded with `settings.seed` per
  request. Requests are answered one at a time (llama.cpp's Python binding decodes one sequence), each handed to
  the cache as it finishes, so progress moves per request.
* Constrained decoding: a JSON Schema becomes a GBNF grammar with llama-cpp-python's own converter
  (`LlamaGrammar.from_json_schema`); a GBNF constraint is used as written. The grammar masks every token it does
  not allow while sampling.
* threads=N: llama.cpp's CPU threads (default: llama-cpp-python's, half the cores).
* Install: llama-cpp-python must be built from source on machines whose CPU the default native build
  mis-detects (it crashes on any prompt longer than one token); scripts/setup.sh builds it with the flags in
  docs/development.md.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_bench.shell import pip_install_command
from trace_llm.base import LLM, CachePath, Message
from trace_llm.cache import Completion
from trace_llm.errors import LLMConfigError, LLMError
from trace_llm.settings import DecodingSettings
from trace_llm.structured import DEFAULT_STRUCTURED, GRAMMAR, Constraint

log = logging.getLogger(__name__)

MODULE = "llama_cpp"
DEFAULT_CONTEXT = 8192  # tokens; SmolLM2's training context, enough for 16 candidate cards and a long history
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


MAX_ENUM_RANGE = 100  # integer bounds spelled out as an enum up to this many values


def converter_schema(schema: Any) -> Any:
    """The same schema in the forms llama-cpp-python's converter honours: it drops every other keyword of a
    `type` list (`["string", "null"]` with an `enum`) and the bounds of an integer, so a type list becomes an
    `anyOf` and a bounded integer (at most MAX_ENUM_RANGE values) an `enum`."""
    if isinstance(schema, list):
        return [converter_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: converter_schema(v) if k in ("items", "additionalProperties", "not") else v
        for k, v in schema.items()
    }
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: converter_schema(v) for k, v in out["properties"].items()}
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = converter_schema(out[key])
    types = out.get("type")
    if isinstance(types, list):
        rest = {k: v for k, v in out.items() if k != "type"}
        alternatives = []
        for t in types:
            alt = {"type": t} if t == "null" else {"type": t, **rest}
            if "enum" in alt:
                alt["enum"] = [v for v in alt["enum"] if v is not None] if t != "null" else alt["enum"]
            alternatives.append(converter_schema(alt))
        return {"anyOf": alternatives}
    low, high = out.get("minimum"), out.get("maximum")
    if (
        types == "integer"
        and "enum" not in out
        and isinstance(low, int)
        and isinstance(high, int)
        and 0 <= high - low < MAX_ENUM_RANGE
    ):
        out = {k: v for k, v in out.items() if k not in ("minimum", "maximum")}
        out["enum"] = list(range(low, high + 1))
    return out


def json_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar of a JSON Schema (llama-cpp-python's converter, on `converter_schema(schema)`), strings
    without raw control characters."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(converter_schema(schema)))
    if _CHAR_RULE in gbnf:
        gbnf = gbnf.replace(_CHAR_RULE, _JSON_CHAR_RULE)
    return gbnf


class LlamaCppLLM(LLM):
    backend = "llamacpp"

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
        structured: str = DEFAULT_STRUCTURED,
    ):
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
        self.threads = threads
        self.context = context
        self._llama: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.decode_seconds = 0.0
        self.grammar_seconds = 0.0  # time spent converting and parsing grammars (not the per-token masking)
        super().__init__(
            model_label or str(self.gguf_path),
            settings,
            cache_path,
            spec or f"llamacpp:{self.gguf_path}",
            structured=structured,
        )

    def _describe_extra(self) -> dict[str, Any]:
        import llama_cpp

        return {"llama_cpp_python": getattr(llama_cpp, "__version__", "unknown"), "context": self.context}

    def _dialect_for(self, constraint: Constraint | None) -> tuple[str, bool]:
        return GRAMMAR, False

    def _load(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama

            try:
                self._llama = Llama(
                    model_path=str(self.gguf_path),
                    n_ctx=self.context,
                    n_threads=self.threads,
                    n_threads_batch=self.threads,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as e:
                raise LLMError(f"llama.cpp cannot load {self.gguf_path}: {e}") from e
            log.info(
                "llama.cpp loaded %s (context %d, threads %s)",
                self.gguf_path,
                self.context,
                self.threads or "default",
            )
        return self._llama

    def _grammar(self, constraint: Constraint) -> Any:
        hit = self._grammars.get(constraint.digest)
        if hit is not None:
            return hit
        from llama_cpp import LlamaGrammar

        started = time.perf_counter()
        try:
            if constraint.kind == "json":
                schema = constraint.schema if isinstance(constraint.schema, dict) else {}
                grammar = LlamaGrammar.from_string(json_gbnf(schema), verbose=False)
            else:
                assert constraint.grammar is not None  # a gbnf Constraint is refused without one
                grammar = LlamaGrammar.from_string(constraint.grammar, verbose=False)
        except (ValueError, RuntimeError, KeyError, TypeError) as e:
            raise LLMConfigError(
                f"llama.cpp cannot turn the {constraint.kind} constraint into a grammar: {e}"
            ) from e
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
            llama = self._load()
            for i, messages in enumerate(conversations):
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
                if constraint is not None:
                    kwargs["grammar"] = self._grammar(constraint)
                started = time.perf_counter()
                try:
                    out = llama.create_chat_completion(**kwargs)
                except ValueError as e:  # e.g. a prompt longer than the context
                    raise LLMError(f"llama.cpp {self.gguf_path.name}: {e}") from e
                self.decode_seconds += time.perf_counter() - started
                choice = out["choices"][0]
                usage = out.get("usage") or {}
                finish = choice.get("finish_reason")
                on_done(
                    i,
                    Completion(
                        choice["message"].get("content") or "",
                        int(usage.get("prompt_tokens", 0)),
                        int(usage.get("completion_tokens", 0)),
                        finish if isinstance(finish, str) else None,
                    ),
                )

    def _close_backend(self) -> None:
        if self._llama is not None:
            self._llama.close() if hasattr(self._llama, "close") else None
            self._llama = None
            self._grammars.clear()
