"""The text evaluate module: loadable by path, equal to nltk and rouge-score, card examples run."""

from __future__ import annotations

import evaluate
import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer

from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib.tokenize import bleu_tokens

HERE = MODULES / "text"  # the evaluate module folder: module, metric card, examples


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 3


def test_matches_reference_libraries(metric):
    preds = ["The rooms are clean and quiet, staff friendly.", "", "Parking is easy!!", "a b c d e f"]
    refs = [
        "Clean, quiet rooms; the staff were friendly.",
        "Have fun",
        "Parking is easy on the street.",
        "a b c d e f",
    ]
    out = metric.compute(predictions=preds, references=refs, use_stemmer=True, return_per_item=True)
    smooth = SmoothingFunction(epsilon=0.1).method1
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    assert out["bleu4_per_item"] == [
        sentence_bleu([bleu_tokens(r)], bleu_tokens(p), smoothing_function=smooth)
        for p, r in zip(preds, refs, strict=True)
    ]
    assert out["rouge_l_per_item"] == [
        scorer.score(r, p)["rougeL"].fmeasure for p, r in zip(preds, refs, strict=True)
    ]
    assert out["bleu4_per_item"][3] == 1.0 and out["bleu4_per_item"][1] == 0.0


def test_length_mismatch_is_an_error(metric):
    with pytest.raises(ValueError, match="number of predictions"):  # evaluate checks first
        metric.compute(predictions=["a", "b"], references=["a"])
