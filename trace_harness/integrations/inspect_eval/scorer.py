"""The scorer `trace_bench/trace_scores` and the metric `trace_bench/trace_suite` of the teacher-forced task.

The scorer reads the turn's answer from the replies the solver kept (`solver.REPLIES_KEY`: the first
schema-valid one within the repairs, `turns.final_answer`), turns it into the LLM Zero-Shot baseline's
prediction row (`ZeroShotTurns.read`: its ranking completion, citations and Popularity fallback) and scores it
with the metric registry's per-item functions (`scores.turn_values`): a sample's value is {metric id: value}
(None where undefined), its answer the response, its explanation the ranking, gold and citations by name, its
metadata the prediction row.

The metric runs the suite on every complete dialogue's predictions (`scores.suite_result`:
`evaluate_predictions`, as `trace-bench evaluate`) and gives each value with its 95% cluster-bootstrap
interval (`<id>`, `<id>_ci_low`, `<id>_ci_high`), then `dialogues` and `dialogues_incomplete`.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from trace_dataset.io import TraceDataError
from trace_harness.integrations.inspect_eval import SCORER, SUITE_METRIC
from trace_harness.integrations.inspect_eval._namespace import named
from trace_harness.integrations.inspect_eval.scores import (
    explanation,
    flat_metrics,
    suite_result,
    turn_values,
)
from trace_harness.integrations.inspect_eval.solver import REPLIES_KEY
from trace_harness.integrations.inspect_eval.turns import TurnSet, final_answer
from trace_metrics.lib.stats import N_BOOT

PREDICTION_KEY = "prediction"  # a score's metadata: the turn's prediction row


def replies_of(store: Any, where: str) -> list[tuple[str, bool]]:
    """The (reply, cut) pairs the solver kept in a sample's store (Inspect's `Store` or the log's dict); TraceDataError when there are none (the solver did not run)."""
    kept = store.get(REPLIES_KEY)
    if not isinstance(kept, list) or not kept:
        raise TraceDataError(
            f"sample {where}: no replies in its store ({REPLIES_KEY}); expected the solver's"
        )
    return [(str(text), bool(cut)) for text, cut in kept]


def prediction_of(turnset: TurnSet, sample: str, store: Any) -> dict[str, Any]:
    """The prediction row of a sample from its kept replies (what the scorer and `logs` both compute)."""
    request = turnset.requests.get(sample)
    if request is None:
        raise TraceDataError(f"sample {sample!r} is not a system turn of this task's dialogues")
    answer = final_answer(replies_of(store, sample), request.schema, turnset.turns.pipe.json_repairs)
    row = turnset.turns.read(request, answer)
    row.pop("scores", None)  # what the ranking sorts by: the live protocol's ties, no prediction field
    return row


@scorer(metrics=[], name=SCORER)
@named
def trace_scores(turnset: TurnSet) -> Scorer:
    """Each turn's prediction and its per-item metric values (module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        sample = str(state.sample_id)
        prediction = prediction_of(turnset, sample, state.store)
        request = turnset.requests[sample]
        return Score(
            value=turn_values(request, prediction, turnset.kb),
            answer=prediction["response"],
            explanation=explanation(request, prediction, turnset.kb),
            metadata={PREDICTION_KEY: prediction},
        )

    return score


@metric(name=SUITE_METRIC)
@named
def trace_suite(turnset: TurnSet, n_boot: int = N_BOOT) -> Metric:
    """The suite over the complete dialogues' predictions, with cluster-bootstrap intervals."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        found = {}
        for s in scores:
            prediction = (s.score.metadata or {}).get(PREDICTION_KEY)
            if isinstance(prediction, dict):
                found[str(s.sample_id)] = prediction
        return flat_metrics(suite_result(turnset, found, n_boot=n_boot))

    return compute
