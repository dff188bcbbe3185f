"""The recovery evaluate module: loadable by path, per-turn alignment checked, card examples run."""

from __future__ import annotations

import evaluate
import pytest

from trace_metrics._testing import MODULES, run_card_examples

HERE = MODULES / "recovery"  # the evaluate module folder: module, metric card, examples


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 2


def test_first_recommendation_right(metric):
    out = metric.compute(
        predictions=[[[], ["g"]]],
        references=[[[], ["g"]]],
        actions=[["greet_and_seek", "recommend"]],
        return_per_item=True,
    )
    assert (out["tsr"], out["t2r"], out["rejection_recovery"], out["rejection_recovery_n"]) == (
        1.0,
        1.0,
        None,
        0,
    )


def test_misaligned_or_unknown_actions(metric):
    with pytest.raises(ValueError, match="one of each per turn"):
        metric.compute(predictions=[[[]]], references=[[[], []]], actions=[["greet_and_seek"]])
    with pytest.raises(ValueError, match="unknown action"):
        metric.compute(predictions=[[[]]], references=[[[]]], actions=[["shout"]])
