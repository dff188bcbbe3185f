"""Run `transformers serve` on 127.0.0.1 for a local model folder: an OpenAI-compatible server for tests,
benchmarks, and for trying the `openai` backend with no cluster at hand.

    with transformers_serve(smollm2_model_dir()) as server:
        llm = load_llm(server.spec)

`transformers serve MODEL_DIR` pins the server to that model; requests must name it exactly (the folder path),
which `server.spec` does. It needs the serving extras: fastapi, uvicorn, openai (pip install 'trace-bench[serve]').
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from trace_bench.shell import pip_install_command
from trace_llm.errors import LLMConfigError, LLMConnectionError

log = logging.getLogger(__name__)

SERVE_MODULES = ("fastapi", "uvicorn", "openai", "typer")
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


@dataclass(frozen=True)
class LocalServer:
    base_url: str
    model: str
    pid: int
    log_path: Path | None

    @property
    def spec(self) -> str:
        return f"openai:{self.base_url}#{self.model}"


def missing_serve_modules() -> list[str]:
    return [name for name in SERVE_MODULES if importlib.util.find_spec(name) is None]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def transformers_serve(
    model_dir: str | os.PathLike[str],
    *,
    port: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    log_path: str | os.PathLike[str] | None = None,
    startup_timeout: float = 300.0,
    threads: int | None = None,
) -> Iterator[LocalServer]:
    """Start `transformers serve MODEL_DIR` (offline), wait for /health, yield it, stop it.

    threads: CPU threads for the server's torch (OMP_NUM_THREADS); None leaves torch's default.
    """
    missing = missing_serve_modules()
    if missing:
        raise LLMConfigError(
            f"`transformers serve` needs {missing}: {pip_install_command('trace-bench[serve]')}"
        )
    from trace_llm.hf import choose_device

    chosen_device, chosen_dtype = choose_device(device, dtype)
    model = str(Path(model_dir).resolve())
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    cmd = [
        sys.executable,
        "-m",
        "transformers.cli.transformers",
        "serve",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        chosen_device,
        "--dtype",
        str(chosen_dtype).removeprefix("torch."),
    ]
    out = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115 - closed below
    env = {**os.environ, **OFFLINE_ENV}
    if threads is not None:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise LLMConnectionError(
                    f"`transformers serve {model}` exited with code {proc.returncode} before answering"
                    + (f"; see {log_path}" if log_path else ""),
                    url=base_url,
                )
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise LLMConnectionError(
                    f"`transformers serve` not up at {base_url} after {startup_timeout:.0f}s", base_url
                )
            time.sleep(0.5)
        log.info("transformers serve %s on %s (pid %d)", model, base_url, proc.pid)
        yield LocalServer(base_url, model, proc.pid, Path(log_path) if log_path else None)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if not isinstance(out, int):  # the log file (subprocess.DEVNULL is an int)
            out.close()


@contextlib.contextmanager
def llama_cpp_serve(
    gguf_path: str | os.PathLike[str],
    *,
    port: int | None = None,
    model: str = "smollm2",
    threads: int | None = None,
    context: int = 8192,
    log_path: str | os.PathLike[str] | None = None,
    startup_timeout: float = 120.0,
) -> Iterator[LocalServer]:
    """Start llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) on 127.0.0.1 for a
    GGUF file, wait until it answers, yield it, stop it. It takes `response_format={"type": "json_object",
    "schema": ...}` and refuses `json_schema` (docs/llm.md "Structured outputs")."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMConfigError("llama-cpp-python's server needs llama-cpp-python[server] (docs/development.md)")
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf_path),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(context),
        "--model_alias",
        model,
    ]
    if threads is not None:
        cmd += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    out = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise LLMConnectionError(
                    f"llama_cpp.server exited with code {proc.returncode} before answering", base_url
                )
            try:
                if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise LLMConnectionError(
                    f"llama_cpp.server not up at {base_url} after {startup_timeout:.0f}s", base_url
                )
            time.sleep(0.5)
        yield LocalServer(base_url, model, proc.pid, Path(log_path) if log_path else None)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if not isinstance(out, int):  # the log file (subprocess.DEVNULL is an int)
            out.close()
