"""One LLM layer for the whole package: transformers pipelines and OpenAI-compatible servers, cached, resumable.

    from trace_llm import load_llm, DecodingSettings, LLMError, LLMOutputError
    llm = load_llm("smollm2")                       # or "hf:PATH_OR_ID", "openai:BASE_URL#MODEL"
    llm.generate([{"role": "user", "content": "Hi"}])
    llm.generate_json(messages, {"type": "object", "required": ["name"]})
    llm.describe(), llm.usage

Backends are imported when a spec asks for them, so importing this package pulls in neither torch nor httpx.
"""

from __future__ import annotations

from trace_llm.base import LLM, CachePath, check_messages, prefix_reuse
from trace_llm.cache import Completion, ResponseCache, default_cache_dir, default_cache_path
from trace_llm.cli import add_llm_argument, llm_from_args
from trace_llm.errors import LLMConfigError, LLMConnectionError, LLMError, LLMOutputError
from trace_llm.loading import HF_OPTIONS, OPENAI_OPTIONS, load_llm
from trace_llm.options import CONFIG_OPTIONS, SECRET_OPTIONS, TRANSPORT_OPTIONS, check_options
from trace_llm.settings import DecodingSettings
from trace_llm.spec import DEFAULT_SPEC, VALID_FORMS, LLMSpec, parse_spec

__all__ = [
    "DEFAULT_SPEC",
    "LLM",
    "VALID_FORMS",
    "CONFIG_OPTIONS",
    "CachePath",
    "Completion",
    "DecodingSettings",
    "HF_OPTIONS",
    "OPENAI_OPTIONS",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMOutputError",
    "LLMSpec",
    "ResponseCache",
    "SECRET_OPTIONS",
    "TRANSPORT_OPTIONS",
    "add_llm_argument",
    "check_messages",
    "check_options",
    "default_cache_dir",
    "default_cache_path",
    "llm_from_args",
    "load_llm",
    "parse_spec",
    "prefix_reuse",
]
