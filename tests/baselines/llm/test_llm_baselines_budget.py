"""A budget per LLM baseline: each refuses, when it is built, a max_new_tokens below the least in which its
constrained replies always close (naming that budget and the option to raise), and takes a budget of its own
beside a model object that other systems share (a reproduce run's `system_params.NAME.max_new_tokens`)."""

from __future__ import annotations

import pytest

from baselines import LLM_BASELINES, pipeline
from tests.support.llm import ScriptedLLM
from trace_llm import DecodingSettings
from trace_llm.budget import BudgetTooSmall, least_budget


def model(tokens: int, structured: str = "auto") -> ScriptedLLM:
    llm = ScriptedLLM(lambda conv: "{}", settings=DecodingSettings(max_new_tokens=tokens))
    llm.structured = structured
    return llm


def test_each_baseline_names_what_it_constrains_and_the_least_budget_that_follows():
    from baselines import BASELINES

    least = {name: least_budget(BASELINES[name].budget_schemas()) for name in LLM_BASELINES}
    assert least["dst"] == (192, "state delta")
    assert least["llm_zero_shot"] == (48, "ranking of 16 cards")
    assert least["multi_review_synthesis"] is None  # free text only
    assert least["rag_citation"] == least["itinerary_llm"] == least["memory_aug"] == least["llm_zero_shot"]
    assert least_budget(BASELINES["llm_zero_shot"].budget_schemas(8)) == (47, "ranking of 8 cards")


def test_a_budget_below_the_least_is_refused_when_the_baseline_is_built(kb):
    with pytest.raises(BudgetTooSmall) as told:
        pipeline("dst", kb=kb, llm=model(64))
    assert str(told.value) == (
        "dst: max_new_tokens=64 is below the 192 tokens in which its state delta (a constrained JSON reply) always "
        "closes; raise --max-new-tokens (a reproduce config: models.systems.max_new_tokens or "
        "system_params.dst.max_new_tokens) to at least 192"
    )
    with pytest.raises(BudgetTooSmall, match="llm_zero_shot: max_new_tokens=47 .* at least 48"):
        pipeline("llm_zero_shot", kb=kb, llm=model(47))
    pipeline("llm_zero_shot", kb=kb, llm=model(47), prefilter_k=8)  # eight cards: their ranking closes in 47
    pipeline("multi_review_synthesis", kb=kb, llm=model(8))  # nothing constrained: any budget
    pipeline("dst", kb=kb, llm=model(64, structured="prompt"))  # asked by prompt: no grammar to close


def test_a_system_budget_beside_a_shared_model_is_its_own_and_recorded(kb):
    shared = model(64)
    dst = pipeline("dst", kb=kb, llm=shared, max_new_tokens=192)
    zero_shot = pipeline("llm_zero_shot", kb=kb, llm=shared)
    assert dst.settings.max_new_tokens == 192 and shared.settings.max_new_tokens == 64
    assert dst.get_config_dict()["settings"]["max_new_tokens"] == 192
    assert zero_shot.settings is not None and "settings" not in zero_shot.get_config_dict()  # the model's own


class Recording(ScriptedLLM):
    """Records the budget each batch is decoded with."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.budgets: list[int] = []

    def _complete(self, conversations, settings, on_done):
        self.budgets.append(settings.max_new_tokens)
        super()._complete(conversations, settings, on_done)


def test_the_requests_go_out_with_the_systems_budget(kb):
    shared = Recording(lambda conv: {"ranked_ids": ["P1"], "response": "Try P1."})
    shared.settings = DecodingSettings(max_new_tokens=64)
    zero_shot = pipeline("llm_zero_shot", kb=kb, llm=shared, max_new_tokens=100)
    schema = zero_shot.budget_schemas(1)["ranking of 1 cards"]
    zero_shot.ask_json([[{"role": "user", "content": "rank"}]], [schema])
    dst = pipeline("dst", kb=kb, llm=shared, max_new_tokens=192)
    dst._deltas([{"history": [{"role": "user", "text": "cheap thai, please"}]}])
    assert shared.budgets[0] == 100 and set(shared.budgets[1:]) == {192}  # DST's delta, then its repairs


def test_the_run_command_refuses_the_budget_in_one_line_and_writes_nothing(data_dir, tmp_path, capsys):
    from trace_bench.cli import main

    out = tmp_path / "dst.jsonl"
    argv = [
        "run",
        "dst",
        "--data",
        str(data_dir),
        "--out",
        str(out),
        "--llm",
        "openai:http://127.0.0.1:9/v1#m",
    ]
    assert main([*argv, "--max-new-tokens", "64", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("trace-bench: error: dst: max_new_tokens=64 is below the 192 tokens")
        and "\n" not in err
    )
    assert not out.exists()
