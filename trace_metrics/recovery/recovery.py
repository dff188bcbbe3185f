"""Trace dialogue success and recovery (TSR, T2R, rejection recovery) as an `evaluate` metric, one item per
dialogue.

A thin layer over `trace_metrics.lib.recovery`; definitions and choices are in this folder's README.md.
"""

from __future__ import annotations

import datasets
import evaluate

from trace_dataset.constants import ACTIONS, RECOMMENDATION_ACTIONS
from trace_metrics import module as base
from trace_metrics.lib import recovery as lib
from trace_metrics.lib.conventions import is_hit

_DESCRIPTION = """\
Dialogue-level recommendation success and recovery from rejections (Trace App. J, App. N). A recommend or
compare turn is a hit when a POI it recommends (top-1; top two of a compare turn) is gold. TSR: share of dialogues
with a hit; T2R: recommend/compare turns up to the first hit (successful dialogues only; lower is better);
rejection recovery: share of reject_and_refine turns whose next recommend/compare turn is a hit.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of list of list of str): per dialogue, per turn, the system's ranked POI ids (empty
        lists for user turns and turns that recommend nothing).
    references (list of list of list of str): per dialogue, per turn, the gold POI ids.
    actions (list of list of str): per dialogue, every turn's action (trace_dataset.constants.ACTIONS).
    return_per_item (bool): also return `tsr_per_item`, `t2r_per_item` (per dialogue) and
        `rejection_recovery_per_item` (per episode).
    compare_hit (str): "top2" (default: a compare turn hits with either of its top two) or "top1".
    t2r (str): "count" (default: recommend/compare turns up to the first hit) or "turn_index" (the first hit's
        0-based turn index, the reading the paper's numbers fit; trace_metrics/lib/conventions.py).
Returns:
    tsr (0-1), t2r (>= 1), rejection_recovery (0-1), tsr_n, t2r_n, rejection_recovery_n,
    rejection_episodes_without_followup, n (dialogues).
Examples:
    >>> recovery = evaluate.load(trace_metrics.module_path("recovery"))
    >>> recovery.compute(predictions=[[[], ["x"], [], ["g2"]]], references=[[[], ["g1"], [], ["g2"]]],
    ...                  actions=[["greet_and_seek", "recommend", "reject_and_refine", "recommend"]])["t2r"]
    2.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Recovery(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Sequence(datasets.Sequence(datasets.Value("string"))),
        "references": datasets.Sequence(datasets.Sequence(datasets.Value("string"))),
        "actions": datasets.Sequence(datasets.Value("string")),
    }
    options = ("return_per_item", *base.declared_options("recovery"))  # compare_hit, t2r

    def _score(self, predictions, references, actions, return_per_item=False, **options) -> dict:
        o = base.metric_options("recovery", options)
        compare_hit, t2r = o["compare_hit"], o["t2r"]
        dialogues = []
        for i, (ranked, gold, acts) in enumerate(zip(predictions, references, actions, strict=True)):
            if not len(ranked) == len(gold) == len(acts):
                raise ValueError(
                    f"dialogue {i}: {len(ranked)} rankings, {len(gold)} gold lists and {len(acts)} actions; "
                    "expected one of each per turn"
                )
            turns = []
            for j, (r, g, a) in enumerate(zip(ranked, gold, acts, strict=True)):
                if a not in ACTIONS:
                    raise ValueError(
                        f"dialogue {i} turn {j}: unknown action {a!r}; expected one of {ACTIONS}"
                    )
                turns.append((a, is_hit(a, r, g, compare_hit) if a in RECOMMENDATION_ACTIONS else None))
            dialogues.append(turns)
        return lib.score(dialogues, return_per_item=return_per_item, t2r_reading=t2r)
