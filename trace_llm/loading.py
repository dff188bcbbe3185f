"""`load_llm(spec)`: the LLM a spec names, with its backend imported only when a spec asks for it."""

from __future__ import annotations

from typing import Any

from trace_llm.base import LLM, CachePath
from trace_llm.errors import LLMConfigError
from trace_llm.settings import DecodingSettings
from trace_llm.spec import DEFAULT_SPEC, parse_spec

HF_OPTIONS = frozenset({"batch_size", "device", "dtype", "trust_remote_code", "models_dir", "threads"})
OPENAI_OPTIONS = frozenset(
    {"concurrency", "timeout", "connect_timeout", "max_retries", "backoff", "api_key", "api_key_env",
     "max_response_bytes"}
)


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
      openai: concurrency=64, timeout=300, connect_timeout=10, max_retries=4, backoff=0.5, api_key, api_key_env,
              max_response_bytes=4 MiB
    """
    parsed = parse_spec(spec)
    unknown = sorted(set(options) - HF_OPTIONS - OPENAI_OPTIONS)
    if unknown:
        raise LLMConfigError(f"unknown LLM option(s) {unknown}; expected some of {sorted(HF_OPTIONS | OPENAI_OPTIONS)}")
    wanted = OPENAI_OPTIONS if parsed.backend == "openai" else HF_OPTIONS
    kwargs = {k: v for k, v in options.items() if v is not None and k in wanted}
    if parsed.backend == "openai":
        from trace_llm.openai_backend import OpenAILLM

        return OpenAILLM(parsed.target, parsed.model, settings, cache_path, spec=parsed.text, **kwargs)
    if parsed.backend == "smollm2":
        from trace_llm.smollm2 import load_smollm2

        return load_smollm2(settings, cache_path, **kwargs)
    from trace_llm.hf import HFLLM

    return HFLLM(parsed.target, settings, cache_path, spec=parsed.text, gguf_file=parsed.gguf_file, **kwargs)

