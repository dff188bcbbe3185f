"""Fixtures for the LLM layer: a tiny random Llama (fast), the packaged SmolLM2 and a real
`transformers serve` process (slow), and a scripted OpenAI-compatible stub server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from stub_server import StubOpenAI  # noqa: E402
from tiny import build_tiny_llama  # noqa: E402


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_llama_plain_dir(tmp_path_factory) -> Path:
    """The same kind of model without a chat template."""
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama-plain"), chat_template=False)


@pytest.fixture
def stub():
    with StubOpenAI() as server:
        yield server


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """The packaged SmolLM2 GGUF converted to safetensors, in the default cache (converted once, ~20 s)."""
    from trace_dataset.llm import LLMConfigError
    from trace_dataset.llm.smollm2 import smollm2_gguf_path, smollm2_model_dir

    try:
        smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))
    return smollm2_model_dir()


@pytest.fixture(scope="session")
def transformers_server(smollm2_dir, tmp_path_factory):
    """A real `transformers serve` process on 127.0.0.1 serving the packaged SmolLM2."""
    from trace_dataset.llm.local_server import missing_serve_modules, transformers_serve

    missing = missing_serve_modules()
    if missing:
        pytest.skip(f"`transformers serve` needs {missing}: pip install 'trace-bench[serve]'")
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    # one torch thread: on a machine shared with other jobs, OpenMP oversubscription makes 2 threads ~10x slower
    with transformers_serve(smollm2_dir, log_path=log_path, threads=1) as server:
        yield server


@pytest.fixture
def one_torch_thread():
    """Run the test with one torch CPU thread (see transformers_server), restoring the count afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
