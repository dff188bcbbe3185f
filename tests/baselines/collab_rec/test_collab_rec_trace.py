"""Collab-REC on Trace without a live model: a turn's filters and proxies (hand-checked on a tiny knowledge base),
the full ranking from a negotiation, and the pipeline end to end with recorded model outputs in the LLM layer's
cache (MASI: one round, so every prompt is known in advance)."""

from __future__ import annotations

import itertools

import pytest

import baselines
from baselines.collab_rec.agents import AgentCaller, load_settings
from baselines.collab_rec.moderator import ModeratorConfig
from baselines.collab_rec.negotiation import run_mami
from baselines.collab_rec.trace_filters import labels_for, popularity_levels, trace_task, turn_filters
from baselines.collab_rec.trace_pipeline import CollabRecBaseline, full_ranking
from baselines.toolkit.constraints import CategoryMatcher
from tests.support.collab_rec import DEAD, POIS, dialogue, recorded_llm, write_data_dir
from tests.support.llm import ScriptedLLM
from trace_dataset.constants import KB_DIRNAME
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.views import turn_rows


@pytest.fixture
def data_dir(tmp_path):
    return write_data_dir(tmp_path / "data")


@pytest.fixture
def kb(data_dir):
    return KnowledgeBase.load(data_dir / KB_DIRNAME)


def inputs(kb):
    pipe = CollabRecBaseline(kb, llm=DEAD, llm_cache=False)
    return pipe, [pipe.preprocess(r) for r in turn_rows(dialogue())]


def test_turn_filters_and_proxies(kb):
    pipe, (recommend, compare, _) = inputs(kb)
    levels = popularity_levels(kb, "Philadelphia", "restaurant")
    assert levels == {
        "p_sea": "medium",
        "p_veg": "low",
        "p_bbq": "high",
        "p_caf": "low",
    }  # tertiles of 50 20 80 5
    matcher = CategoryMatcher(c for p in POIS for c in p["categories"])
    filters, _ = turn_filters(recommend, matcher)
    assert filters == {"budget": "at most $$", "interests": "vegan", "popularity": "low", "crowding": "low"}
    later = trace_task(kb, compare, levels, matcher)
    assert later.task.filters["walkability"] == "within 2 km of the centre of the candidates"
    assert later.task.catalogue == (
        "Harbor Fish House",
        "Smoky Pit BBQ",
        "Corner Cafe",
    )  # Green Leaf rejected
    sat = later.task.satisfies
    assert [sat(n, "budget", "at most $$") for n in later.task.catalogue] == [False, True, True]
    assert [sat(n, "crowding", "low") for n in later.task.catalogue] == [
        True,
        False,
        True,
    ]  # loud BBQ; tertiles
    # centroid of the three: Harbor 1.4 km, Smoky Pit 1.9 km, Corner Cafe 2.4 km away
    assert [sat(n, "walkability", "x") for n in later.task.catalogue] == [True, True, False]
    assert not sat("Atlantis Grill", "budget", "at most $$")
    assert "Corner Cafe | Cafes, Restaurants; price $; 4.0 stars; 5 reviews" in later.task.catalogue_text
    assert labels_for(kb, ["p_sea"]) == {"p_sea": "Harbor Fish House"}


def test_full_ranking_offer_then_scores_then_rejected(kb):
    pipe, (_, compare, _) = inputs(kb)
    levels = popularity_levels(kb, "Philadelphia", "restaurant")
    turn = trace_task(kb, compare, levels, CategoryMatcher(c for p in POIS for c in p["categories"]))
    lists = iter(
        [
            ["Corner Cafe"],
            ["Corner Cafe"],
            ["Corner Cafe"],  # round 1
            ["Smoky Pit BBQ"],
            ["Smoky Pit BBQ"],
            ["Smoky Pit BBQ"],
        ]
    )  # round 2: Corner Cafe omitted
    result = run_mami(
        [turn.task], lambda reqs: [next(lists) for _ in reqs], ModeratorConfig(k=1, t_max=2, stopping="fixed")
    )[0]
    assert result.rounds[1]["rejected"] == ["Corner Cafe"]
    assert full_ranking(result, "M_2", turn) == ["p_bbq", "p_sea", "p_caf"]  # offer, the rest, rejected last


def test_pipeline_with_recorded_outputs(data_dir, kb, tmp_path):
    pipe, rows = inputs(kb)
    levels = popularity_levels(kb, "Philadelphia", "restaurant")
    matcher = CategoryMatcher(c for p in POIS for c in p["categories"])
    answers = {}
    for inp, reply in zip(
        rows[:2],
        (
            '{"candidates": ["Green Leaf Kitchen", "Corner Cafe", "Bogus Diner"]}',
            '{"candidates": ["Corner Cafe", "Harbor Fish House"]}',
        ),
        strict=True,
    ):
        turn = trace_task(kb, inp, levels, matcher)
        caller = AgentCaller(pipe.llm, ModeratorConfig(k=min(3, len(turn.task.catalogue))))
        for agent in load_settings().names:
            answers[caller.agent_prompt(turn.task, agent, None)] = reply
    llm = recorded_llm(tmp_path, answers)
    # the paper's open list (catalogue_enum=False): names outside the catalogue reach the moderator, counted
    pipe = baselines.pipeline("collab_rec", kb, llm=llm, strategy="masi", k=3, catalogue_enum=False)
    preds = list(pipe(turn_rows(dialogue())))
    assert [p["turn_id"] for p in preds] == [1, 3, 5] and llm.usage["requests"] == 0
    rec, cmp_, bye = preds
    assert rec["ranked_poi_ids"][:2] == ["p_veg", "p_caf"] and set(rec["ranked_poi_ids"]) == {
        p["business_id"] for p in POIS
    }
    assert rec["meta"]["hallucinated"] == ["Bogus Diner"] and rec["meta"]["counts"]["hallucinated_names"] == 1
    assert rec["meta"]["counts"]["agent_calls"] == 3 and rec["meta"]["system"] == "M_1"
    assert cmp_["ranked_poi_ids"][:2] == ["p_caf", "p_sea"] and "p_veg" not in cmp_["ranked_poi_ids"]
    assert bye["ranked_poi_ids"] == [] and "meta" not in bye  # farewell: no negotiation
    for p in (rec, cmp_):  # verbatim quotes with [Rn] labels that resolve to the cited reviews
        assert p["citations"]
        for label, rid in p["citations"].items():
            assert f"[{label}]" in p["response"] and rid in kb.reviews
            quote = p["response"].split(f" [{label}]")[0].rsplit('"', 2)[-2]
            assert quote in kb.review_text(rid)
    # the Trace metrics score the rankings and the grounded responses
    from trace_dataset.io import write_jsonl
    from trace_metrics.lib.suite import evaluate_run

    write_jsonl(tmp_path / "preds.jsonl", [p.to_dict() for p in preds])
    row = evaluate_run(data_dir, tmp_path / "preds.jsonl", split="test", pool="closed")
    assert row["values"]["recall@1"] == 1.0  # Green Leaf first at turn 1, Corner Cafe at turn 3: both gold
    assert row["values"]["cgs"] > 0 and row["n"]["recall@1"] == 2
    assert pipe.describe()["parameters"]["prompt_files"]["collab_rec.txt"]
    assert pipe.describe()["family"] == "LLM" and CollabRecBaseline.name == "collab_rec"


def test_bad_parameters_fail_with_the_valid_values(kb):
    with pytest.raises(ValueError, match="expected one of"):
        CollabRecBaseline(kb, llm=DEAD, llm_cache=False, strategy="toppop")
    with pytest.raises(ValueError, match="aggressive"):
        CollabRecBaseline(kb, llm=DEAD, llm_cache=False, rejection="loose")


def _rotating_answers(conversation):
    """Two catalogue names picked by the prompt's length: the same prompt always gets the same answer."""
    names = sorted(p["name"] for p in POIS)
    n = len(conversation[-1]["content"])
    return {"candidates": [names[n % len(names)], names[(n + 1) % len(names)]]}


class OneAtATimeLLM(ScriptedLLM):
    answers_concurrently = False


def test_a_model_answering_one_request_at_a_time_negotiates_task_by_task(kb):
    """llama.cpp answers one request after another, so batching every task's round t buys nothing; each task
    negotiates to the end before the next, so an agent's next-round prompt follows its last one (for the
    prompt cache), with the same prompts and the same predictions."""
    runs = {}
    for cls in (ScriptedLLM, OneAtATimeLLM):
        llm = cls(_rotating_answers)
        pipe = baselines.pipeline("collab_rec", kb, llm=llm, k=2, t_max=3, catalogue_enum=False)
        preds = [(p["turn_id"], p["ranked_poi_ids"]) for p in pipe(turn_rows(dialogue()))]
        runs[cls] = preds, [c[-1]["content"] for c in llm.seen]
    (preds, together), (preds_one, one_by_one) = runs[ScriptedLLM], runs[OneAtATimeLLM]
    assert preds_one == preds and sorted(one_by_one) == sorted(together)
    assert len(together) > 6  # two tasks, three agents, and more than one round

    def switches(prompts):  # how often the next request belongs to another task (turn) than the last one
        tasks = [p.split("[User query: ")[1].split("]")[0] for p in prompts]
        return sum(a != b for a, b in itertools.pairwise(tasks))

    assert switches(one_by_one) == 1  # two tasks, one after the other
    assert switches(together) > 1  # lockstep: round t of both tasks, then round t + 1
