"""Fixtures of the release tests: a release of the tiny corpus (tests/trace_dataset/conftest.py's `tiny`)."""

from __future__ import annotations

import pytest

from trace_dataset.release import write_release


@pytest.fixture
def release_dir(tiny, tmp_path):
    write_release(tiny.corpus, tmp_path / "release")
    return tmp_path / "release"
