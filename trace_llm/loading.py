"""`load_llm(spec)`: the LLM a spec names, with its backend imported only when a spec asks for it."""

from __future__ import annotations

from typing import Any

from trace_llm.base import LLM, CachePath
from trace_llm.errors import LLMConfigError
from trace_llm.options import BACKEND_OPTIONS, OPTIONS
from trace_llm.settings import DecodingSettings
from trace_llm.spec import DEFAULT_SPEC, parse_spec

# what each backend takes, from the option table (trace_llm.options)
LLAMACPP_OPTIONS = BACKEND_OPTIONS["llamacpp"]
HF_OPTIONS = BACKEND_OPTIONS["hf"]
OPENAI_OPTIONS = BACKEND_OPTIONS["openai"]


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

    options: the backend options of trace_llm.options (docs/llm.md has the table: who takes each, its default);
    None values are ignored, and each backend gets only its own (smollm2: hf's or llamacpp's, by its runtime).
    """
    parsed = parse_spec(spec)
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise LLMConfigError(f"unknown LLM option(s) {unknown}; expected some of {sorted(OPTIONS)}")
    runs = smollm2_runtime(parsed.target) if parsed.backend == "smollm2" else parsed.backend
    wanted = BACKEND_OPTIONS[runs]
    kwargs = {k: v for k, v in options.items() if v is not None and k in wanted}
    if parsed.backend == "openai":
        from trace_llm.openai_backend import OpenAILLM

        return OpenAILLM(parsed.target, parsed.model, settings, cache_path, spec=parsed.text, **kwargs)
    if parsed.backend == "smollm2":
        from trace_llm.smollm2 import load_smollm2

        return load_smollm2(settings, cache_path, runtime=runs, **kwargs)
    if parsed.backend == "llamacpp":
        from trace_llm.llamacpp import LlamaCppLLM

        return LlamaCppLLM(parsed.target, settings, cache_path, spec=parsed.text, **kwargs)
    from trace_llm.hf import HFLLM

    return HFLLM(parsed.target, settings, cache_path, spec=parsed.text, gguf_file=parsed.gguf_file, **kwargs)
