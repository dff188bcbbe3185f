"""The interaction loop on a hand-made knowledge base with a scripted system: the turn rows the system sees,
the log records, and the Trace metrics of a hand-computed live conversation."""

from __future__ import annotations

import pytest

from tests.support.interactive import HAND_POIS, Scripted, hand_goal
from trace_harness.protocols.interactive.loop import converse
from trace_harness.protocols.interactive.report import build_metrics
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator
from trace_metrics.lib.predictions import validate_predictions

IDS = [p["business_id"] for p in HAND_POIS]


def talk(hand_kb, rankings, goal=None, turns: int = 8):
    world = World(hand_kb)
    system = Scripted(rankings)
    lives = converse(
        system,
        RulesSimulator(world),
        [goal or hand_goal()],
        pool="closed",
        max_turns=turns,
        seed=42,
        metadata={"generator": "test", "backend": "rules", "model": "", "seed": 42, "kb_version": "x"},
    )
    return world, system, lives[0]


def test_a_hand_computed_conversation_and_its_metrics(hand_kb):
    # ask -> recommend r3 (no outdoor seating: rejected) -> recommend r1 (fits: accepted) -> farewell
    world, system, live = talk(hand_kb, [["r3", "r1", "r2"], ["r1", "r2"]])
    turns = live.record["turns"]
    assert [(t["role"], t["action"]) for t in turns] == [
        ("user", "greet_and_seek"),
        ("system", "ask_preference"),
        ("user", "provide_preference"),
        ("system", "recommend"),
        ("user", "reject_and_refine"),
        ("system", "recommend"),
        ("user", "accept"),
        ("system", "farewell"),
    ]
    assert [t["turn_id"] for t in turns] == list(range(8))
    assert turns[4]["referenced_poi_ids"] == ["r3"] and turns[6]["referenced_poi_ids"] == ["r1"]
    assert set(turns[3]["gold_poi_ids"]) == {"r1", "r2", "r8"} and turns[1]["gold_poi_ids"] == []
    # what the system saw: history of the conversation, the closed pool, the rejection, and no gold
    last = system.rows[-2]
    assert last["action"] == "recommend" and last["rejected_poi_ids"] == ["r3"]
    assert last["gold_poi_ids"] == [] and last["acceptable_alternative_poi_ids"] == []
    assert [h["turn_id"] for h in last["history"]] == [0, 1, 2, 3, 4]
    assert last["candidate_poi_ids"] == IDS
    # one prediction row per system turn, valid against the log record
    index = validate_predictions(
        live.predictions, [live.record], pool="closed", split="test", known_poi_ids=IDS
    )
    assert len(index) == 4
    positions = [p["meta"]["interactive"]["target_position"] for p in live.predictions]
    assert positions[1:3] == [2, 1] and positions[3] is None  # r1 second, then first; farewell: none
    item = {"record": live.record, "predictions": live.predictions, "traveler": {}}
    m = build_metrics([item], hand_kb, protocol="trace", run={"system": "scripted"}, n_boot=200)
    assert m["dialogue"]["success_rate"]["mean"] == 1.0
    assert m["dialogue"]["turns_to_success"]["mean"] == 3.0  # three system turns before the acceptance
    v = m["trace"]["values"]
    assert v["tsr"] == 1.0 and v["t2r"] == 2.0 and v["rejection_recovery"] == 1.0
    assert v["hit@1"] == pytest.approx(0.5)
    assert m["lost_turns"]["total"] == 0
    assert [r["turn"] for r in m["per_turn"]] == [1, 2, 3]


def test_out_of_pool_rankings_lose_the_turn_and_the_dialogue_goes_on(hand_kb):
    world, system, live = talk(hand_kb, [["zz-not-in-pool"], ["r2"]])
    lost = live.predictions[1]
    assert lost["ranked_poi_ids"] == [] and lost["response"] == "" and lost["meta"]["lost"] == "out_of_pool"
    actions = [t["action"] for t in live.record["turns"]]
    assert actions[3:] == ["recommend", "provide_preference", "recommend", "accept", "farewell"]


def test_the_turn_budget_ends_the_dialogue_on_a_user_turn(hand_kb):
    world, system, live = talk(hand_kb, [["r4"], ["r5"], ["r6"]], turns=3)
    turns = live.record["turns"]
    assert sum(t["role"] == "system" for t in turns) == 3
    assert turns[-1]["role"] == "user" and turns[-1]["action"] == "reject_and_refine"


def test_asks_follow_the_seeding_dialogue(hand_kb):
    world, system, live = talk(hand_kb, [["r1"]], goal=hand_goal(asks=2))
    assert [r["action"] for r in system.rows] == ["ask_preference", "ask_preference", "recommend", "farewell"]
