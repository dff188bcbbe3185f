"""Trace accuracy (Recall@k, MRR, Hit@k, multi-reference Recall@k) as an `evaluate` metric.

A thin layer over `trace_metrics.lib.accuracy`; definitions and choices are in this folder's README.md.
"""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib import accuracy as lib

_DESCRIPTION = """\
Recommendation accuracy of ranked POI lists against the gold POIs of each recommend/compare turn (Trace,
App. J and App. S): Recall@1, Recall@3 (|gold ∩ top-k| / |gold|), MRR (1 / rank of the first gold POI, 0 if
none is ranked), Hit@1/3/5, and with `alternatives` the multi-reference Recall@1/3 (an acceptable alternative
in the top k counts as a hit; the denominator is unchanged).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of list of str): per turn, the system's ranked POI ids (best first; may be empty).
    references (list of list of str): per turn, the gold POI ids (at least one).
    alternatives (list of list of str, optional): per turn, acceptable alternative POI ids (App. S).
    return_per_item (bool): also return `<metric>_per_item` lists.
Returns:
    recall@1, recall@3, mrr, hit@1, hit@3, hit@5 (0-1), mr_recall@1, mr_recall@3 (0-1, with alternatives), n.
Examples:
    >>> accuracy = evaluate.load(trace_metrics.module_path("accuracy"))
    >>> accuracy.compute(predictions=[["b", "a"]], references=[["a"]])["mrr"]
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Accuracy(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Sequence(datasets.Value("string")),
        "references": datasets.Sequence(datasets.Value("string")),
    }
    options = ("alternatives", "return_per_item")

    def _score(self, predictions, references, alternatives=None, return_per_item=False) -> dict:
        return lib.score(predictions, references, alternatives=alternatives, return_per_item=return_per_item)
