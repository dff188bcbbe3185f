"""The traveler's hidden state and the one acceptance check every simulator uses.

A `TravelerGoal` is what the simulated traveler knows and the system under test never sees: the persona,
the preferences it holds in the order it reveals them (how many it states in its opening message), and the
candidate pools of the corpus dialogue it was seeded from. Whether a recommended POI is acceptable is
decided here, by the generator's own predicate (`generate.preferences.constraints.satisfies`, through a
city x type `CellIndex`), so that success is never a simulator's opinion: the `llm` simulator only words
what this check decided.

Targets: the POIs of a pool that satisfy every held preference. The seeding dialogue's accepted POI is
one of them, so the closed pool always holds at least one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_dataset.constants import POOL_FIELDS, POOLS
from trace_dataset.generate.index import CellIndex, build_cell, build_profile
from trace_dataset.generate.preferences.constraints import Constraint, violation_is_explicit
from trace_dataset.kb.store import KnowledgeBase


@dataclass(frozen=True)
class TravelerGoal:
    """What one simulated traveler holds (never shown to the system)."""

    dialogue_id: str  # the corpus dialogue it was seeded from (the live log keeps this id)
    split: str
    scenario: Mapping[str, str]  # persona_type, persona, travel_context, city, poi_type, difficulty
    persona_name: str
    constraints: tuple[Constraint, ...]  # held preferences, in the order the traveler reveals them
    opening: int  # how many of them the opening message states
    asks: int  # ask_preference turns of the seeding dialogue before its first recommendation
    pools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # pool name -> candidate ids

    @property
    def city(self) -> str:
        return self.scenario["city"]

    @property
    def poi_type(self) -> str:
        return self.scenario["poi_type"]

    def pool(self, name: str) -> tuple[str, ...]:
        if name not in POOLS:
            raise ValueError(f"unknown pool {name!r}; expected one of {POOLS}")
        return tuple(self.pools[name])

    def to_dict(self) -> dict[str, Any]:
        return {
            "dialogue_id": self.dialogue_id,
            "split": self.split,
            "scenario": dict(self.scenario),
            "persona_name": self.persona_name,
            "constraints": [c.key for c in self.constraints],
            "opening": self.opening,
            "asks": self.asks,
            "pools": {k: list(v) for k, v in self.pools.items()},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TravelerGoal:
        return cls(
            dialogue_id=d["dialogue_id"],
            split=d["split"],
            scenario=dict(d["scenario"]),
            persona_name=d.get("persona_name", ""),
            constraints=tuple(Constraint.parse(k) for k in d["constraints"]),
            opening=int(d["opening"]),
            asks=int(d["asks"]),
            pools={k: tuple(v) for k, v in d.get("pools", {}).items()},
        )


def pools_of(dialogue: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Every candidate pool of a dialogue record, by pool name."""
    return {name: tuple(dialogue[f]) for name, f in POOL_FIELDS.items()}


class World:
    """The knowledge base and its city x type cells (profiles, satisfaction bitsets), built on first use."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._cells: dict[tuple[str, str], CellIndex] = {}

    def cell(self, city: str, poi_type: str) -> CellIndex:
        key = (city, poi_type)
        cell = self._cells.get(key)
        if cell is None:
            pois = self.kb.pois_in(city, poi_type)
            if not pois:
                raise ValueError(f"the knowledge base has no {poi_type} POIs in {city!r}")
            cell = self._cells[key] = build_cell(city, poi_type, [build_profile(p, self.kb) for p in pois])
        return cell

    # -- the acceptance check ------------------------------------------------------------------------------
    def violations(self, goal: TravelerGoal, poi_id: str) -> list[Constraint]:
        """The held preferences `poi_id` violates, in the goal's order; [] = acceptable.

        A POI outside the goal's city x type cell violates every preference (it is not what was asked for).
        """
        cell = self.cell(goal.city, goal.poi_type)
        i = cell.position(poi_id)
        if i is None:
            return list(goal.constraints)
        return [c for c in goal.constraints if not cell.sat_of(c) >> i & 1]

    def acceptable(self, goal: TravelerGoal, poi_id: str) -> bool:
        return not self.violations(goal, poi_id)

    def targets(self, goal: TravelerGoal, candidates: Iterable[str]) -> list[str]:
        """The candidates that satisfy every held preference, in candidate order."""
        cell = self.cell(goal.city, goal.poi_type)
        mask = cell.mask(goal.constraints)
        return [pid for pid in candidates if (i := cell.position(pid)) is not None and mask >> i & 1]

    def explicit(self, poi_id: str, c: Constraint) -> bool:
        """Whether the data states the violation (an attribute, a known price or distance)."""
        return violation_is_explicit(self.kb.pois[poi_id], c)


def order_violations(
    violated: Sequence[Constraint], stated: Iterable[str], explicit: Mapping[str, bool]
) -> list[Constraint]:
    """The order a traveler names violated preferences in: ones already stated first (the system ignored
    them), then unstated ones; inside each group, violations the data states outright first, then goal order.
    `explicit` maps constraint key -> explicit."""
    said = set(stated)
    return sorted(violated, key=lambda c: (c.key not in said, not explicit.get(c.key, False)))
