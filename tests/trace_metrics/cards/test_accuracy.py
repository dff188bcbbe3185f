"""The accuracy evaluate module: loadable by path, thin over the library, card examples run."""

from __future__ import annotations

import evaluate
import pytest

from trace_metrics._testing import MODULES, run_card_examples

HERE = MODULES / "accuracy"  # the evaluate module folder: module, metric card, examples


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))  # the absolute folder path, as a user would


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 3


def test_hand_computed(metric):
    out = metric.compute(predictions=[["a", "b", "c", "d"], ["x", "y"]], references=[["c", "a"], ["z"]])
    # turn 1: gold {a, c}; top-1 has a (1/2), top-3 has a, c (2/2); first gold at rank 1
    assert out == {
        "recall@1": 0.25,
        "recall@3": 0.5,
        "mrr": 0.5,
        "hit@1": 0.5,
        "hit@3": 0.5,
        "hit@5": 0.5,
        "n": 2,
    }


def test_alternatives_and_per_item(metric):
    out = metric.compute(
        predictions=[["alt", "g"]], references=[["g"]], alternatives=[["alt"]], return_per_item=True
    )
    assert out["recall@1"] == 0.0 and out["mr_recall@1"] == 1.0 and out["mrr"] == 0.5
    assert out["mr_recall@1_per_item"] == [1.0]


def test_errors_are_clear(metric):
    with pytest.raises(ValueError, match="no gold POI"):
        metric.compute(predictions=[["a"]], references=[[]])
    with pytest.raises(TypeError, match="unknown option"):
        metric.compute(predictions=[["a"]], references=[["a"]], k=3)
