"""Trace text quality (BLEU-4, ROUGE-L F1) as an `evaluate` metric.

A thin layer over `trace_metrics.lib.text`; definitions and choices are in this folder's README.md.
"""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib import text as lib

_DESCRIPTION = """\
Turn-level surface similarity of system responses to the reference responses (Trace App. J): sentence
BLEU-4 with nltk's Chen & Cherry smoothing method1 (epsilon 0.1) on lower-cased word/punctuation tokens, and
ROUGE-L F1 as rouge-score computes it (default tokenizer, no stemming); both averaged over turns.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): system responses.
    references (list of str): reference responses, one per prediction.
    use_stemmer (bool): Porter-stem ROUGE tokens as rouge-score's use_stemmer=True, default False.
    return_per_item (bool): also return `bleu4_per_item`, `rouge_l_per_item`.
Returns:
    bleu4 (0-1), rouge_l (0-1), n.
Examples:
    >>> text = evaluate.load(trace_metrics.module_path("text"))
    >>> text.compute(predictions=["the gumbo is great"], references=["the gumbo is great"])["rouge_l"]
    1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Text(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
    options = (*base.declared_options("text"), "return_per_item")  # use_stemmer

    def _score(self, predictions, references, return_per_item=False, **options) -> dict:
        o = base.metric_options("text", options)
        return lib.score(
            predictions, references, use_stemmer=o["use_stemmer"], return_per_item=return_per_item
        )
