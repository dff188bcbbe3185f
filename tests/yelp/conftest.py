"""A small synthetic bundle shared by the reader and synth tests (scale 0.1: 14 POIs per city x type)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_dataset.yelp.synth import write_synthetic_bundle

SMALL_SCALE = 0.1


@pytest.fixture(scope="session")
def small_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic_bundle(tmp_path_factory.mktemp("synth") / "bundle", seed=42, scale=SMALL_SCALE)
