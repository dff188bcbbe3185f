"""Fixtures of the interactive tests: a hand-made KB (always) and a small built-in corpus (synthetic bundle at
scale 0.1 -> knowledge base of 11 POIs per cell -> 48 template dialogues), built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from interactive_helpers import HAND_POIS, HAND_REVIEWS, write_kb

from trace_dataset.kb.store import KnowledgeBase


@pytest.fixture
def hand_kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.load(write_kb(tmp_path / "kb", HAND_POIS, HAND_REVIEWS))


@pytest.fixture(scope="session")
def small_bundle(tmp_path_factory) -> Path:
    from trace_dataset.yelp.synth import write_synthetic_bundle

    return write_synthetic_bundle(tmp_path_factory.mktemp("ia_bundle") / "bundle", seed=42, scale=0.1)


@pytest.fixture(scope="session")
def small_corpus(small_bundle, tmp_path_factory) -> Path:
    """The built-in pipeline at small scale: synthetic bundle -> KB (11 per cell) -> 48 dialogues."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb

    root = tmp_path_factory.mktemp("ia_corpus")
    build_kb(small_bundle, root / "kb", per_cell=11)
    generate_corpus(root / "kb", root / "corpus", n=48, seed=42, workers=1, progress=False)
    return root / "corpus"
