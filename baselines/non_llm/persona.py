"""Persona-Grounded baseline (Table 8: "Persona aspect weighting", retrieval type A+P).

The paper says only that persona types map to aspect weights. Ours: each of the 47 persona types of
`constants.PERSONA_TYPES` (App. I) has a prior weight in [0, 1] for each of the five aspects of
`baselines.toolkit.aspect` (table below, hand-set from what the archetype travels for: a budget traveller weighs
value, a layover traveller location, a date night ambiance). The turn's weights mix that prior with the
dialogue's own aspect weights (Aspect's w_a = min(hits_a / 3, 1)):

    w_a = persona_mix * p_a(persona) + (1 - persona_mix) * w_a(user turns),   persona_mix = 0.5
    score = sum_a w_a * s_a + 0.1 * stars                                      (s_a as in Aspect)

So the persona speaks before the user has said much, and the user's own words count as much as the
persona once they have named an aspect three times.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE
from baselines.toolkit.aspect import (
    ASPECTS,
    HITS_FOR_FULL_WEIGHT,
    STARS_WEIGHT,
    AspectWeightedPipeline,
    query_aspect_weights,
)
from baselines.toolkit.text import user_turns
from trace_dataset.constants import PERSONA_TYPES
from trace_dataset.io import TraceDataError

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

PERSONA_MIX = 0.5

# persona type -> (food, service, ambiance, value, location) prior weights, in ASPECTS order.
PERSONA_ASPECT_WEIGHTS: dict[str, tuple[float, float, float, float, float]] = {
    #                         food service ambiance value location
    "accessibility_needs": (0.3, 0.8, 0.4, 0.3, 0.9),  # helpful staff, easy to reach
    "architecture_buff": (0.2, 0.3, 1.0, 0.3, 0.7),  # the building and setting
    "brunch_enthusiast": (1.0, 0.5, 0.6, 0.4, 0.3),
    "budget_traveler": (0.4, 0.3, 0.2, 1.0, 0.5),
    "business": (0.3, 0.9, 0.4, 0.3, 0.8),  # efficient service, central
    "celebration": (0.8, 0.8, 0.9, 0.2, 0.3),
    "conference_attendee": (0.3, 0.7, 0.3, 0.4, 1.0),  # near the venue
    "couple": (0.6, 0.5, 0.9, 0.4, 0.4),
    "date_night": (0.8, 0.6, 1.0, 0.3, 0.3),
    "dietary_restricted": (1.0, 0.8, 0.3, 0.3, 0.2),  # what is on the menu, staff who know it
    "digital_nomad": (0.3, 0.4, 0.8, 0.7, 0.6),  # a place to sit and work, affordable
    "eco_tourist": (0.4, 0.3, 0.8, 0.5, 0.6),
    "eco_traveler": (0.5, 0.3, 0.8, 0.6, 0.7),
    "event_group": (0.6, 0.8, 0.6, 0.5, 0.6),
    "event_planner": (0.5, 0.9, 0.7, 0.5, 0.6),
    "extended_stay": (0.4, 0.6, 0.6, 0.9, 0.6),
    "family": (0.6, 0.8, 0.5, 0.8, 0.5),
    "fitness_traveler": (0.6, 0.3, 0.4, 0.4, 0.8),
    "food_explorer": (1.0, 0.4, 0.4, 0.4, 0.3),
    "foodie_explorer": (1.0, 0.5, 0.4, 0.3, 0.3),
    "friends_group": (0.7, 0.5, 0.8, 0.6, 0.4),
    "group_event": (0.6, 0.8, 0.6, 0.5, 0.5),
    "health_conscious": (0.9, 0.4, 0.5, 0.3, 0.4),
    "history_buff": (0.2, 0.4, 0.9, 0.3, 0.8),
    "international_tourist": (0.6, 0.6, 0.5, 0.4, 0.9),
    "late_night": (0.6, 0.5, 0.8, 0.4, 0.6),
    "layover_traveler": (0.4, 0.6, 0.2, 0.5, 1.0),  # close to the airport, quick
    "local_experience": (0.8, 0.4, 0.8, 0.4, 0.5),
    "luxury_couple": (0.7, 0.9, 1.0, 0.1, 0.4),
    "luxury_traveler": (0.7, 1.0, 0.9, 0.1, 0.5),
    "medical_traveler": (0.3, 0.8, 0.5, 0.4, 1.0),  # near the hospital
    "music_lover": (0.4, 0.3, 1.0, 0.4, 0.6),
    "nightlife_seeker": (0.4, 0.4, 1.0, 0.5, 0.6),
    "pet_owner": (0.3, 0.8, 0.5, 0.4, 0.8),  # staff who welcome the dog, room to walk it
    "relocation": (0.5, 0.4, 0.4, 0.8, 0.9),  # scouting neighbourhoods
    "remote_worker": (0.4, 0.4, 0.9, 0.6, 0.5),
    "road_tripper": (0.6, 0.4, 0.3, 0.8, 0.7),
    "senior": (0.5, 0.9, 0.6, 0.5, 0.7),
    "solo_traveler": (0.6, 0.5, 0.5, 0.8, 0.8),
    "sports_fan": (0.6, 0.4, 0.8, 0.5, 0.8),
    "street_art_seeker": (0.2, 0.2, 0.9, 0.4, 0.8),
    "thrill_seeker": (0.3, 0.4, 0.8, 0.4, 0.6),
    "traveling_nurse": (0.4, 0.6, 0.4, 0.9, 0.8),
    "urban_explorer": (0.5, 0.3, 0.7, 0.5, 0.9),
    "volunteer_tourist": (0.4, 0.4, 0.3, 0.9, 0.6),
    "wellness_seeker": (0.7, 0.6, 0.9, 0.3, 0.4),
    "wine_enthusiast": (0.9, 0.6, 0.8, 0.3, 0.3),
}


def persona_weights(persona_type: str) -> dict[str, float]:
    """The persona's prior aspect weights; an unknown type names the valid set."""
    try:
        row = PERSONA_ASPECT_WEIGHTS[persona_type]
    except KeyError:
        raise TraceDataError(
            f"scenario.persona_type: unknown persona type {persona_type!r}; expected one of {list(PERSONA_TYPES)}"
        ) from None
    return dict(zip(ASPECTS, row, strict=True))


def mixed_weights(
    persona: Mapping[str, float], query: Mapping[str, float], persona_mix: float = PERSONA_MIX
) -> dict[str, float]:
    """w_a = persona_mix * p_a + (1 - persona_mix) * q_a."""
    return {a: persona_mix * persona.get(a, 0.0) + (1.0 - persona_mix) * query.get(a, 0.0) for a in ASPECTS}


class PersonaGroundedBaseline(AspectWeightedPipeline):
    """Aspect scoring with the persona's prior aspect weights mixed into the query's (module docstring).

    Everything but the weights (and what the metadata records) is Aspect's.
    """

    name: ClassVar[str] = "persona"
    config_keys: ClassVar[tuple[str, ...]] = ("persona_mix", "hits_for_full_weight", "stars_weight")

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        persona_mix: float = PERSONA_MIX,
        hits_for_full_weight: int = HITS_FOR_FULL_WEIGHT,
        stars_weight: float = STARS_WEIGHT,
        **params: Any,
    ):
        if not 0.0 <= persona_mix <= 1.0:
            raise ValueError(f"persona_mix must lie in [0, 1], got {persona_mix!r}")
        super().__init__(
            kb, batch_size, hits_for_full_weight=hits_for_full_weight, stars_weight=stars_weight, **params
        )
        self.persona_mix = float(persona_mix)

    def weights(self, inp: Mapping[str, Any]) -> dict[str, float]:
        found = inp.get("aspect_weights")
        if found is None:
            persona = persona_weights(inp["scenario"]["persona_type"])
            query = query_aspect_weights(user_turns(inp["history"]), self.hits_for_full_weight)
            found = mixed_weights(persona, query, self.persona_mix)
        return found

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        """The turn's mixed aspect weights (ranked turns only)."""
        return {"aspect_weights": {a: round(w, 4) for a, w in self.weights(inp).items()}} if ranked else {}
