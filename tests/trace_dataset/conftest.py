"""Fixtures of the data-side tests: the hand-made tiny Yelp bundle, knowledge base and corpus
(tests/support/tinydata.py)."""

from __future__ import annotations

import pytest

from tests.support.tinydata import Tiny, make_tiny


@pytest.fixture
def tiny(tmp_path) -> Tiny:
    return make_tiny(tmp_path)
