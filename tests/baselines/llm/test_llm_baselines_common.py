"""What the LLM baselines share: ranking answers, the prefilter (TF-IDF, dense, none), the Popularity fallback
and its counters, Itinerary-LLM's graph section, decoding defaults and run metadata (model answers scripted)."""

from __future__ import annotations

import json
import re

import pytest

from baselines import LLM_BASELINES, pipeline
from baselines.llm import (
    APP_F_MAX_NEW_TOKENS,
    APP_F_TEMPERATURE,
    PROVIDER_DEFAULT_TEMPERATURE,
    is_reasoning_model,
)
from baselines.llm.common import (
    DEFAULT_PREFILTER_K,
    RESPONSE_MAX_CHARS,
    complete_ranking,
    completion_scores,
    ranking_schema,
)
from baselines.llm.itinerary_llm import graph_section
from baselines.toolkit.proximity import ProximityGraph
from tests.support.llm import ScriptedLLM
from tests.support.llm_baselines import WordEncoder, ranking_reply
from trace_dataset.datadir import iter_dialogues
from trace_dataset.prediction import Prediction
from trace_dataset.views import turn_rows
from trace_llm.jsonout import validation_errors


def rows(kb, pool="closed", split="test"):
    return [r for d in iter_dialogues(kb.root.parent, split) for r in turn_rows(d, pool)]


def test_ranking_schema_and_completion():
    schema = ranking_schema(["P1", "P2"], ranked=True)
    assert validation_errors({"ranked_ids": ["P2"], "response": "x"}, schema) == []
    assert validation_errors({"ranked_ids": ["P3"], "response": "x"}, schema)  # not a card id
    # repeats pass (no grammar engine can refuse them; complete_ranking keeps the first), but not more ids than cards
    assert validation_errors({"ranked_ids": ["P1", "P1"], "response": "x"}, schema) == []
    assert validation_errors({"ranked_ids": ["P1", "P2", "P1"], "response": "x"}, schema)
    assert validation_errors({"ranked_ids": ["P1"], "response": "x", "why": "y"}, schema)  # no other key
    assert validation_errors({"ranked_ids": [], "response": "x"}, schema)
    assert ranking_schema(["P1"], ranked=False)["required"] == ["response"]
    assert ranking_schema([], ranked=True)["required"] == ["response"]  # nothing left to rank
    # the longest reply the schema admits closes within App. F's budget even at one token per character
    labels = [f"P{i}" for i in range(1, DEFAULT_PREFILTER_K + 1)]
    longest = {"ranked_ids": [labels[-1]] * len(labels), "response": "9" * RESPONSE_MAX_CHARS}
    assert validation_errors(longest, ranking_schema(labels, ranked=True)) == []
    assert len(json.dumps(longest)) <= APP_F_MAX_NEW_TOKENS
    assert complete_ranking(["c", "a"], ["a", "b", "c"], ["d", "e"]) == ["c", "a", "b", "d", "e"]


def _settings(kb, spec: str, **kw) -> tuple:
    settings = pipeline("llm_zero_shot", kb=kb, llm=spec, llm_cache=False, **kw).describe()["parameters"][
        "llm"
    ]["settings"]
    return settings["temperature"], settings["max_new_tokens"], settings["seed"]


def test_app_f_decoding_is_the_default(kb):
    # DSPy 3.0.3's defaults (the release the paper's gpt-5.4-mini setting implies): temperature 0.0 for a
    # non-reasoning backbone, 1.0 and 16,000 tokens for a reasoning one; max_tokens 600 is the paper's own.
    assert _settings(kb, "openai:http://127.0.0.1:9/v1#Qwen/Qwen3-8B") == (
        APP_F_TEMPERATURE,
        APP_F_MAX_NEW_TOKENS,
        42,
    )
    assert (APP_F_TEMPERATURE, APP_F_MAX_NEW_TOKENS) == (0.0, 600)
    assert _settings(kb, "openai:http://127.0.0.1:9/v1#gpt-5.4-mini") == (1.0, 16000, 42)
    # the other reading of "no explicit temperature override" is an explicit 1.0; a flag always wins
    assert _settings(kb, "openai:http://127.0.0.1:9/v1#m", temperature=PROVIDER_DEFAULT_TEMPERATURE) == (
        1.0,
        600,
        42,
    )
    assert _settings(kb, "openai:http://127.0.0.1:9/v1#gpt-5.4-mini", temperature=0.0, max_new_tokens=64) == (
        0.0,
        64,
        42,
    )
    assert [
        is_reasoning_model(m)
        for m in (
            "gpt-5.4-mini",
            "openai/gpt-5-nano",
            "o3-mini",
            "gpt-4o-mini",
            "Qwen/Qwen3-8B",
            "smollm2",
            "hf:Qwen/Qwen3-8B",
        )
    ] == [True, True, True, False, False, False, False]


@pytest.mark.parametrize("name", LLM_BASELINES)
def test_run_metadata_names_model_prompt_and_family(kb, name):
    pipe = pipeline(name, kb=kb, llm=ScriptedLLM(ranking_reply()))
    meta = pipe.describe()
    assert meta["baseline"] == name and meta["family"] == "LLM"
    assert meta["session_isolated"] is (name != "memory_aug")
    assert meta["parameters"]["llm"]["model"] == "scripted-model"
    assert re.fullmatch(r"[0-9a-f]{64}", meta["parameters"]["prompt"]["sha256"])
    assert pipe.summary()["llm_usage"]["requests"] == 0


def test_model_ranking_then_the_rest_in_card_order(kb):
    pipe = pipeline("llm_zero_shot", kb=kb, llm=ScriptedLLM(ranking_reply(("P3", "P1"))))
    first, second = list(pipe(rows(kb)))
    pool = ["p_veg", "p_sea", "p_bbq", "p_caf"]
    assert first["ranked_poi_ids"] == ["p_bbq", "p_veg", "p_sea", "p_caf"]
    assert second["ranked_poi_ids"] == ["p_caf", "p_veg", "p_bbq"]  # p_sea rejected: P1..P3 = veg, bbq, caf
    assert first["meta"]["model_ranking"] == ["P3", "P1"] and sorted(first["ranked_poi_ids"]) == sorted(pool)


def test_invalid_json_falls_back_to_popularity_and_is_counted(kb):
    llm = ScriptedLLM(lambda conv: "Sure! Here is my answer without any JSON.")
    pipe = pipeline("itinerary_llm", kb=kb, llm=llm, json_repairs=1)
    preds = list(pipe(rows(kb)))
    assert len(llm.seen) == 4  # each turn asked twice: the answer and one repair
    popularity = list(pipeline("popularity", kb=kb)(rows(kb)))
    for pred, pop in zip(preds, popularity, strict=True):
        assert pred["meta"]["fallback"] == "popularity" and pred["meta"]["counts"] == {
            "fallback_popularity": 1
        }
        assert "no parseable JSON" in pred["meta"]["fallback_reason"]
        assert (pred["ranked_poi_ids"], pred["response"]) == (pop["ranked_poi_ids"], pop["response"])
    assert pipe.summary()["llm_usage"]["json_failures"] == 2


def test_labels_the_prompt_never_defined_are_counted(kb):
    pipe = pipeline("llm_zero_shot", kb=kb, llm=ScriptedLLM(ranking_reply(response='"x" [R1] and "y" [R9]')))
    pred = list(pipe(rows(kb)))[0]
    assert pred["citations"] == {"R1": "r_p_veg_0"}
    assert pred["meta"]["unknown_labels"] == ["R9"] and pred["meta"]["counts"] == {"unknown_labels": 1}
    two = pipeline("llm_zero_shot", kb=kb, llm=ScriptedLLM(ranking_reply(response='"x" [R8] and "y" [R9]')))
    pred = list(two(rows(kb)))[0]  # two unknown labels, one turn: counted once (the report divides by turns)
    assert pred["meta"]["unknown_labels"] == ["R8", "R9"] and pred["meta"]["counts"] == {"unknown_labels": 1}


def shown_cards(conv) -> list[str]:
    return re.findall(r"^P\d+\. ([^-]+?) -", conv[-1]["content"], flags=re.MULTILINE)


def test_tfidf_prefilter_cuts_a_large_pool_and_keeps_the_rest_after(kb):
    llm = ScriptedLLM(ranking_reply(("P1",)))
    pipe = pipeline("llm_zero_shot", kb=kb, llm=llm, prefilter_k=2)
    first = list(pipe(rows(kb, "pool_16")))[0]  # five candidates, two shown
    assert len(shown_cards(llm.seen[0])) == 2
    scores = pipe.tfidf.scores(
        "I want vegan food somewhere quiet.", ["p_veg", "p_sea", "p_bbq", "p_caf", "p_thai"]
    )
    by_score = sorted(sorted(scores), key=lambda p: scores[p], reverse=True)
    assert (
        first["ranked_poi_ids"] == by_score
    )  # the model took P1 = the TF-IDF best; the rest in TF-IDF order
    none = ScriptedLLM(ranking_reply(("P1",)))
    list(pipeline("llm_zero_shot", kb=kb, llm=none, prefilter="none", prefilter_k=2)(rows(kb, "pool_16")))
    assert len(shown_cards(none.seen[0])) == 5
    small = ScriptedLLM(ranking_reply(("P1",)))
    list(pipeline("llm_zero_shot", kb=kb, llm=small, prefilter_k=4)(rows(kb, "closed")))
    assert shown_cards(small.seen[0]) == [
        "Green Leaf Kitchen",
        "Harbor Fish House",
        "Smoky Pit BBQ",
        "Corner Cafe",
    ]


def test_dense_prefilter(kb, tmp_path):
    from baselines.toolkit.dense import DenseIndex

    llm = ScriptedLLM(ranking_reply(("P1",)))
    pipe = pipeline("rag_citation", kb=kb, llm=llm, prefilter="dense", prefilter_k=2)
    pipe._dense = DenseIndex(kb, encoder=WordEncoder(), cache_dir=tmp_path)
    first = list(pipe(rows(kb, "pool_16")))[0]
    assert first["ranked_poi_ids"][0] == "p_veg"  # "vegan ... quiet" is closest to Green Leaf Kitchen
    assert len(first["ranked_poi_ids"]) == 5 and pipe.describe()["parameters"]["prefilter"] == "dense"


def test_graph_section_lists_other_types_within_500_m(kb):
    graph = ProximityGraph(kb, "Philadelphia", 500.0)
    text = graph_section(kb, graph, [("P1", "p_veg"), ("P2", "p_bbq")])
    first, second = text.splitlines()
    assert first == "P1 Green Leaf Kitchen: Rittenhouse Inn (hotel, 56 m); Square Museum (attraction, 95 m)"
    assert second == "P2 Smoky Pit BBQ: none within reach"
    assert graph_section(kb, graph, [("P1", "p_veg")], max_neighbours=1).count("(") == 1


def test_itinerary_llm_prompt_has_the_graph(kb):
    llm = ScriptedLLM(ranking_reply())
    list(pipeline("itinerary_llm", kb=kb, llm=llm)(rows(kb)[:1]))
    assert (
        "within 500 m" in llm.seen[0][-1]["content"]
        and "Square Museum (attraction" in llm.seen[0][-1]["content"]
    )


def test_bad_parameters_are_refused(kb):
    with pytest.raises(ValueError, match="unknown prefilter"):
        pipeline("llm_zero_shot", kb=kb, llm=ScriptedLLM(ranking_reply()), prefilter="bm25")
    with pytest.raises(ValueError, match="prefilter_k"):
        pipeline("llm_zero_shot", kb=kb, llm=ScriptedLLM(ranking_reply()), prefilter_k=0)
    with pytest.raises(TypeError, match="unknown parameter"):
        pipeline("dst", kb=kb, llm=ScriptedLLM(ranking_reply()), temprature=0.5)


def test_same_inputs_same_bytes(kb):
    a = [p.to_json() for p in pipeline("rag_citation", kb=kb, llm=ScriptedLLM(ranking_reply()))(rows(kb))]
    b = [p.to_json() for p in pipeline("rag_citation", kb=kb, llm=ScriptedLLM(ranking_reply()))(rows(kb))]
    assert a == b


def test_predictions_round_trip_through_the_record(kb):
    """What a run writes (the record's JSON line) reads back into the same record and the same bytes, meta
    counts and citations included: half the turns fall back to Popularity, the others cite an unknown label."""
    answers = iter(range(10_000))

    def reply(conv):
        if next(answers) % 2:
            return "not JSON"
        return ranking_reply(("P1",), "P1 it is [R1], as [R9] says.")(conv)

    preds = list(pipeline("llm_zero_shot", kb=kb, llm=ScriptedLLM(reply), json_repairs=0)(rows(kb)))
    lines = [p.to_json() for p in preds]
    assert any('"fallback_popularity":1' in line for line in lines)
    assert any('"unknown_labels":1' in line for line in lines)
    assert any('"citations":{"R1":' in line for line in lines)
    for p, line in zip(preds, lines, strict=True):
        again = Prediction.from_dict(json.loads(line))
        assert again.to_json() == line and again == p and isinstance(p, Prediction)


def test_completed_rankings_report_their_ties():
    """The model's list is strict; the shown candidates it left out tie (their card order is no judgement);
    the prefilter's cut ones follow by its scores (`baselines.base` "Ties")."""
    scores = completion_scores(["c", "a"], ["a", "b", "c", "x"], ["d", "e"], {"d": 0.3, "e": 0.3})
    order = complete_ranking(["c", "a"], ["a", "b", "c", "x"], ["d", "e"])
    assert order == ["c", "a", "b", "x", "d", "e"]
    assert [scores[p] for p in order] == [(2, 0), (2, -1), (1, 0), (1, 0), (0, 0.3), (0, 0.3)]
    assert sorted(order, key=lambda p: scores[p], reverse=True)[:2] == ["c", "a"]


@pytest.mark.parametrize("name", ["llm_zero_shot", "dst", "multi_review_synthesis"])
def test_llm_baselines_record_the_scores_of_their_rankings(kb, name):
    pipe = pipeline(name, kb=kb, llm=ScriptedLLM(ranking_reply(("P2",))))
    pipe.record_scores = {}
    d = next(iter_dialogues(kb.root.parent, "test"))
    preds = list(pipe(turn_rows(d, "closed")))
    for p in preds:
        scores = pipe.record_scores[(p["dialogue_id"], p["turn_id"])]
        assert set(scores) == set(p["ranked_poi_ids"]), name
        values = [scores[q] for q in p["ranked_poi_ids"]]
        assert values == sorted(values, reverse=True), name  # the ranking sorts by them
    if name == "llm_zero_shot":  # one chosen, the rest of the shown cards tied
        first = pipe.record_scores[(preds[0]["dialogue_id"], preds[0]["turn_id"])]
        assert sorted(first.values(), reverse=True)[0] == (2, 0) and len(set(list(first.values())[1:])) <= 2
    assert "scores" not in "".join(p.to_json() for p in preds)  # never written to a prediction
