"""Fixtures of the LLM baseline tests: the tiny data directory, its knowledge base and a scripted model.
The packaged SmolLM2 behind a real `transformers serve` process is tests/conftest.py's `transformers_server`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from llm_baselines_data import write_data_dir  # noqa: E402

from trace_dataset.datadir import kb_dir  # noqa: E402
from trace_dataset.kb.store import KnowledgeBase  # noqa: E402


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data_dir(tmp_path / "data")


@pytest.fixture
def kb(data_dir: Path) -> KnowledgeBase:
    return KnowledgeBase.load(kb_dir(data_dir))
