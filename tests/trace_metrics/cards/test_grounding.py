"""The grounding evaluate module: loadable by path, thin over the library, card examples run."""

from __future__ import annotations

import evaluate
import pytest

from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib import grounding as lib

HERE = MODULES / "grounding"  # the evaluate module folder: module, metric card, examples
REVIEW = "The seafood gumbo was rich and smoky, and the staff were quick."


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 3


def test_equals_library(metric):
    preds = ['Try it: "The seafood gumbo was rich" [R1]. Quiet too.', 'Nothing "made up here" [R2].', "plain"]
    refs = [[REVIEW], [REVIEW, None], []]
    out = metric.compute(
        predictions=preds, references=refs, fuzzy_threshold=0.9, pc_window=40, return_per_item=True
    )
    assert out == lib.score(preds, refs, fuzzy_threshold=0.9, pc_window=40, return_per_item=True)
    assert out["n_unresolved_labels"] == 1


def test_exact_threshold_and_bad_options(metric):
    out = metric.compute(
        predictions=['"the seafood gumbo" [R1]'], references=[[REVIEW]], fuzzy_threshold="exact"
    )
    assert out["grounding_score"] == 0.0  # lower-case "the": fuzzy-supported but not an exact substring
    with pytest.raises(ValueError, match="cd_gate"):
        metric.compute(predictions=["x"], references=[[]], cd_gate=0)
