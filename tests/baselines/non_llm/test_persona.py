"""Persona-Grounded: the 47-persona table, weight mixing, and persona-dependent rankings."""

from __future__ import annotations

import pytest

from baselines.non_llm.persona import (
    PERSONA_ASPECT_WEIGHTS,
    PersonaGroundedBaseline,
    mixed_weights,
    persona_weights,
)
from baselines.toolkit.aspect import ASPECTS
from tests.support.non_llm import load_kb, poi, row
from trace_dataset.constants import PERSONA_TYPES
from trace_dataset.io import TraceDataError


def test_table_covers_every_persona_with_five_weights_in_unit_range():
    assert tuple(PERSONA_ASPECT_WEIGHTS) == PERSONA_TYPES  # same 47 names, same (alphabetical) order
    for name, weights in PERSONA_ASPECT_WEIGHTS.items():
        assert len(weights) == len(ASPECTS), name
        assert all(0.0 <= w <= 1.0 for w in weights), name
        assert max(weights) >= 0.8, name  # every archetype cares strongly about something


def test_persona_weights_and_unknown_persona():
    assert persona_weights("budget_traveler") == {
        "food": 0.4,
        "service": 0.3,
        "ambiance": 0.2,
        "value": 1.0,
        "location": 0.5,
    }
    with pytest.raises(TraceDataError, match="unknown persona type 'pirate'.*budget_traveler"):
        persona_weights("pirate")


def test_mixed_weights_hand_computed():
    p = {"food": 0.4, "service": 0.3, "ambiance": 0.2, "value": 1.0, "location": 0.5}
    q = {"food": 1.0, "service": 0.0, "ambiance": 1 / 3, "value": 0.0, "location": 0.0}
    w = mixed_weights(p, q, 0.5)
    assert w == {
        "food": pytest.approx(0.7),
        "service": pytest.approx(0.15),
        "ambiance": pytest.approx(4 / 15),
        "value": pytest.approx(0.5),
        "location": pytest.approx(0.25),
    }
    assert mixed_weights(p, q, 1.0) == pytest.approx(p)
    assert mixed_weights(p, q, 0.0) == pytest.approx(q)


@pytest.fixture
def value_vs_ambiance_kb(tmp_path):
    pois = [poi("v", "Value Diner", stars=4.0), poi("m", "Mood Lounge", stars=4.0)]
    reviews = {
        "v": ["Great prices, a real bargain.", "Affordable and worth it."],
        "m": ["Romantic atmosphere, lovely decor.", "Cozy and charming interior."],
    }
    return load_kb(tmp_path, pois, reviews)


def test_persona_changes_the_ranking(value_vs_ambiance_kb):
    pipe = PersonaGroundedBaseline(value_vs_ambiance_kb)
    # s(v) = value +1 (everything else 0); s(m) = ambiance +1; equal stars; the query names no aspect
    budget = row(["Hi, any ideas?"], candidates=("v", "m"), persona_type="budget_traveler")
    date = row(["Hi, any ideas?"], candidates=("v", "m"), persona_type="date_night")
    [b], [d] = pipe([budget]), pipe([date])
    assert b["ranked_poi_ids"] == ["v", "m"]
    assert d["ranked_poi_ids"] == ["m", "v"]
    # budget_traveler: 0.5 * 1.0 + 0.4 = 0.9 vs 0.5 * 0.2 + 0.4 = 0.5
    assert pipe.score(pipe.preprocess(budget)) == {"v": pytest.approx(0.9), "m": pytest.approx(0.5)}
    assert b["meta"]["aspect_weights"]["value"] == 0.5


def test_user_words_can_outweigh_the_persona(value_vs_ambiance_kb):
    pipe = PersonaGroundedBaseline(value_vs_ambiance_kb)
    r = row(
        ["A romantic, cozy atmosphere please", "with nice decor"],
        candidates=("v", "m"),
        persona_type="budget_traveler",
    )
    # ambiance hits: romantic, cozy, atmosphere, decor = 4 -> 1.0; w_amb = 0.5 * 0.2 + 0.5 = 0.6, w_val = 0.5
    [pred] = pipe([r])
    assert pred["ranked_poi_ids"] == ["m", "v"]
    # pure persona (mix 1.0) ignores the words
    [pure] = PersonaGroundedBaseline(value_vs_ambiance_kb, persona_mix=1.0)([r])
    assert pure["ranked_poi_ids"] == ["v", "m"]


def test_parameters(value_vs_ambiance_kb):
    pipe = PersonaGroundedBaseline(value_vs_ambiance_kb, persona_mix=0.25)
    assert pipe.get_config_dict() == {"persona_mix": 0.25, "hits_for_full_weight": 3, "stars_weight": 0.1}
    with pytest.raises(ValueError, match="persona_mix"):
        PersonaGroundedBaseline(value_vs_ambiance_kb, persona_mix=1.5)
