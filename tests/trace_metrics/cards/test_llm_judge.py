"""The `llm_judge` evaluate module: loads through `evaluate.load`, equals the library with a scripted model,
and (slow) its metric card's example runs on the packaged SmolLM2."""

from __future__ import annotations

import evaluate
import pytest

from tests.support.llm import ScriptedLLM
from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib.judge import JUDGE_IDS, JUDGE_SCHEMA, aggregate_judgements, judge_turns

HERE = MODULES / "llm_judge"  # the evaluate module folder: module, metric card, examples
PREDICTIONS = ['Try Cafe A: "quiet patio" [R1].', "Hotel B [R1].", "Museum C."]
REFERENCES = [["Quiet patio, great eggs."], ["Near the airport."], []]
CONTEXTS = ["User: Quiet brunch in Tampa?", "User: Cheap hotel?\nSystem: Near the airport?\nUser: Yes.", ""]


def scripted() -> ScriptedLLM:
    """Rates item 0 all 4s, item 2 1-5; item 1's answer lacks the ratings every time (a failed item)."""
    scale = list(JUDGE_SCHEMA["properties"])

    def reply(conversation):
        user = conversation[1]["content"]
        if PREDICTIONS[1] in user:
            return {}
        return (
            dict.fromkeys(scale, 4)
            if PREDICTIONS[0] in user
            else dict(zip(scale, [1, 2, 3, 4, 5], strict=True))
        )

    return ScriptedLLM(reply, model="none")


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_compute_equals_the_library(metric):
    llm = scripted()
    res = metric.compute(
        predictions=PREDICTIONS,
        references=REFERENCES,
        contexts=CONTEXTS,
        llm=llm,
        item_ids=["a", "b", "c"],
        return_per_item=True,
        return_records=True,
    )
    items = [
        {"item_id": i, "response": p, "reviews": r, "context": c}
        for i, p, r, c in zip(["a", "b", "c"], PREDICTIONS, REFERENCES, CONTEXTS, strict=True)
    ]
    expected = aggregate_judgements(judge_turns(scripted(), items), return_per_item=True)
    for key, value in expected.items():
        assert res[key] == value, key
    assert res["judge_relevance"] == 2.5 and res["judge_justification"] == 4.5
    assert (res["n"], res["n_items"], res["n_failed"]) == (2, 3, 1)
    assert res["records"][1]["error"].startswith("invalid judge output: the JSON does not match the schema")
    assert (res["llm_backend"], res["llm_model"]) == ("scripted", "none")
    assert "System: Near the airport?" in llm.seen[1][1]["content"]
    assert set(JUDGE_IDS) <= set(res)


def test_item_ids_must_match(metric):
    with pytest.raises(ValueError, match="one per prediction"):
        metric.compute(
            predictions=PREDICTIONS, references=REFERENCES, contexts=CONTEXTS, llm=scripted(), item_ids=["a"]
        )


@pytest.mark.slow
def test_card_examples_run_on_smollm2():
    assert run_card_examples(HERE / "README.md") >= 4
