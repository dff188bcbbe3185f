"""One prediction-row limit: a run that would write a row `trace-bench submit` refuses (a 2 MB
response line) stops there, naming the dialogue and turn, instead of writing a file nobody can submit."""

from __future__ import annotations

import pytest

from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES
from trace_dataset.datadir import iter_dialogues
from trace_dataset.io import TraceDataError
from trace_dataset.prediction import Prediction
from trace_harness.protocols.teacher_forced.workers import predict_lines


class Talkative:
    """A pipeline whose response to one turn is `size` characters long (the others are short)."""

    name = "talkative"

    def __init__(self, size: int):
        self.size = size

    def __call__(self, rows):
        for i, row in enumerate(rows):
            yield Prediction(row["dialogue_id"], row["turn_id"], (), "w" * (self.size if i == 2 else 10), {})


def test_a_row_over_the_submission_limit_stops_the_run(world):
    dialogues = list(iter_dialogues(world.corpus, "test"))[:3]
    lines = predict_lines(Talkative(MAX_PREDICTION_LINE_BYTES - 200), dialogues, "closed")
    assert max(len(line.encode()) for line in lines) <= MAX_PREDICTION_LINE_BYTES
    with pytest.raises(
        TraceDataError,
        match=r"talkative: the prediction of dialogue .* turn \d+ is 2,097,2\d\d "
        r"bytes as a JSON line; a prediction row is at most 1,048,576 bytes",
    ):
        predict_lines(Talkative(2 * 2**20), dialogues, "closed")
