"""`load_llm(spec)`: the LLM a spec names, with its backend imported only when a spec asks for it."""

from __future__ import annotations

from typing import Any

from trace_llm.base import LLM, CachePath
from trace_llm.errors import LLMConfigError
from trace_llm.settings import DecodingSettings
from trace_llm.spec import DEFAULT_SPEC, parse_spec

COMMON_OPTIONS = frozenset({"structured"})
LLAMACPP_OPTIONS = (
    frozenset({"threads", "context", "prompt_cache", "dtype", "flash_attn", "instances"}) | COMMON_OPTIONS
)
HF_OPTIONS = (
    frozenset({"batch_size", "device", "dtype", "trust_remote_code", "models_dir", "threads"})
    | COMMON_OPTIONS
)
OPENAI_OPTIONS = (
    frozenset(
        {
            "concurrency",
            "timeout",
            "connect_timeout",
            "max_retries",
            "backoff",
            "api_key",
            "api_key_env",
            "max_response_bytes",
            "max_error_rate",
            "error_window",
        }
    )
    | COMMON_OPTIONS
)


def smollm2_runtime(asked: str = "") -> str:
    """What runs `--llm smollm2`: the runtime asked for, else llama.cpp where llama-cpp-python is installed (about
    3x faster on a CPU than the fp32 transformers path; benchmarks/llm.py), else transformers."""
    if asked:
        return asked
    from trace_llm.llamacpp import llamacpp_available

    return "llamacpp" if llamacpp_available() else "hf"


def load_llm(
    spec: str = DEFAULT_SPEC,
    settings: DecodingSettings | None = None,
    cache_path: CachePath = None,
    **options: Any,
) -> LLM:
    """The LLM a spec names. cache_path: None = default cache file, False = no cache, else a path.

    options (None values are ignored; each applies only to the backend that has it):
      every backend: structured="auto" (json_schema, json_object, prompt; see trace_llm.structured)
      hf / smollm2: batch_size=8, device="auto", dtype="auto", threads=None (torch's default),
                    trust_remote_code=False, models_dir
      llamacpp / smollm2 run by llama.cpp: threads=None (llama.cpp's default), context=8192,
                    prompt_cache=1024 (MB of llama.cpp states kept for prefix reuse; 0: none),
                    dtype=None (the file's own types; float16: an F16 copy, faster at reading prompts),
                    flash_attn=False, instances=1 (copies of the model answering side by side)
      openai: concurrency=64, timeout=300, connect_timeout=10, max_retries=4, backoff=0.5, api_key, api_key_env,
              max_response_bytes=4 MiB, max_error_rate=0.1 (1: no abort), error_window=100
    """
    parsed = parse_spec(spec)
    known = HF_OPTIONS | OPENAI_OPTIONS | LLAMACPP_OPTIONS
    unknown = sorted(set(options) - known)
    if unknown:
        raise LLMConfigError(f"unknown LLM option(s) {unknown}; expected some of {sorted(known)}")
    wanted = OPENAI_OPTIONS if parsed.backend == "openai" else HF_OPTIONS
    if parsed.backend == "llamacpp" or (
        parsed.backend == "smollm2" and smollm2_runtime(parsed.target) == "llamacpp"
    ):
        wanted = LLAMACPP_OPTIONS
    kwargs = {k: v for k, v in options.items() if v is not None and k in wanted}
    if parsed.backend == "openai":
        from trace_llm.openai_backend import OpenAILLM

        return OpenAILLM(parsed.target, parsed.model, settings, cache_path, spec=parsed.text, **kwargs)
    if parsed.backend == "smollm2":
        from trace_llm.smollm2 import load_smollm2

        return load_smollm2(settings, cache_path, runtime=smollm2_runtime(parsed.target), **kwargs)
    if parsed.backend == "llamacpp":
        from trace_llm.llamacpp import LlamaCppLLM

        return LlamaCppLLM(parsed.target, settings, cache_path, spec=parsed.text, **kwargs)
    from trace_llm.hf import HFLLM

    return HFLLM(parsed.target, settings, cache_path, spec=parsed.text, gguf_file=parsed.gguf_file, **kwargs)
