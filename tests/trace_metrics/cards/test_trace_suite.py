"""The trace_suite evaluate module: loadable by path, equal to the library, validation errors, card examples."""

from __future__ import annotations

import evaluate
import pytest

from trace_dataset.io import TraceDataError
from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib import suite
from trace_metrics.lib.toy import reference_predictions, toy_dialogues, write_toy_data_dir

HERE = MODULES / "trace_suite"  # the evaluate module folder: module, metric card, examples


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data_dir(tmp_path_factory.mktemp("toy") / "trace")


def _rows():
    return reference_predictions([d for d in toy_dialogues() if d["split"] == "test"])


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 5


def test_equals_library_row(metric, data_dir):
    rows = _rows()
    rows[1]["ranked_poi_ids"] = rows[1]["ranked_poi_ids"][::-1]
    row = metric.compute(predictions=rows, data_dir=str(data_dir), pool="closed")
    expected = suite.leaderboard_row(suite.evaluate_rows(data_dir, rows, "test", "closed", with_std=False))
    assert row == expected
    assert row["recall@1"] == pytest.approx(5 / 6)


def test_citations_list_form_accepted(metric, data_dir):
    rows = _rows()
    for r in rows:
        r["citations"] = [{"label": k, "review_id": v} for k, v in r["citations"].items()]
    assert metric.compute(predictions=rows, data_dir=str(data_dir))["grounding_score"] == 1.0


def test_missing_rows_fail(metric, data_dir):
    with pytest.raises(TraceDataError, match="1 missing"):
        metric.compute(predictions=_rows()[1:], data_dir=str(data_dir))
    with pytest.raises(ValueError, match="data_dir"):
        metric.compute(predictions=_rows())
