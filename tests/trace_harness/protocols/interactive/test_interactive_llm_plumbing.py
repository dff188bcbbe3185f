"""The LLM simulators' plumbing without a model: what goes into the prompt (never a target's name), the
iEvaLM-style removal of sentences that name a target, and the fallback to the rules wording, counted. The
scripted object below stands in for the model's *replies* only; decisions are the rules' in every case."""

from __future__ import annotations

import pytest

from tests.support.interactive import HAND_POIS, hand_goal
from tests.support.llm import QueueLLM
from trace_harness.protocols.interactive.report import traveler_counts
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.llm import LLMSimulator, clean_reply, remove_names
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator, SystemView
from trace_llm.errors import LLMError

NAMES = {p["business_id"]: p["name"] for p in HAND_POIS}


def replies(script: list[str | None]) -> QueueLLM:
    """A model answering with the next scripted reply; None is a failed call (an LLMError)."""
    return QueueLLM([LLMError("scripted failure") if r is None else r for r in script])


def test_remove_names_and_clean_reply():
    text, removed = remove_names(
        "I love Copper Spoon. Something quiet please! Blue Table maybe?", ["Copper Spoon", "Blue Table"]
    )
    assert text == "Something quiet please!" and removed == 2
    assert remove_names("Copper spoons are shiny.", ["Copper Spoon"])[1] == 1  # too close counts too
    assert remove_names("A bar.", ["Bar"]) == ("A bar.", 0)  # names under 4 characters are not filtered
    assert (
        clean_reply('Traveler: "Hi there, I need a table."\n\nExtra paragraph') == "Hi there, I need a table."
    )


def test_llm_traveler_words_the_rules_decisions_and_falls_back_when_needed(hand_kb):
    world = World(hand_kb)
    llm = replies(
        [
            "Hello! We want somewhere calm, like Copper Spoon.",  # names a target: that sentence goes
            "Copper Spoon. Blue Table.",  # every sentence names a target: empty -> rules wording
            None,
            None,  # the call fails (the batch, then the retry alone) -> rules wording
            "Thanks, Maple Grill is not for us; we want it calm.",  # rejects the POI just recommended: kept
        ]
    )
    sim = LLMSimulator(world, llm)
    rules = RulesSimulator(world)
    [t] = sim.start([hand_goal()])
    [r] = rules.start([hand_goal()])
    turns = sim.open([t])
    assert (
        turns[0].text == "Hello!"
        and turns[0].meta["sentences_removed"] == 1
        and turns[0].meta["wording"] == "llm"
    )
    views = [
        SystemView("ask_preference", (), "What is your budget?"),
        SystemView("ask_preference", (), "Anything else?"),
        SystemView("recommend", ("r4",), "Maple Grill!"),
    ]
    for v in views:
        turns += sim.respond([t], [v])
    rules_turns = rules.open([r]) + [u for v in views for u in rules.respond([r], [v])]
    # the same decisions as the rules traveler, whatever the model says
    assert [(u.action, u.poi_ids, u.meta["stated"]) for u in turns] == [
        (u.action, u.poi_ids, u.meta["stated"]) for u in rules_turns
    ]
    assert turns[1].meta["fallback"] == "empty_after_filter" and turns[1].meta["wording"] == "rules_fallback"
    assert turns[2].meta["fallback"] == "llm_error"
    assert turns[3].text.startswith("Thanks, Maple Grill") and turns[3].action == "reject_and_refine"
    counts = traveler_counts([{"traveler": {"turns": [u.meta for u in turns]}}])
    assert (
        counts["fallbacks"] == {"empty_after_filter": 1, "llm_error": 1} and counts["sentences_removed"] == 3
    )
    # no target's name ever reaches the model; the wishes it words are the held ones
    targets = [NAMES[p] for p in ("r1", "r2", "r8")]
    for conv in llm.seen:
        text = " ".join(m["content"] for m in conv)
        assert not any(name in text for name in targets)
    assert "Maple Grill" in llm.seen[-1][1]["content"]  # the recommended POI, named by the system
    assert sim.describe()["prompt"]["sha256"] and sim.describe()["name_similarity"] == 90


def test_llm_seeker_never_sees_or_says_the_venue(tmp_path):
    from tests.support.interactive import business, review, write_bundle
    from trace_dataset.kb.catalogue import CatalogueSpec, build_catalogue
    from trace_dataset.kb.store import KnowledgeBase
    from trace_harness.protocols.interactive.simulator.seeker import LLMSeeker
    from trace_harness.protocols.interactive.simulator.sniprec_seeds import (
        SeedCriteria,
        load_votes,
        seed_pairs,
        seeker_context,
    )

    biz = [
        business(f"v{i}", name, "Philadelphia", "Restaurants, Food, Italian")
        for i, name in enumerate(("Trattoria Rosa", "Casa Verde", "Forno Nuovo"))
    ]
    revs = [
        review(f"r{i}{j}", f"v{i}", f"u{i}{j}", 5, 1, f"Trattoria Rosa style text {j} with {biz[i]['name']}.")
        for i in range(3)
        for j in range(4)
    ]
    cat = tmp_path / "cat"
    build_catalogue(write_bundle(tmp_path / "b", biz, revs), cat, CatalogueSpec(min_reviews=3))
    kb = KnowledgeBase.load(cat)
    votes = load_votes(kb)
    pair = next(
        p
        for p in seed_pairs(votes, SeedCriteria(user_reviews=(1, 9)), n_validation=0)
        if p.business_id == "v0"
    )
    ctx = seeker_context(kb, pair, {v.review_id: v for v in votes})
    llm = replies(["I want Italian, like at Trattoria Rosa.", "Pasta, please."])
    seeker = LLMSeeker(World(kb), llm)
    [s] = seeker.start([ctx], list(kb.pois))
    first = seeker.answer([s], ["Hello, what category of restaurant are you looking for?"])[0]
    assert first.meta["wording"] == "rules_fallback" and first.meta["fallback"] == "empty_after_filter"
    assert first.meta["stated"] == ["category:Italian"]
    second = seeker.answer([s], ["Anything else?"])[0]
    assert second.text == "Pasta, please." and second.meta["wording"] == "llm"
    assert all("Trattoria Rosa" not in m["content"] for conv in llm.seen for m in conv)


@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_replies_fall_back(hand_kb, bad):
    sim = LLMSimulator(World(hand_kb), replies([bad]))
    [t] = sim.start([hand_goal()])
    [u] = sim.open([t])
    assert u.meta["fallback"] == "empty_reply" and u.text
