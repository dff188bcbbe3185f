"""Fixtures: hand-made tiny Yelp bundle, knowledge base and corpus (see tinydata.py)."""

from __future__ import annotations

import pytest
from tinydata import Tiny, make_tiny

from trace_dataset.release import write_release


@pytest.fixture
def tiny(tmp_path) -> Tiny:
    return make_tiny(tmp_path)


@pytest.fixture
def release_dir(tiny, tmp_path):
    write_release(tiny.corpus, tmp_path / "release")
    return tmp_path / "release"
