"""Trace grounding (GS, CD, PC, CGS) as an `evaluate` metric.

A thin layer over `trace_metrics.lib.grounding`; definitions and choices are in this folder's README.md.
"""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib import grounding as lib

_DESCRIPTION = """\
Grounding of responses in the reviews they cite with [Rn] labels (Trace §3, App. J Algorithm 1, App. L):
Grounding Score (share of double-quoted spans whose rapidfuzz partial_ratio against the cited reviews is
>= 0.8; 1 without quotes), Citation Density (word tokens inside verbatim quotes / response tokens), Provenance
Coverage (share of the 41 aspect terms mentioned that have a citation label within 80 characters; 1 without
mentions) and CGS = GS x min(1, CD / 0.05) x (0.5 + 0.5 PC), over several responses applied to the GS, CD
and PC means (`cgs`, the paper's tables) and averaged per response (`cgs_turn_mean`).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the responses, with [Rn] citation labels.
    references (list of list of str): per response, the cited review texts; references[i][n-1] is the text
        label [Rn] of response i points to (None, or a missing entry, for a label that points nowhere).
    fuzzy_threshold (float in [0, 1] or "exact"): quote support threshold, default 0.8.
    cd_gate (float > 0): CD at which CGS stops penalising, default 0.05.
    pc_window (int >= 0): characters around a mention searched for a label, default 80.
    return_per_item (bool): also return `<metric>_per_item` lists.
Returns:
    grounding_score, citation_density, provenance_coverage, cgs (the CGS formula on the three means, as the
    paper's tables), cgs_turn_mean (mean of per-response CGS), all in 0-1; n, n_quotes, n_unresolved_labels.
Examples:
    >>> grounding = evaluate.load(trace_metrics.module_path("grounding"))
    >>> r = grounding.compute(predictions=['It has "fresh oysters" [R1].'], references=[["Fresh oysters, cold beer."]])
    >>> r["grounding_score"], r["citation_density"]  # a fuzzy match (92 >= 80) but not verbatim
    (1.0, 0.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Grounding(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Value("string"),
        "references": datasets.Sequence(datasets.Value("string")),
    }
    options = (*base.declared_options("grounding"), "return_per_item")  # fuzzy_threshold, cd_gate, pc_window

    def _score(self, predictions, references, return_per_item=False, **options) -> dict:
        o = base.metric_options("grounding", options)
        return lib.score(
            predictions, references, o["fuzzy_threshold"], o["cd_gate"], o["pc_window"], return_per_item
        )
