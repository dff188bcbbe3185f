"""A GGUF file's weights rewritten in another type by llama.cpp's own quantizer, for the `llamacpp` backend's
`dtype` option (`--llm-dtype float16`).

The packaged SmolLM2 file is Q4_1: llama.cpp multiplies its weights with activations quantised to 8 bits, and
llama.cpp's fast matrix kernels for reading a prompt (llamafile's) do not cover Q4_1. The same weights written as
F16 (each Q4_1 value `d * q + m` rounded to half precision) are read by those kernels with activations kept in
fp32, so a long prompt is read about 1.3 times as fast on 2 cores (1.8 with flash attention), while new
tokens come about a quarter more slowly (benchmarks/llm.py --prompt-read; docs/llm.md).
The file is three times as large and greedy replies may differ from the Q4_1 file's wherever two tokens are
nearly tied, so the backend labels the model with the dtype and keys its response cache on it.

The copy is written once per source file (name, size, first and last MiB) under `<cache dir>/models/`, under a
temporary name renamed when complete, with a file lock so that two processes do not both write it.
"""

from __future__ import annotations

import ctypes
import logging
import os
from pathlib import Path

from trace_llm.errors import LLMConfigError, LLMError
from trace_llm.hf import gguf_fingerprint, models_cache_dir

log = logging.getLogger(__name__)

# --llm-dtype's names (shared with the hf backend) and llama.cpp's file types; "auto" and None keep the file
LLAMA_DTYPES = {
    "float32": ("F32", "LLAMA_FTYPE_ALL_F32"),
    "float16": ("F16", "LLAMA_FTYPE_MOSTLY_F16"),
    "bfloat16": ("BF16", "LLAMA_FTYPE_MOSTLY_BF16"),
}
KEEP = (None, "auto")


def check_llama_dtype(dtype: str | None) -> str | None:
    """None where the file runs as it is ("auto" or None), else the dtype; refuses a name llama.cpp lacks."""
    if dtype in KEEP:
        return None
    if dtype not in LLAMA_DTYPES:
        raise LLMConfigError(
            f"dtype={dtype!r}: expected one of {['auto', *LLAMA_DTYPES]} for the llamacpp backend "
            "(auto: the file's own types)"
        )
    return dtype


def gguf_as_dtype(gguf_path: Path, dtype: str, models_dir: Path | None = None) -> Path:
    """The GGUF file with its weights in `dtype` (written on first use by llama.cpp's quantizer)."""
    from filelock import FileLock

    suffix, ftype_name = LLAMA_DTYPES[dtype]
    gguf_path = Path(gguf_path).resolve()
    models_dir = Path(models_dir) if models_dir is not None else models_cache_dir()
    target = models_dir / f"{gguf_path.stem}-{gguf_fingerprint(gguf_path)}.{suffix}.gguf"
    if target.is_file():
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if target.is_file():  # another process wrote it while we waited
            return target
        import llama_cpp

        log.info("writing %s's weights as %s to %s (once)", gguf_path.name, suffix, target)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = getattr(llama_cpp, ftype_name)
        params.allow_requantize = True  # the source is already quantised (Q4_1): its values are rewritten
        params.nthread = os.cpu_count() or 1
        try:
            failed = llama_cpp.llama_model_quantize(
                str(gguf_path).encode("utf-8"), str(tmp).encode("utf-8"), ctypes.byref(params)
            )
            if failed:
                raise LLMError(
                    f"llama.cpp could not write {gguf_path.name} as {suffix} (llama_model_quantize returned "
                    f"{failed}; its message is on stderr)"
                )
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target
