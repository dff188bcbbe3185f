"""The turns of the Inspect task without Inspect: LLM Zero-Shot's request (text and messages layouts), the
answer rule, the reading back (ranking, citations, Popularity fallback), and the data they come from."""

from __future__ import annotations

import pytest

from baselines import pipeline
from baselines.llm.llm_zero_shot import LLMZeroShotBaseline
from baselines.llm.prompting import format_history
from tests.support.inspect_model import NOT_JSON, zero_shot_reply
from tests.support.llm import ScriptedLLM
from trace_dataset.datadir import iter_dialogues
from trace_dataset.io import TraceDataError
from trace_dataset.views import turn_rows
from trace_harness.integrations.inspect_eval.turns import (
    CUT_NOTE,
    PROMPT,
    final_answer,
    load_turns,
    sample_id,
)
from trace_harness.protocols.subsets import select_subset
from trace_llm import LLMOutputError
from trace_metrics.lib.suite import load_kb


@pytest.fixture(scope="module")
def two_dialogues(small_corpus):
    return list(iter_dialogues(small_corpus, "test"))[:2]


def test_text_mode_sends_and_reads_what_trace_bench_run_does(small_corpus, two_dialogues):
    """history=text: the requests are the messages LLM Zero-Shot sends its model (schema instruction included),
    and the same replies give the same prediction rows."""
    kb = load_kb(small_corpus)
    llm = ScriptedLLM(zero_shot_reply)
    pipe = LLMZeroShotBaseline(kb, llm=llm, json_repairs=0)
    rows = [r for d in two_dialogues for r in turn_rows(d, "closed")]
    expected = list(pipe(rows, batch_size=1))  # one request per call: `seen` follows the rows
    turnset = load_turns(small_corpus, history="text", json_repairs=0)
    requests = [turnset.requests[sample_id(r["dialogue_id"], r["turn_id"])] for r in rows]
    assert [r.messages for r in requests] == llm.seen
    got = [
        turnset.turns.read(r, final_answer([(zero_shot_reply(r.messages), False)], r.schema, 0))
        for r in requests
    ]
    assert [{k: v for k, v in g.items() if k != "scores"} for g in got] == expected
    assert any(p["ranked_poi_ids"] for p in expected) and any(p["citations"] for p in expected)


def test_messages_mode_keeps_the_prompt_and_moves_the_history_into_messages(small_corpus):
    text = load_turns(small_corpus, subset=2, history="text")
    chat = load_turns(small_corpus, subset=2, history="messages")
    assert list(text.requests) == list(chat.requests)
    for sid, t in text.requests.items():
        m = chat.requests[sid].messages
        history = t.row["history"]
        assert m[0] == t.messages[0]  # the baseline's system message
        assert [x["role"] for x in m[1:-1]] == [
            "user" if h["role"] == "user" else "assistant" for h in history
        ]
        assert [x["content"] for x in m[1:-1]] == [h["text"] for h in history]
        swapped = t.messages[-1]["content"].replace(
            format_history(history), PROMPT.render("history_in_messages"), 1
        )
        assert m[-1] == {"role": "user", "content": swapped}  # cards, instruction and JSON format unchanged
        assert chat.requests[sid].schema == t.schema


def test_the_first_valid_reply_within_the_repairs_is_the_answer():
    schema = {"type": "object", "properties": {"response": {"type": "string"}}, "required": ["response"]}
    good = '{"response": "hi"}'
    assert final_answer([(NOT_JSON, False), (good, False)], schema, 1) == {"response": "hi"}
    late = final_answer([(NOT_JSON, False), (good, False)], schema, 0)  # past the repairs: not read
    assert isinstance(late, LLMOutputError) and late.attempts == 1 and late.raw == NOT_JSON
    cut = final_answer([('{"response": ', True)], schema, 2)
    assert isinstance(cut, LLMOutputError) and cut.error.endswith(CUT_NOTE)


def test_an_answer_that_stays_invalid_gets_the_popularity_answer_counted(small_corpus):
    turnset = load_turns(small_corpus, subset=1)
    popularity = pipeline("popularity", kb=turnset.kb)
    for request in turnset.requests.values():
        failed = final_answer([(NOT_JSON, False)], request.schema, 0)
        row = turnset.turns.read(request, failed)
        [expected] = list(popularity([request.row]))
        assert row["ranked_poi_ids"] == expected["ranked_poi_ids"]
        assert row["meta"]["fallback"] == "popularity" and row["meta"]["counts"]["fallback_popularity"] == 1


def test_the_turns_are_the_seeded_subset_in_corpus_order(small_corpus):
    everything = list(iter_dialogues(small_corpus, "test"))
    chosen = select_subset(everything, 3, 7)
    turnset = load_turns(small_corpus, subset=3, seed=7, pool="pool_16")
    assert [d["dialogue_id"] for d in turnset.dialogues] == [d["dialogue_id"] for d in chosen]
    expected = [sample_id(r["dialogue_id"], r["turn_id"]) for d in chosen for r in turn_rows(d, "pool_16")]
    assert list(turnset.requests) == expected
    assert all(r.row["pool"] == "pool_16" for r in turnset.requests.values())


def test_bad_task_arguments_are_refused(small_corpus):
    with pytest.raises(TraceDataError, match="data=DIR"):
        load_turns(None)
    with pytest.raises(ValueError, match="unknown pool 'big'"):
        load_turns(small_corpus, pool="big")
    with pytest.raises(ValueError, match="history='chat'"):
        load_turns(small_corpus, history="chat")
