"""Fixtures: the toy Trace data directory (trace_metrics.lib.toy) and runs of it, in tmp_path."""

from __future__ import annotations

import pytest

# the baselines' test builders (turn rows, tiny knowledge bases): tests/baselines/baseline_helpers.py


@pytest.fixture
def data_dir(tmp_path):
    from trace_metrics.lib.toy import write_toy_data_dir

    return write_toy_data_dir(tmp_path / "trace")


@pytest.fixture
def reference_rows():
    from trace_metrics.lib.toy import reference_predictions, toy_dialogues

    return reference_predictions([d for d in toy_dialogues() if d["split"] == "test"])
