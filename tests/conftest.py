"""Shared fixtures: where the real-data samples live (read in place, never copied into the repo), the packaged
SmolLM2 behind one real `transformers serve` process. The small worlds several test folders share are fixtures of
`tests.support.worlds`; builders and test doubles live in `tests.support` too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# the small worlds several packages' tests share (one definition each): tests/support/worlds.py
pytest_plugins = ["tests.support.worlds"]

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRACE_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def yelp_sample_dir() -> Path:
    """../shared/yelp_sample: real Yelp lines (5,000 businesses, 500 reviews)."""
    path = SHARED / "yelp_sample"
    if not (path / "yelp_academic_dataset_business.json").exists():
        pytest.skip(
            f"real Yelp sample not found at {path} (set TRACE_SHARED_DIR to the folder holding yelp_sample/)"
        )
    return path


@pytest.fixture(scope="session")
def collab_rec_dir() -> Path:
    """../shared/collab_rec: Collab-REC's own city knowledge base and queries."""
    path = SHARED / "collab_rec"
    if not (path / "eu-cities-database.csv").exists():
        pytest.skip(
            f"Collab-REC data not found at {path} (set TRACE_SHARED_DIR to the folder holding collab_rec/)"
        )
    return path


# ---- the packaged SmolLM2 and one real `transformers serve` process, shared by the whole session ----
@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """The packaged SmolLM2 GGUF converted to safetensors, in the default cache (converted once, ~20 s)."""
    from trace_llm import LLMConfigError
    from trace_llm.smollm2 import smollm2_gguf_path, smollm2_model_dir

    try:
        smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))
    return smollm2_model_dir()


@pytest.fixture(scope="session")
def transformers_server(smollm2_dir, tmp_path_factory):
    """A real `transformers serve` process on 127.0.0.1 serving the packaged SmolLM2."""
    from trace_llm.local_server import missing_serve_modules, transformers_serve

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


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1 serving the packaged SmolLM2 GGUF (one thread)."""
    import importlib.util

    from trace_llm import LLMConfigError
    from trace_llm.local_server import llama_cpp_serve
    from trace_llm.smollm2 import smollm2_gguf_path

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (scripts/setup.sh builds it; docs/development.md)")
    try:
        gguf = smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))
    log_path = tmp_path_factory.mktemp("llama-serve") / "serve.log"
    with llama_cpp_serve(gguf, threads=1, log_path=log_path) as server:
        yield server
