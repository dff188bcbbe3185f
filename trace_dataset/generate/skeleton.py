"""Stage 2's turn skeleton: how long a dialogue of a tier is, how many preference questions it asks, where its
rejections fall, which recommendation turns are comparisons, and (Expert) which rejection revises an earlier
constraint. The planner (`candidates.Planner`) fills the skeleton with constraints and POIs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from trace_dataset.generate.plan import PlanError

# dialogue length in (user, system) pairs, per (tier, rejections): turns = 2 * pairs
PAIR_WEIGHTS: dict[tuple[str, int], dict[int, float]] = {
    ("Easy", 1): {4: 0.50, 5: 0.35, 6: 0.15},
    ("Medium", 1): {4: 0.25, 5: 0.40, 6: 0.35},
    ("Medium", 2): {5: 0.50, 6: 0.50},
    ("Hard", 2): {5: 0.45, 6: 0.55},
    ("Expert", 2): {5: 0.40, 6: 0.60},
    ("Expert", 3): {6: 1.0},
}
COMPARE_AFTER_REJECTION = 0.35  # share of post-rejection recommendation turns that are comparisons


@dataclass
class Skeleton:
    pairs: int
    asks: int
    greet_new: int
    outcomes: list[str]  # per recommendation slot: "reject" | "extra" | "accept" (last)
    extra_new: list[bool]  # per slot: does the following extra user turn add a constraint
    actions: list[str]  # per slot: "recommend" | "compare"
    revision_slot: int | None  # the slot whose rejection revises an earlier constraint (Expert)


def _weighted_order(weights: dict[int, float], rng: random.Random) -> list[int]:
    keys = list(weights)
    return sorted(keys, key=lambda k: rng.random() ** (1.0 / weights[k]), reverse=True)


def make_skeleton(tier: str, rejections: int, constraints: int, rng: random.Random) -> Skeleton:
    for pairs in _weighted_order(PAIR_WEIGHTS[(tier, rejections)], rng):
        for asks in (1, 2):
            slots = pairs - 1 - asks
            if slots < rejections + 1:
                continue
            extras = slots - 1 - rejections
            need = constraints - rejections
            if not 1 + asks <= need <= 2 + asks + extras:
                continue
            rem = need - 1 - asks
            greet2 = 1 if rem > extras or (rem > 0 and rng.random() < 0.6) else 0
            extra_added = rem - greet2
            positions = list(range(slots - 1))
            reject_at = set(rng.sample(positions, rejections))
            outcomes = ["reject" if i in reject_at else "extra" for i in positions] + ["accept"]
            extra_slots = [i for i in positions if i not in reject_at]
            adds = set(rng.sample(extra_slots, extra_added))
            extra_new = [i in adds for i in range(slots)]
            actions = []
            for i in range(slots):
                if i == 0:
                    actions.append("recommend")
                elif outcomes[i - 1] == "extra":
                    actions.append("compare")
                else:
                    actions.append("compare" if rng.random() < COMPARE_AFTER_REJECTION else "recommend")
            if "compare" not in actions:
                actions[-1] = "compare"
            revision = None
            if tier == "Expert":
                revision = rng.choice(sorted(reject_at))
            return Skeleton(pairs, asks, 1 + greet2, outcomes, extra_new, actions, revision)
    raise PlanError("no_skeleton", f"tier {tier} with {rejections} rejections and {constraints} constraints")
