"""Stage 1: scenarios. Which city x type cell, tier and persona archetype each dialogue index gets, and the
randomised persona description (name, age, travel context, 30% detail modifier).

The assignment is made for the whole corpus up front (balanced over cells, tiers by quota, archetypes
cycling through each type's pool), so it does not depend on how work is split across processes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from trace_dataset.constants import DETAIL_MODIFIER_PROBABILITY
from trace_dataset.generate.difficulty import tier_sequence
from trace_dataset.generate.personas import Modifier, personas


@dataclass(frozen=True)
class Assignment:
    index: int  # 0-based; dialogue_id is crs_yelp_{index+1:05d}
    city: str
    poi_type: str
    tier: str  # the generation-time target tier
    persona_type: str


def dialogue_id(index: int) -> str:
    return f"crs_yelp_{index + 1:05d}"


def assign(n: int, cells: Sequence[tuple[str, str]], seed: int) -> list[Assignment]:
    """Balanced cells (each cell gets n / len(cells), remainder to seeded cells), quota tiers, and persona
    archetypes cycling through the type's 38-archetype pool in a seeded order."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not cells:
        raise ValueError("no city x type cells to generate dialogues for")
    cells = sorted(cells)
    rng = random.Random(f"{seed}:cells")
    per = [n // len(cells)] * len(cells)
    for i in rng.sample(range(len(cells)), n % len(cells)):
        per[i] += 1
    seq = [cells[i] for i, k in enumerate(per) for _ in range(k)]
    rng.shuffle(seq)
    tiers = tier_sequence(n, seed)
    pools = {}
    for t in sorted({t for _, t in cells}):
        pool = list(personas().type_pools[t])
        random.Random(f"{seed}:personas:{t}").shuffle(pool)
        pools[t] = pool
    seen: dict[str, int] = {}
    out = []
    for i, (city, poi_type) in enumerate(seq):
        k = seen.get(poi_type, 0)
        seen[poi_type] = k + 1
        pool = pools[poi_type]
        out.append(Assignment(i, city, poi_type, tiers[i], pool[k % len(pool)]))
    return out


def pick_modifier(
    persona_type: str, poi_type: str, available: set[str], rng: random.Random
) -> Modifier | None:
    """With probability 0.3, a detail modifier whose implied constraint this cell can express."""
    if rng.random() >= DETAIL_MODIFIER_PROBABILITY:
        return None
    options = [m for m in personas().modifiers if poi_type in m.types and m.want in available]
    return rng.choice(options) if options else None


def persona_text(
    persona_type: str, city: str, rng: random.Random, context: str, modifier: Modifier | None
) -> tuple[str, str]:
    """(first name, description), e.g. 'Maya, 34, a date-night planner on an anniversary weekend in Nashville,
    who is vegetarian'."""
    arche = personas().archetypes[persona_type]
    name = rng.choice(personas().first_names)
    age = rng.randint(*arche.ages)
    text = f"{name}, {age}, {arche.label} on {context} in {city}"
    if modifier is not None:
        text += f", {modifier.text}"
    return name, text
