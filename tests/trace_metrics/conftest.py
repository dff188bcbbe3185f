"""Fixtures: the toy Trace data directory (hand-made dialogues + a tiny knowledge base) in tmp_path."""

from __future__ import annotations

import pytest

from trace_metrics.lib.toy import reference_predictions, toy_dialogues, write_toy_data_dir


@pytest.fixture
def data_dir(tmp_path):
    return write_toy_data_dir(tmp_path / "trace")


@pytest.fixture
def test_dialogues():
    return [d for d in toy_dialogues() if d["split"] == "test"]


@pytest.fixture
def reference_rows(test_dialogues):
    return reference_predictions(test_dialogues)
