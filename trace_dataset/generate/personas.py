"""Persona data of App. I: the 47 archetypes, their travel contexts and wants, the POI-type-specific pools
(38 archetypes per type), names and ages, and the detail modifiers appended with 30% probability.

Each archetype's `wants` are constraint keys in rough priority order; the planner draws the user's
preferences from them (filtered to what the POI type and the city x type cell can express), so a persona
yields concrete, checkable preferences.

The tables are data: personas.json beside this module (`archetypes`; `excluded`, the nine archetypes that fit
each POI type least; `first_names`; `modifiers`), read on first use; corpus.json records its SHA-256
(`trace_dataset.datafiles`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from trace_dataset.constants import PERSONA_TYPES, PERSONAS_PER_TYPE, POI_TYPES
from trace_dataset.datafiles import read_table

PERSONAS_FILE = Path(__file__).with_name("personas.json")


@dataclass(frozen=True)
class Archetype:
    name: str
    label: str  # how the persona is described ("a date-night planner")
    wants: tuple[str, ...]  # constraint keys, priority order (kind:value; "location" / "category" generic)
    contexts: tuple[str, ...]  # travel contexts
    intros: tuple[str, ...]  # first-person self introductions
    ages: tuple[int, int]
    voice: str  # "casual" | "warm" | "brisk" | "formal": picks greeting / thanks phrasing


@dataclass(frozen=True)
class Modifier:
    text: str  # appended to the persona description ("who uses a wheelchair")
    want: str  # the constraint key it implies
    types: tuple[str, ...]


@dataclass(frozen=True)
class Personas:
    archetypes: dict[str, Archetype]  # by name, in file order
    type_pools: dict[str, tuple[str, ...]]  # POI type -> its 38 archetypes, in constants.PERSONA_TYPES order
    first_names: tuple[str, ...]
    modifiers: tuple[Modifier, ...]


@functools.cache
def personas() -> Personas:
    """The persona tables, read from personas.json once."""
    table = read_table(PERSONAS_FILE)
    archetypes = {a["name"]: Archetype(**a) for a in table["archetypes"]}
    # App. I: POI-type-specific pools of 38 archetypes each (47 minus the nine that fit the type least)
    excluded = table["excluded"]
    pools = {t: tuple(p for p in PERSONA_TYPES if p not in excluded[t]) for t in POI_TYPES}
    modifiers = tuple(Modifier(**m) for m in table["modifiers"])
    return Personas(archetypes, pools, table["first_names"], modifiers)


def check_pools() -> None:
    """The persona tables agree with constants (47 archetypes, 38 per type, every archetype used)."""
    archetypes, pools = personas().archetypes, personas().type_pools
    missing = set(PERSONA_TYPES) - set(archetypes)
    extra = set(archetypes) - set(PERSONA_TYPES)
    if missing or extra:
        raise ValueError(
            f"persona archetypes differ from constants.PERSONA_TYPES: missing {sorted(missing)}, "
            f"extra {sorted(extra)}"
        )
    for t, pool in pools.items():
        if len(pool) != PERSONAS_PER_TYPE:
            raise ValueError(
                f"persona pool of {t!r} has {len(pool)} archetypes; expected {PERSONAS_PER_TYPE}"
            )
    unused = set(PERSONA_TYPES) - {p for pool in pools.values() for p in pool}
    if unused:
        raise ValueError(f"archetypes in no POI-type pool: {sorted(unused)}")
