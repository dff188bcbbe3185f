"""The `core` evaluate module: loads through `evaluate.load`, equals the library on the same LLM (the real LLM
layer against a scripted OpenAI-compatible stub), and (slow) its metric card's examples run on SmolLM2."""

from __future__ import annotations

import json
import re
import sys

import evaluate
import pytest

from tests.support.stub_server import StubOpenAI
from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.core.conversation import build_log, metric_inputs
from trace_metrics.core.prompts import FACTOR_IDS, load_prompts
from trace_metrics.core.scoring import score_logs
from trace_metrics.lib.toy import reference_predictions, toy_dialogues

HERE = MODULES / "core"  # the evaluate module folder: module, metric card, examples
sys.path.insert(0, str(HERE.parents[1] / "tests" / "llm"))


def respond(body):
    text = body["messages"][0]["content"]
    if "YOUR ROLE:" in text:
        return (
            200,
            json.dumps(
                {
                    "evaluator": "x",
                    "statement": "ok",
                    "score": 40 if text.startswith("YOUR ROLE: Linguist") else 60,
                }
            ),
        )
    factor = re.search(r"You will assess the (.+?) of the", text).group(1)
    return (200, "fine <rating>4</rating>" if factor != "Novelty" else "no rating")


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


@pytest.fixture
def logs():
    return [build_log(d, reference_predictions([d]), system="ref") for d in toy_dialogues()[:2]]


def test_compute_equals_the_library(metric, logs, tmp_path):
    from trace_llm import load_llm

    with StubOpenAI(respond) as server:
        llm = load_llm(server.spec(), cache_path=tmp_path / "cache.sqlite")
        res = metric.compute(**metric_inputs(logs), llm=llm, max_retries=1, return_records=True)
        expected = score_logs(llm, logs, load_prompts(), max_retries=1)
    assert res["records"] == [
        {**e, "dialogue_id": "", "system": "", "conversation": r["conversation"]}
        for e, r in zip(expected, res["records"], strict=True)
    ]
    assert {k: res[f"core_{k}"] for k in FACTOR_IDS} == {
        k: (None if k == "novelty" else 4.0) for k in FACTOR_IDS
    }
    assert res["core_factor_mean"] == 4.0 and res["core_overall"] == 55.0
    assert (res["n_items"], res["n_ratings"], res["n_missing_ratings"]) == (2, 22, 2)
    assert (res["n_overall"], res["n_debate_failed"]) == (2, 0)
    assert res["llm_backend"] == "openai" and res["prompts_version"] == "core-prompts-1"
    assert res["records"][0]["debate"]["rounds"] == 4  # 60, 60, 40, 60 never converge


def test_inputs_are_checked(metric, logs):
    inputs = metric_inputs(logs)
    with pytest.raises(ValueError, match="1 ids for 2 logs"):
        metric.compute(**{**inputs, "ids": ["a"]}, llm=object())
    with pytest.raises(TypeError, match="unknown option"):
        metric.compute(**inputs, llm=object(), temperature=0)


@pytest.mark.slow
def test_card_examples_run_on_smollm2():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(
        1
    )  # as tests/conftest.py's one_torch_thread: 2 threads on a busy machine are far slower
    try:
        assert run_card_examples(HERE / "README.md") >= 8
    finally:
        torch.set_num_threads(before)
