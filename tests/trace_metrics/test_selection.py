"""Turn selection and the join of predictions to reference turns."""

from __future__ import annotations

import pytest

from trace_dataset.io import TraceDataError
from trace_metrics.lib import selection
from trace_metrics.lib.predictions import validate_predictions
from trace_metrics.lib.toy import reference_predictions, toy_dialogues


@pytest.fixture
def joined():
    ds = [d for d in toy_dialogues() if d["split"] == "test"]
    return selection.join(ds, validate_predictions(reference_predictions(ds), ds, split="test"))


def test_families_select_the_papers_turns(joined):
    assert len(selection.system_turns(joined)) == 10
    rec = selection.recommendation_turns(joined)
    assert [(t.dialogue_id, t.turn_id, t.action) for t in rec][:3] == [
        ("toy_00001", 3, "recommend"),
        ("toy_00001", 5, "recommend"),
        ("toy_00002", 1, "compare"),
    ]
    assert len(rec) == 6 == len(selection.accuracy_turns(joined))


def test_recommended_pois_top1_recommend_top2_compare(joined):
    d2 = joined[1].system_turns
    assert selection.recommended_pois(d2) == ["r04", "r03", "r10"]
    t = d2[0]
    rerank = selection.EvalTurn(t.dialogue_id, 9, "recommend", "", ("r04",), (), ("r04", "r05"), "", {})
    assert selection.recommended_pois([*d2, rerank]) == ["r04", "r03", "r10"]  # distinct, first order kept


def test_recommended_pois_add_the_pois_a_response_cites(joined):
    t = joined[1].system_turns[0]
    tour = selection.EvalTurn(
        t.dialogue_id,
        9,
        "recommend",
        "",
        ("r04",),
        (),
        ("r04", "r05"),
        "",
        {"R2": "rev-b", "R1": "rev-a", "R3": "rev-unknown"},
    )
    farewell = selection.EvalTurn(t.dialogue_id, 11, "farewell", "", (), (), (), "", {"R1": "rev-c"})
    owners = {"rev-a": "r07", "rev-b": "r04", "rev-c": "r09"}
    # top-1 first, then cited POIs in label order; unknown reviews and non-recommending turns add nothing
    assert selection.recommended_pois([tour, farewell], owners) == ["r04", "r07"]
    assert selection.recommended_pois([tour, farewell]) == ["r04"]


def test_recovery_turns(joined):
    turns = selection.recovery_turns(joined[0])
    assert (
        turns[3] == ("recommend", True)
        and turns[4] == ("reject_and_refine", None)
        and turns[1] == ("ask_preference", None)
    )


def test_gold_less_recommendation_is_not_an_accuracy_turn(joined):
    t = joined[0].system_turns[1]
    no_gold = selection.EvalTurn(t.dialogue_id, t.turn_id, "recommend", "", (), (), ("r01",), "", {})
    d = selection.EvalDialogue("x", ("recommend",), (), (no_gold,), (0,))
    assert selection.recommendation_turns([d]) == [no_gold] and selection.accuracy_turns([d]) == []
    assert not no_gold.hit


def test_placeholder_text_means_not_hydrated():
    ds = [d for d in toy_dialogues() if d["split"] == "test"]
    ds[0]["turns"][3]["text"] = "Try Gumbo House [R1]: one reviewer says [Q:1] [R1]."
    with pytest.raises(TraceDataError, match="not hydrated"):
        selection.join(ds, validate_predictions(reference_predictions(ds), ds, split="test"))
