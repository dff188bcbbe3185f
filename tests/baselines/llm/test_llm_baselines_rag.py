"""RAG-Citation: Jaccard evidence, the quote check, and the retry loop (model answers scripted: the loop, the
check and the counters are what is tested, not the model)."""

from __future__ import annotations

import json

import pytest

from baselines import pipeline
from baselines.llm.rag_citation import jaccard, quote_check, top_sentences
from baselines.toolkit.responses import EvidenceIndex
from tests.support.llm import ScriptedLLM
from trace_dataset.datadir import iter_dialogues
from trace_dataset.views import turn_rows

EVIDENCE = {
    "R1": "The vegan bowls are fresh and the quiet back room is perfect for a long talk.",
    "R2": "Fresh oysters every night but the dining room gets very loud after eight o'clock.",
}
GOOD = '"The vegan bowls are fresh and the quiet back room is perfect" [R1]'


def test_jaccard():
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 0.0


def test_top_sentences_rank_by_jaccard_with_the_user_turns(kb):
    got = top_sentences(kb, EvidenceIndex(kb), ["p_sea", "p_veg", "p_caf"], "vegan food somewhere quiet", k=2)
    assert [s.poi_id for s in got] == [
        "p_veg",
        "p_sea",
    ]  # ties at 0 go to the higher review stars (p_sea 4, p_caf 3)
    assert got[0].text == kb.review_text("r_p_veg_0") and got[0].score > 0 == got[1].score


@pytest.mark.parametrize(
    "response, label",
    [
        (GOOD, "R1"),
        ('[R1] first, then "The vegan bowls are fresh and the quiet back room is perfect" in the text', "R1"),
        ('"The vegan bowls are fresh and the quiet back" [R1]', None),  # 9 words: too short
        ('"The vegan bowls are fresh and the quiet back room" [R1]', "R1"),  # 10 words
        ('"The vegan bowls are fresh and the QUIET back room is perfect" [R1]', None),  # not verbatim
        ('"The vegan bowls are fresh and the quiet back room is perfect" [R2]', None),  # R2 does not say it
        ('"The vegan bowls are fresh and the quiet back room is perfect"', None),  # no label
        ('"The vegan bowls are fresh and the quiet back room is perfect" [R9]', None),  # no such evidence
        ("The vegan bowls are fresh and the quiet back room is perfect [R1]", None),  # no quote marks
    ],
)
def test_quote_check(response, label):
    assert quote_check(response, EVIDENCE) == label


def answers(*responses):
    """A scripted model answering the ranking requests with these responses in turn (then the last one)."""
    seen = []

    def reply(conv):
        if '"ranked_ids"' not in conv[-1]["content"] and '"response"' not in conv[-1]["content"]:
            return "?"
        seen.append(conv)
        text = responses[min(len(seen) - 1, len(responses) - 1)]
        return (
            text
            if text.startswith("{") or text == "not json"
            else json.dumps({"ranked_ids": ["P1"], "response": text})
        )

    return reply, seen


def run_recommend(kb, reply):
    llm = ScriptedLLM(reply)
    pipe = pipeline("rag_citation", kb=kb, llm=llm, json_repairs=0)
    d = next(iter_dialogues(kb.root.parent, "test"))
    return list(pipe([next(turn_rows(d, "closed"))]))[0], llm


def evidence_quote(kb) -> str:
    text = kb.review_text("r_p_veg_0")
    return f'"{text[:-1]}" [R1]'  # the top sentence for "vegan food somewhere quiet" is R1


def test_a_passing_first_answer_needs_no_retry(kb):
    reply, seen = answers(evidence_quote(kb))
    pred, _ = run_recommend(kb, reply)
    assert pred["meta"]["quote_check"] == {"attempts": 1, "passed": True, "label": "R1"}
    assert "counts" not in pred["meta"] and pred["citations"] == {"R1": "r_p_veg_0"}


def test_two_retries_then_a_pass(kb):
    reply, seen = answers("no quote here", '"too short" [R1]', evidence_quote(kb))
    pred, _ = run_recommend(kb, reply)
    assert pred["meta"]["quote_check"]["attempts"] == 3 and pred["meta"]["quote_check"]["passed"]
    assert pred["meta"]["counts"] == {"quote_retries": 2}
    retry = seen[1]  # the answer went back as the assistant turn, then the retry message
    assert (
        retry[-2]["role"] == "assistant" and json.loads(retry[-2]["content"])["response"] == "no quote here"
    )
    assert "at least 10 words" in retry[-1]["content"]


def test_after_the_last_failure_the_response_is_kept_and_counted(kb):
    reply, seen = answers("no quote", "still none", "none again", "never asked")
    pred, _ = run_recommend(kb, reply)
    assert len(seen) == 3  # the first answer and 2 retries
    assert pred["response"] == "none again"  # unchanged: nothing is inserted into it
    assert pred["meta"]["quote_check"] == {"attempts": 3, "passed": False, "label": None}
    assert pred["meta"]["counts"] == {"quote_retries": 2, "quote_check_failed": 1}


def test_a_retry_with_invalid_json_keeps_the_previous_answer(kb):
    reply, seen = answers("first, unquoted", "not json")
    pred, _ = run_recommend(kb, reply)
    assert pred["response"] == "first, unquoted"
    assert pred["meta"]["counts"] == {"quote_retries": 1, "quote_check_failed": 1, "quote_retry_invalid": 1}


def test_invalid_json_on_the_first_answer_falls_back_to_popularity(kb):
    reply, seen = answers("not json")
    pred, _ = run_recommend(kb, reply)
    assert pred["meta"]["fallback"] == "popularity" and pred["meta"]["counts"] == {"fallback_popularity": 1}
    assert pred["ranked_poi_ids"][0] in ("p_veg", "p_bbq")  # 4.5 stars, then review count
