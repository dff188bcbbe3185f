"""Collab-REC's grounded metrics (moderator success, exposure Gini / entropy / coverage over the full catalogue,
agent reliability and hallucination rate) as an `evaluate` metric, one item per query.

A thin layer over `trace_metrics.lib.collab_rec`; definitions and choices are in this folder's README.md.
"""

from __future__ import annotations

from typing import Any

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib import collab_rec as lib

_DESCRIPTION = """\
Collab-REC (Banerjee et al.): moderator success (Eq. 12, the mean share of the query's filters each recommended
item satisfies), exposure Gini, normalised entropy, coverage and recommendations per covered item over the full
catalogue (Table 3), and the mean agent reliability (Eq. 10) and hallucination rate (Eq. 11).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of list of str): per query, the final recommendation list.
    satisfied (list of list of float): per query, each listed item's share of the query's filters it satisfies
        (|M(c) ∩ F| / |F|, in [0, 1]; 0 for an item outside the knowledge base), aligned with `predictions`.
    catalogue (list of str): every item of the closed catalogue (required: exposure counts the unexposed ones).
    reliability (list of float): optional, agent reliability values d (one per agent and round).
    hallucination (list of float): optional, agent hallucination rates h (one per agent and round).
    return_per_item (bool): also return `moderator_success_per_item` (per query).
Returns:
    moderator_success, gini, entropy, coverage (0-1), avg_recs_per_item, out_of_catalogue (count),
    reliability, hallucination_rate (None without values), n (queries).
Examples:
    >>> metric = evaluate.load(trace_metrics.module_path("collab_rec"))
    >>> metric.compute(predictions=[["a", "b"]], satisfied=[[1.0, 0.0]], catalogue=["a", "b"])["moderator_success"]
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CollabRec(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Sequence(datasets.Value("string")),
        "satisfied": datasets.Sequence(datasets.Value("float64")),
    }
    options = ("catalogue", "reliability", "hallucination", "return_per_item")

    def _score(
        self, predictions, satisfied, catalogue=None, reliability=(), hallucination=(), return_per_item=False
    ) -> dict:
        if not catalogue:
            raise ValueError("collab_rec needs catalogue=[...]: every item of the closed catalogue")
        out: dict[str, Any] = lib.collab_rec_scores(
            predictions, satisfied, list(catalogue), reliability, hallucination
        )
        if return_per_item:
            out["moderator_success_per_item"] = [sum(s) / len(s) if len(s) else 0.0 for s in satisfied]
        return out
