"""What a pipeline's `_forward` gives for one turn: the prediction record and the scores behind its ranking.

`turn_output` is the one builder of a prediction every system uses (the non-LLM template, the LLM baselines,
SnipRec, Collab-REC): the ids come from the turn's input, the ranking, response, citations and `meta` from the
system; an empty `meta` leaves the line without one. `scores` ({business_id: score}, `baselines.base` "Ties")
travel beside the record and are never written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trace_dataset.prediction import Prediction


@dataclass(frozen=True)
class TurnOutput:
    """One `_forward` output: the prediction and what its ranking sorts by (None: not reported)."""

    prediction: Prediction
    scores: Mapping[str, Any] | None = None


def turn_output(
    inp: Mapping[str, Any],
    ranked: Sequence[str],
    response: str,
    citations: Mapping[str, str],
    meta: Mapping[str, Any] | None = None,
    scores: Mapping[str, Any] | None = None,
) -> TurnOutput:
    """The prediction for the turn `inp` (a `preprocess` output: its dialogue_id and turn_id)."""
    prediction = Prediction(
        str(inp["dialogue_id"]),
        int(inp["turn_id"]),
        tuple(str(p) for p in ranked),
        str(response),
        {str(k): str(v) for k, v in citations.items()},
        dict(meta) if meta else None,
    )
    return TurnOutput(prediction, scores)


__all__ = ["TurnOutput", "turn_output"]
