"""The rules simulator on a hand-made knowledge base: determinism, only held preferences stated, every
violating recommendation rejected (naming a violated preference) and every satisfying one accepted."""

from __future__ import annotations

import random
import re

import pytest

from tests.support.interactive import HAND_POIS, HELD, SATISFYING, VIOLATED, hand_goal
from trace_dataset.constants import PRICE_KEYWORDS
from trace_dataset.generate.preferences.constraints import Constraint
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.policy import asked_kinds
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator, SystemView

IDS = [p["business_id"] for p in HAND_POIS]
NAMES = {p["business_id"]: p["name"] for p in HAND_POIS}
QUESTIONS = (
    "What is your budget?",
    "Do you prefer a quiet setting or some buzz?",
    "Any practical must-haves?",
    "What matters most to you?",
    "Which part of town will you be in?",
)


def script(seed: int, steps: int = 8) -> list[SystemView]:
    """A random system: questions and recommendations of random POIs (seeded)."""
    rng = random.Random(seed)
    out = []
    for _ in range(steps):
        if rng.random() < 0.4:
            out.append(SystemView("ask_preference", (), rng.choice(QUESTIONS)))
        else:
            ranked = tuple(rng.sample(IDS, len(IDS)))
            out.append(SystemView(rng.choice(("recommend", "compare")), ranked, "A suggestion."))
    return out


def run(world: World, views: list[SystemView], seed: int = 42, goal=None) -> list:
    sim = RulesSimulator(world, seed)
    [t] = sim.start([goal or hand_goal()])
    turns = sim.open([t])
    for v in views:
        [u] = sim.respond([t], [v])
        if u is None:
            break
        turns.append(u)
        if u.action == "accept":
            break
    return turns


def test_same_inputs_give_the_same_traveler(hand_kb):
    world = World(hand_kb)
    for seed in range(5):
        a = [(u.action, u.text, u.poi_ids, u.meta) for u in run(world, script(seed))]
        b = [(u.action, u.text, u.poi_ids, u.meta) for u in run(World(hand_kb), script(seed))]
        assert a == b
    # another simulator seed words the same decisions differently, but decides the same
    x = run(world, script(3), seed=1)
    y = run(world, script(3), seed=2)
    assert [(u.action, u.poi_ids, u.meta["stated"]) for u in x] == [
        (u.action, u.poi_ids, u.meta["stated"]) for u in y
    ]
    assert [u.text for u in x] != [u.text for u in y]


@pytest.mark.parametrize("seed", range(12))
def test_states_only_preferences_it_holds(hand_kb, seed):
    held = {c.key for c in HELD}
    price_words = {c.value for c in HELD if c.kind == "price"}
    for u in run(World(hand_kb), script(seed, steps=10)):
        assert set(u.meta["stated"]) <= held
        for w in PRICE_KEYWORDS:  # the only price word the traveler may say is the one it holds
            if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", u.text, re.IGNORECASE):
                assert w in price_words, (w, u.text)
        assert "vegan" not in u.text.lower() and "wifi" not in u.text.lower()  # preferences it does not hold


def test_opening_states_the_opening_preferences(hand_kb):
    for opening in (0, 1, 2):
        [u] = run(World(hand_kb), [], goal=hand_goal(opening=opening))
        assert u.action == "greet_and_seek"
        assert u.meta["stated"] == [c.key for c in HELD[:opening]]


@pytest.mark.parametrize("poi_id", IDS)
@pytest.mark.parametrize("action", ["recommend", "compare"])
def test_accepts_every_satisfying_and_rejects_every_violating_recommendation(hand_kb, poi_id, action):
    others = [p for p in IDS if p != poi_id]
    turns = run(World(hand_kb), [SystemView(action, (poi_id, *others), "Try this.")])
    u = turns[-1]
    assert u.poi_ids == (poi_id,)
    if poi_id in SATISFYING:
        assert u.action == "accept" and NAMES[poi_id] in u.text
    else:
        assert u.action == "reject_and_refine"
        [named] = u.meta["stated"]
        assert named in VIOLATED[poi_id]  # the refinement names a preference the POI violates
        assert NAMES[poi_id] in u.text


def test_rejection_prefers_a_stated_preference_the_system_ignored(hand_kb):
    # r6 violates all three; "noise:quiet" was stated in the opening, so the rejection names it first
    turns = run(
        World(hand_kb), [SystemView("recommend", ("r6",), "Cedar Tavern!")], goal=hand_goal(opening=1)
    )
    assert turns[-1].meta["stated"] == ["noise:quiet"]
    # nothing stated yet: an explicit violation in goal order (noise first)
    turns = run(
        World(hand_kb), [SystemView("recommend", ("r6",), "Cedar Tavern!")], goal=hand_goal(opening=0)
    )
    assert turns[-1].meta["stated"] == ["noise:quiet"]
    # r5 violates only the price, never stated before: that one is named
    turns = run(World(hand_kb), [SystemView("recommend", ("r5",), "Iron Cantina")], goal=hand_goal(opening=1))
    assert turns[-1].meta["stated"] == ["price:cheap"]


def test_answers_the_topic_asked_then_the_rest_in_order(hand_kb):
    world = World(hand_kb)
    turns = run(
        world,
        [
            SystemView("ask_preference", (), "What is your budget?"),
            SystemView("ask_preference", (), "What matters most to you?"),
            SystemView("ask_preference", (), "Anything else?"),
        ],
        goal=hand_goal(opening=0),
    )
    assert [u.meta["stated"] for u in turns[1:]] == [
        ["price:cheap"],
        ["noise:quiet"],
        ["amenity:outdoor_seating"],
    ]
    assert [u.meta["form"] for u in turns[1:]] == ["answer", "answer", "answer"]
    # nothing left: the traveler repeats what matters most (no new preference)
    more = run(world, [SystemView("ask_preference", (), "Budget?")] * 4, goal=hand_goal(opening=0))
    assert more[-1].meta["form"] == "priority" and more[-1].meta["stated"] == ["noise:quiet"]
    assert asked_kinds("Could you tell me your budget, which part of town you will be in?") == [
        "price",
        "location",
    ]


def test_an_empty_recommendation_gets_a_nudge_and_farewell_ends(hand_kb):
    world = World(hand_kb)
    turns = run(world, [SystemView("recommend", (), "Sorry, nothing fits.")], goal=hand_goal(opening=0))
    assert turns[-1].action == "provide_preference" and turns[-1].meta["form"] == "nudge"
    assert turns[-1].meta["stated"] == ["noise:quiet"]
    sim = RulesSimulator(world)
    [t] = sim.start([hand_goal()])
    sim.open([t])
    assert sim.respond([t], [SystemView("farewell", (), "Bye!")]) == [None]


def test_targets_and_violations_follow_the_constraint_check(hand_kb):
    world = World(hand_kb)
    goal = hand_goal()
    assert set(world.targets(goal, IDS)) == SATISFYING
    for pid, expected in VIOLATED.items():
        assert {c.key for c in world.violations(goal, pid)} == expected
    assert world.violations(goal, "not-in-the-cell") == list(HELD)
    # r8 has no price level: its reviews' evidence of good value satisfies any ceiling (the generator's rule)
    assert world.targets(hand_goal(constraints=(Constraint("price", "moderate"),)), IDS) == [
        "r1",
        "r2",
        "r3",
        "r4",
        "r5",
        "r7",
        "r8",
    ]


def test_cell_positions_are_the_mask_bits(hand_kb):
    cell = World(hand_kb).cell(hand_goal().city, hand_goal().poi_type)
    assert [cell.position(pid) for pid in cell.ids] == list(range(len(cell.ids)))
    assert cell.position("not-in-the-cell") is None
