"""The `llm_judge` evaluate module: loads through `evaluate.load`, equals the library with an in-process LLM,
and (slow) its metric card's example runs on the packaged SmolLM2."""

from __future__ import annotations

import evaluate
import pytest

from trace_llm.errors import LLMOutputError
from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib.judge import JUDGE_IDS, aggregate_judgements, judge_turns

HERE = MODULES / "llm_judge"  # the evaluate module folder: module, metric card, examples
PREDICTIONS = ['Try Cafe A: "quiet patio" [R1].', "Hotel B [R1].", "Museum C."]
REFERENCES = [["Quiet patio, great eggs."], ["Near the airport."], []]
CONTEXTS = ["User: Quiet brunch in Tampa?", "User: Cheap hotel?\nSystem: Near the airport?\nUser: Yes.", ""]


class ScriptedLLM:
    def __init__(self):
        self.conversations = []

    def generate_json_batch(self, conversations, schema, settings=None, max_repairs=2):
        self.conversations.extend(conversations)
        scale = list(schema["properties"])
        return [
            dict.fromkeys(scale, 4),
            LLMOutputError("bad", raw="{}", error="missing properties", attempts=max_repairs + 1),
            dict(zip(scale, [1, 2, 3, 4, 5], strict=True)),
        ][: len(conversations)]

    def describe(self):
        return {"backend": "scripted", "model": "none", "settings": {}}


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_compute_equals_the_library(metric):
    llm = ScriptedLLM()
    res = metric.compute(predictions=PREDICTIONS, references=REFERENCES, contexts=CONTEXTS, llm=llm,
                         item_ids=["a", "b", "c"], return_per_item=True, return_records=True)  # fmt: skip
    items = [
        {"item_id": i, "response": p, "reviews": r, "context": c}
        for i, p, r, c in zip(["a", "b", "c"], PREDICTIONS, REFERENCES, CONTEXTS, strict=True)
    ]
    expected = aggregate_judgements(judge_turns(ScriptedLLM(), items), return_per_item=True)
    for key, value in expected.items():
        assert res[key] == value, key
    assert res["judge_relevance"] == 2.5 and res["judge_justification"] == 4.5
    assert (res["n"], res["n_items"], res["n_failed"]) == (2, 3, 1)
    assert res["records"][1]["error"] == "invalid judge output: missing properties"
    assert (res["llm_backend"], res["llm_model"]) == ("scripted", "none")
    assert "System: Near the airport?" in llm.conversations[1][1]["content"]
    assert set(JUDGE_IDS) <= set(res)


def test_item_ids_must_match(metric):
    with pytest.raises(ValueError, match="one per prediction"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, contexts=CONTEXTS, llm=ScriptedLLM(),
                       item_ids=["a"])  # fmt: skip


@pytest.mark.slow
def test_card_examples_run_on_smollm2():
    llm_package = pytest.importorskip("trace_llm")
    if not hasattr(llm_package, "load_llm"):
        pytest.skip("trace_llm.load_llm is not available yet")
    assert run_card_examples(HERE / "README.md") >= 4
