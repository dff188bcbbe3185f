"""LLM-as-Judge: prompt, parsing, failures counted, aggregation (a scripted model through the real LLM layer),
and SmolLM2 (slow)."""

from __future__ import annotations

import json

import pytest

from tests.support.llm import QueueLLM, ScriptedLLM
from trace_llm.errors import LLMConnectionError
from trace_metrics.lib.judge import (
    JUDGE_IDS,
    JUDGE_SCALES,
    JUDGE_SCHEMA,
    JudgeParseError,
    aggregate_judgements,
    judge_messages,
    judge_turns,
    parse_ratings,
)

ITEMS = [
    {
        "item_id": "d1:3",
        "context": [
            {"role": "user", "text": "Hi! A quiet brunch spot in Tampa?"},
            {"role": "system", "text": "Do you prefer outdoor seating?"},
            {"role": "user", "text": "Yes, please."},
        ],
        "response": 'Try Cafe A: "quiet patio, great eggs" [R1].',
        "reviews": ["Quiet patio, great eggs and coffee.", None],
    },
    {
        "item_id": "d2:1",
        "context": "User: Cheap hotel near the airport?",
        "response": "Hotel B [R1].",
        "reviews": [],
    },
    {"item_id": "d3:5", "context": None, "response": "Museum C is nice.", "reviews": ["Nice museum."]},
    {"item_id": "d4:2", "context": [], "response": "", "reviews": None},
]


def judge_llm(script: dict[int, list]) -> ScriptedLLM:
    """A model whose answer to ITEMS[i] is script[i][k] at the k-th attempt (repairs included; the last one
    repeats), through the real LLM layer (schema check and repairs)."""

    def reply(conversation):
        item = next(
            i
            for i, it in enumerate(ITEMS)
            if f"RESPONSE:\n{it['response'].strip() or '(empty'}" in conversation[1]["content"]
        )
        attempt = sum(m["role"] == "assistant" for m in conversation)
        answers = script[item]
        return answers[min(attempt, len(answers) - 1)]

    return ScriptedLLM(reply)


def ratings(r, i, g, f, j):
    return {"relevance": r, "informativeness": i, "grounding": g, "flow": f, "justification": j}


def test_prompt_holds_rubric_context_reviews_and_response():
    messages = judge_messages(ITEMS[0])
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    for scale in JUDGE_SCALES:
        assert f"\n{scale}:" in system
    assert (
        "User: Hi! A quiet brunch spot in Tampa?" in user and "System: Do you prefer outdoor seating?" in user
    )
    assert "[R1] Quiet patio, great eggs and coffee." in user and "[R2]" not in user
    assert 'RESPONSE:\nTry Cafe A: "quiet patio, great eggs" [R1].' in user
    assert "CITED REVIEWS:\n(none)" in judge_messages(ITEMS[1])[1]["content"]
    assert "(no earlier turns)" in judge_messages(ITEMS[2])[1]["content"]
    assert "(empty response)" in judge_messages(ITEMS[3])[1]["content"]
    long_context = [{"role": "user", "text": f"turn {i} " + "x" * 1000} for i in range(20)]
    user = judge_messages({"response": "r", "context": long_context})[1]["content"]
    assert "turn 11 " not in user and "turn 12 " in user and "x" * 600 not in user  # last 8 turns, clipped
    with pytest.raises(ValueError, match="'response' must be a string"):
        judge_messages({"response": None})
    with pytest.raises(ValueError, match="context turn 0"):
        judge_messages({"response": "r", "context": ["not a turn"]})


def test_schema_asks_for_five_integers_1_to_5():
    assert JUDGE_SCHEMA["required"] == list(JUDGE_SCALES)
    for spec in JUDGE_SCHEMA["properties"].values():
        assert spec == {"type": "integer", "minimum": 1, "maximum": 5}
    assert (
        tuple(JUDGE_SCALES.values())
        == JUDGE_IDS
        == (
            "judge_relevance",
            "judge_informativeness",
            "judge_grounding",
            "judge_flow",
            "judge_justification",
        )
    )


def test_parse_ratings():
    assert parse_ratings(ratings(1, 2, 3, 4, 5)) == ratings(1, 2, 3, 4, 5)
    assert (
        parse_ratings({**ratings(1, 2, 3, 4, 5), "relevance": "4", "flow": 2.0, "note": "x"})["relevance"]
        == 4
    )
    for bad in (
        ratings(0, 2, 3, 4, 5),
        ratings(1, 2, 3, 4, 6),
        ratings(1, 2.5, 3, 4, 5),
        ratings(True, 2, 3, 4, 5),
    ):
        with pytest.raises(JudgeParseError, match="expected an integer 1-5"):
            parse_ratings(bad)
    with pytest.raises(JudgeParseError, match="lacks"):
        parse_ratings({"relevance": 3})
    with pytest.raises(JudgeParseError, match="JSON object"):
        parse_ratings([3, 3, 3, 3, 3])


def test_judge_turns_keeps_raw_ratings_and_counts_failures():
    out_of_range = ratings(2, 1, 7, 3, 2)
    llm = judge_llm(
        {
            0: [ratings(5, 4, 3, 4, 4)],
            1: ["I think it is good"],
            2: [out_of_range],
            3: ["Sure! Here you go.", ratings(3, 3, 3, 3, 2)],
        }
    )
    records = judge_turns(llm, ITEMS, settings={"temperature": 0.0}, max_repairs=2)
    first = llm.seen[
        :4
    ]  # one batch of the four items, each asking for the schema's JSON (the layer's instruction)
    assert [m["role"] for m in first[0]] == ["system", "user"] and '"relevance"' in first[0][-1]["content"]
    assert len(llm.seen) == 4 + 2 + 2 + 1  # items 1 and 2 repaired twice, item 3 once
    assert llm.usage["json_repairs"] == 5 and llm.usage["json_failures"] == 2
    assert [r["item_id"] for r in records] == ["d1:3", "d2:1", "d3:5", "d4:2"]
    assert [r["ok"] for r in records] == [True, False, False, True]
    assert records[0]["ratings"] == ratings(5, 4, 3, 4, 4) and records[0]["raw"] == ratings(5, 4, 3, 4, 4)
    assert records[1]["raw"] == "I think it is good" and "no parseable JSON" in records[1]["error"]
    assert records[1]["attempts"] == 3
    assert (
        json.loads(records[2]["raw"]) == out_of_range and "$.grounding: 7 is not <= 5" in records[2]["error"]
    )
    assert records[3]["ratings"] == ratings(3, 3, 3, 3, 2)

    agg = aggregate_judgements(records, return_per_item=True)
    assert (
        agg["judge_relevance"] == 4.0 and agg["judge_grounding"] == 3.0 and agg["judge_justification"] == 3.0
    )
    assert (agg["n"], agg["n_items"], agg["n_failed"]) == (2, 4, 2)
    assert agg["judge_flow_per_item"] == [4, None, None, 3]


def test_all_failed_gives_no_mean_and_empty_input():
    records = judge_turns(judge_llm({0: [""]}), ITEMS[:1])
    agg = aggregate_judgements(records)
    assert agg["judge_relevance"] is None and (agg["n"], agg["n_failed"]) == (0, 1)
    assert judge_turns(QueueLLM([]), []) == []


def test_backend_failure_propagates():
    down = ScriptedLLM(
        lambda conversation: LLMConnectionError("server unreachable", url="http://127.0.0.1:9")
    )
    with pytest.raises(LLMConnectionError):
        judge_turns(down, ITEMS[:1])


@pytest.mark.slow
def test_smollm2_judges_two_items(tmp_path):
    import trace_llm as llm_package

    settings = llm_package.DecodingSettings(
        max_new_tokens=97
    )  # five ratings always close in 97 (trace_llm.budget)
    llm = llm_package.load_llm("smollm2", settings=settings, cache_path=tmp_path / "llm.sqlite")
    records = judge_turns(llm, ITEMS[:2], max_repairs=0)
    assert len(records) == 2
    for r in records:
        assert r["ok"] == (r["error"] is None)
        if r["ok"]:
            assert set(r["ratings"]) == set(JUDGE_SCALES) and all(1 <= v <= 5 for v in r["ratings"].values())
    agg = aggregate_judgements(records)
    assert agg["n"] + agg["n_failed"] == 2
    assert llm.usage["requests"] == 2  # one request per item, no repair round
