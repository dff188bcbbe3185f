"""Fixtures of the LLM baseline tests: the tiny data directory, its knowledge base and a scripted model.
The packaged SmolLM2 behind a real `transformers serve` process is tests/conftest.py's `transformers_server`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.llm_baselines import write_data_dir
from trace_dataset.datadir import kb_dir
from trace_dataset.kb.store import KnowledgeBase


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data_dir(tmp_path / "data")


@pytest.fixture
def kb(data_dir: Path) -> KnowledgeBase:
    return KnowledgeBase.load(kb_dir(data_dir))
