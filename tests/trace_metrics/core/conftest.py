"""Fixtures for CoRE: the toy Trace data directory with reference predictions, the prompt set, and a scripted
OpenAI-compatible stub server (tests/trace_llm/stub_server.py) so that the real LLM layer (openai backend, cache,
concurrency, JSON repairs) runs against recorded model replies. SmolLM2 and `transformers serve` come from
tests/conftest.py."""

from __future__ import annotations

import pytest

from tests.support.core import scripted
from tests.support.stub_server import StubOpenAI
from trace_metrics.core.prompts import load_prompts
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions


@pytest.fixture
def data_dir(tmp_path):
    return write_toy_data_dir(tmp_path / "trace")


@pytest.fixture
def predictions(tmp_path):
    return write_toy_predictions(tmp_path / "tfidf.jsonl")


@pytest.fixture(scope="session")
def prompts():
    return load_prompts()


@pytest.fixture
def stub_factory():
    servers = []

    def make(responder=None, delay=0.0):
        server = StubOpenAI(responder or scripted(), delay=delay).__enter__()
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.__exit__(None, None, None)
