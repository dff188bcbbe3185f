"""Shared fixtures: where the real-data samples live (read in place, never copied into the repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRACE_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def yelp_sample_dir() -> Path:
    """../shared/yelp_sample: real Yelp lines (5,000 businesses, 500 reviews)."""
    path = SHARED / "yelp_sample"
    if not (path / "yelp_academic_dataset_business.json").exists():
        pytest.skip(f"real Yelp sample not found at {path} (set TRACE_SHARED_DIR to the folder holding yelp_sample/)")
    return path


@pytest.fixture(scope="session")
def collab_rec_dir() -> Path:
    """../shared/collab_rec: Collab-REC's own city knowledge base and queries."""
    path = SHARED / "collab_rec"
    if not (path / "eu-cities-database.csv").exists():
        pytest.skip(f"Collab-REC data not found at {path} (set TRACE_SHARED_DIR to the folder holding collab_rec/)")
    return path
