"""Fixtures for the LLM layer: a tiny random Llama (fast) and a scripted OpenAI-compatible stub server.
The packaged SmolLM2 and the real `transformers serve` process are shared by every test folder
(tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.stub_server import StubOpenAI
from tests.support.tiny_llama import build_tiny_llama


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
