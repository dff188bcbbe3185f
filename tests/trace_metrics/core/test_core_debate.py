"""The debate loop on scripted agent replies: stopping (consensus or the round limit), averaging, the chat
buffer, failed replies; and one run through the LLM layer (one generate_json_batch call per round)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.core import scripted
from tests.support.llm import ScriptedLLM
from trace_llm import LLMOutputError, load_llm
from trace_llm.base import prefix_reuse_requested
from trace_metrics.core.conversation import build_log
from trace_metrics.core.debate import (
    DEBATE_SCHEMA,
    chat_buffer,
    factor_result_block,
    new_debate,
    run_debates,
    score_value,
)
from trace_metrics.core.prompts import FACTOR_IDS
from trace_metrics.lib.toy import reference_predictions, toy_dialogues

ROLES = ("common_user", "domain_expert", "linguist", "hci_expert")


def reply(score, statement="I weigh my factors."):
    return {"evaluator": "someone", "statement": statement, "score": score}


def failed():
    return LLMOutputError(
        "no JSON", raw="I like it a lot", error="the reply contains no parseable JSON value", attempts=3
    )


@pytest.fixture
def factor_results():
    results = {
        f: {"score": 3, "rationale": f"{f} is fine. <rating>3</rating>", "detail": ""} for f in FACTOR_IDS
    }
    results["novelty"] = {
        "score": None,
        "rationale": "no tag",
        "detail": "there is no <rating>N</rating> tag",
    }
    return results


@pytest.fixture
def state(prompts, factor_results):
    d = toy_dialogues()[0]
    return new_debate(build_log(d, reference_predictions([d]), system="tfidf"), factor_results, prompts)


def test_consensus_in_round_one_stops_at_once(state):
    state.record_round([reply(70), reply("70"), reply(70.0), reply(" 70 ")])
    assert state.done and state.consensus and state.rounds == 1
    result = state.result()
    assert result["final_score"] == 70.0 and result["agent_scores"] == dict.fromkeys(ROLES, 70.0)


def test_stops_when_all_four_agree_in_a_later_round(state):
    state.record_round([reply(20), reply(40), reply(30), reply(10)])
    assert not state.done
    state.record_round([reply(30), reply(35), reply(30), reply(10)])
    assert not state.done
    state.record_round([reply(25), reply(25), reply(25), reply(25)])
    assert state.done and state.consensus and state.rounds == 3
    assert state.result()["final_score"] == 25.0
    with pytest.raises(RuntimeError):
        state.round_messages()


def test_stops_after_four_rounds_with_the_mean_of_the_last_scores(state):
    for scores in ([20, 40, 30, 10], [30, 35, 30, 0], [30, 30, 30, 0], [30, 32, 30, 0]):
        assert not state.done
        state.record_round([reply(s) for s in scores])
    assert state.done and not state.consensus and state.rounds == 4
    result = state.result()
    assert result["final_score"] == pytest.approx((30 + 32 + 30 + 0) / 4)
    assert result["n_messages"] == 16 and len(result["messages"]) == 16
    assert [m["round"] for m in result["messages"]] == [r for r in range(1, 5) for _ in range(4)]


def test_the_round_limit_is_configurable(prompts, factor_results):
    d = toy_dialogues()[1]
    state = new_debate(build_log(d, reference_predictions([d])), factor_results, prompts, max_rounds=2)
    state.record_round([reply(s) for s in (1, 2, 3, 4)])
    state.record_round([reply(s) for s in (1, 2, 3, 5)])
    assert state.done and state.rounds == 2 and state.result()["final_score"] == pytest.approx(11 / 4)
    with pytest.raises(ValueError, match="max_rounds"):
        new_debate(build_log(d, reference_predictions([d])), factor_results, prompts, max_rounds=0)


def test_a_failed_reply_keeps_the_last_score_and_blocks_consensus(state):
    state.record_round([reply(50), reply(50), reply(50), failed()])  # three agree, one failed: no consensus
    assert not state.done
    state.record_round([reply(50), reply(50), reply(50), reply(60)])
    state.record_round([reply(55), reply(55), reply(55), failed()])
    state.record_round([reply(55), reply(55), reply(55), reply(150)])  # out of range: failed
    result = state.result()
    assert state.done and not state.consensus
    assert result["agent_scores"]["hci_expert"] == 60.0  # its last valid score
    assert result["final_score"] == pytest.approx((55 * 3 + 60) / 4)
    assert result["n_failed_messages"] == 3
    bad = [m for m in result["messages"] if not m["ok"]]
    assert bad[0]["raw"] == "I like it a lot" and "no parseable JSON" in bad[0]["error"]
    assert "outside 0-100" in bad[2]["error"]
    assert result["chat_buffer"].count('"evaluator"') == 13  # failed replies stay out of the buffer


def test_a_role_that_never_scores_leaves_the_final_score_missing(state):
    for _ in range(4):
        state.record_round([reply(50), reply(50), reply(50), failed()])
    result = state.result()
    assert result["final_score"] is None and result["agent_scores"]["hci_expert"] is None
    assert result["rounds"] == 4


def test_replies_are_checked(state):
    with pytest.raises(ValueError, match="4 roles"):
        state.record_round([reply(1)])
    state.record_round([reply(50, statement="  "), reply(True), reply("high"), reply(None)])
    assert all(not m["ok"] for m in state.messages)
    assert state.latest == {}
    assert score_value("99.5") == 99.5 and score_value(0) == 0.0
    for bad in (101, -1, "abc", True):
        with pytest.raises(ValueError):
            score_value(bad)


def test_prompts_carry_role_task_log_factors_and_buffer(state, prompts):
    first = state.round_messages()
    assert len(first) == 4
    for role, (message,) in zip(prompts.roles, first, strict=True):
        text = message["content"]
        assert text.startswith(role.description)
        assert prompts.task in text and "<interaction>" in text
        assert "<discussion>\n</discussion>" in text
        assert not re.search(r"\{[A-Z_]+\}", text)
        shown = re.findall(r'"dimension_name": "([^"]+)"', text)
        assert shown == [prompts.factor(f).name for f in role.factors]
    travel = first[1][0]["content"]
    assert '"dimension_name": "Novelty"' in travel and '"score": "missing"' in travel
    assert "no valid rating: there is no <rating>N</rating> tag" in travel
    state.record_round([reply(20, "too few places"), reply(40), reply(30), reply(10)])
    second = state.round_messages()[0][0]["content"]
    assert '"statement": "too few places"' in second and '"evaluator": "Common User"' in second
    assert second[second.rindex("<discussion>") :].count('"evaluator"') == 4


def test_factor_block_and_buffer_shapes(prompts, factor_results):
    block = factor_result_block(prompts.roles[0], factor_results, prompts)
    assert block.startswith("<evaluation_result>") and block.endswith("</evaluation_result>")
    items = json.loads(
        "[" + block.removeprefix("<evaluation_result>").removesuffix("</evaluation_result>") + "]"
    )
    assert [i["dimension_name"] for i in items] == ["Effectiveness", "Recoverability", "Coherence"]
    assert all(i["score"] == "3" for i in items)
    long = {**factor_results, "coherence": {"score": 2, "rationale": "x" * 10_000}}
    assert len(factor_result_block(prompts.roles[0], long, prompts)) < 4000
    assert chat_buffer([]) == "<discussion>\n</discussion>"


def test_debates_run_through_the_llm_layer(stub_factory, prompts, factor_results, tmp_path):
    server = stub_factory(scripted(debate_scores={"Common User": "60", "Travel Expert": 80}))
    llm = load_llm(server.spec(), cache_path=tmp_path / "cache.sqlite")
    dialogues = toy_dialogues()[:2]
    states = [
        new_debate(build_log(d, reference_predictions([d])), factor_results, prompts) for d in dialogues
    ]
    run_debates(llm, states)
    for s in states:  # the scripted debaters never move: four rounds, no consensus
        assert s.done and s.rounds == 4 and not s.consensus
        assert s.result()["final_score"] == pytest.approx((60 + 80 + 70 + 70) / 4)
    assert llm.usage["requests"] == 2 * 4 * 4
    assert all(
        json.dumps(DEBATE_SCHEMA, sort_keys=True) in r["messages"][-1]["content"] for r in server.requests
    )


def test_each_debate_round_is_sent_for_prefix_reuse(state):
    inside = []  # a debater's next prompt continues its last: a backend that keeps states may reuse them
    llm = ScriptedLLM(lambda conv: inside.append(prefix_reuse_requested()) or reply(70))
    run_debates(llm, [state])
    assert state.done and inside == [True] * 4
