"""Fixtures of the baseline tests; the builders live in baseline_helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.baselines import SMALL_POIS, SMALL_REVIEWS, write_kb
from trace_dataset.constants import KB_DIRNAME
from trace_dataset.kb.store import KnowledgeBase


@pytest.fixture
def small_kb_dir(tmp_path: Path) -> Path:
    return write_kb(tmp_path / KB_DIRNAME, SMALL_POIS, SMALL_REVIEWS)


@pytest.fixture
def small_kb(small_kb_dir: Path) -> KnowledgeBase:
    return KnowledgeBase.load(small_kb_dir)
