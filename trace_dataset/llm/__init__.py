"""One LLM layer for the whole package: transformers pipelines and OpenAI-compatible servers, cached, resumable.

    from trace_dataset.llm import load_llm, DecodingSettings, LLMError, LLMOutputError
    llm = load_llm("smollm2")                       # or "hf:PATH_OR_ID", "openai:BASE_URL#MODEL"
    llm.generate([{"role": "user", "content": "Hi"}])
    llm.generate_json(messages, {"type": "object", "required": ["name"]})
    llm.describe(), llm.usage

Backends are imported when a spec asks for them, so importing this package pulls in neither torch nor httpx.
"""

from __future__ import annotations

import logging
from typing import Any

from trace_dataset.llm.base import LLM, CachePath, check_messages
from trace_dataset.llm.cache import Completion, ResponseCache, default_cache_dir, default_cache_path
from trace_dataset.llm.cli import add_llm_argument, llm_from_args
from trace_dataset.llm.errors import LLMConfigError, LLMConnectionError, LLMError, LLMOutputError
from trace_dataset.llm.settings import DecodingSettings
from trace_dataset.llm.spec import DEFAULT_SPEC, VALID_FORMS, LLMSpec, parse_spec

log = logging.getLogger(__name__)

HF_OPTIONS = frozenset({"batch_size", "device", "dtype", "trust_remote_code", "models_dir", "threads"})
OPENAI_OPTIONS = frozenset(
    {"concurrency", "timeout", "connect_timeout", "max_retries", "backoff", "api_key", "api_key_env"}
)

__all__ = [
    "DEFAULT_SPEC",
    "LLM",
    "VALID_FORMS",
    "Completion",
    "DecodingSettings",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMOutputError",
    "LLMSpec",
    "ResponseCache",
    "add_llm_argument",
    "check_messages",
    "default_cache_dir",
    "default_cache_path",
    "llm_from_args",
    "load_llm",
    "parse_spec",
]


def load_llm(
    spec: str = DEFAULT_SPEC,
    settings: DecodingSettings | None = None,
    cache_path: CachePath = None,
    **options: Any,
) -> LLM:
    """The LLM a spec names. cache_path: None = default cache file, False = no cache, else a path.

    options (None values are ignored; each applies only to the backend that has it):
      hf / smollm2: batch_size=8, device="auto", dtype="auto", threads=None (torch's default),
                    trust_remote_code=False, models_dir
      openai: concurrency=64, timeout=300, connect_timeout=10, max_retries=4, backoff=0.5, api_key, api_key_env
    """
    parsed = parse_spec(spec)
    unknown = sorted(set(options) - HF_OPTIONS - OPENAI_OPTIONS)
    if unknown:
        raise LLMConfigError(f"unknown LLM option(s) {unknown}; expected some of {sorted(HF_OPTIONS | OPENAI_OPTIONS)}")
    wanted = OPENAI_OPTIONS if parsed.backend == "openai" else HF_OPTIONS
    kwargs = {k: v for k, v in options.items() if v is not None and k in wanted}
    if parsed.backend == "openai":
        from trace_dataset.llm.openai_backend import OpenAILLM

        return OpenAILLM(parsed.target, parsed.model, settings, cache_path, spec=parsed.text, **kwargs)
    if parsed.backend == "smollm2":
        from trace_dataset.llm.smollm2 import load_smollm2

        return load_smollm2(settings, cache_path, **kwargs)
    from trace_dataset.llm.hf import HFLLM

    return HFLLM(parsed.target, settings, cache_path, spec=parsed.text, gguf_file=parsed.gguf_file, **kwargs)

