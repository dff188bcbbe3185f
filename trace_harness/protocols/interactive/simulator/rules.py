"""Simulators of a traveler: the interface, and `rules` (offline, deterministic, the default).

A simulator keeps one `Traveler` per live dialogue (the hidden goal, what was said, the traveler's words)
and answers system turns in batches, so that an LLM simulator can batch its generation across dialogues.
`rules` words every decision of `policy.decide` with the generator's user-side grammar
(`language.UserLanguage`); every choice comes from an RNG seeded with (seed, dialogue id).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World
from trace_harness.protocols.interactive.simulator.language import UserLanguage
from trace_harness.protocols.interactive.simulator.party import SimulatedUser
from trace_harness.protocols.interactive.simulator.policy import (
    Decision,
    TravelerState,
    decide,
    decision_meta,
    opening,
    topics_sha256,
)

SIMULATOR_VERSION = "trace-bench traveler simulator v1"


class SystemView(NamedTuple):
    """What a traveler perceives of a system turn: its action, its ranking and its text."""

    action: str
    ranked: tuple[str, ...]
    text: str


@dataclass
class UserTurn:
    """One traveler message. `meta` holds the hidden side (form, preferences stated), for the goals log."""

    action: str
    text: str
    poi_ids: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Traveler:
    state: TravelerState
    language: UserLanguage
    transcript: list[tuple[str, str]] = field(default_factory=list)  # (role, text), for an LLM's context

    @property
    def goal(self) -> TravelerGoal:
        return self.state.goal


def make_traveler(goal: TravelerGoal, world: World, seed: int) -> Traveler:
    s = goal.scenario
    rng = random.Random(f"{seed}:interactive:{goal.dialogue_id}")
    language = UserLanguage(
        s["persona_type"],
        s["persona"],
        goal.persona_name,
        s["travel_context"],
        s["city"],
        s["poi_type"],
        s.get("difficulty", ""),
        world.cell(s["city"], s["poi_type"]),
        world.kb,
        rng,
    )
    return Traveler(TravelerState(goal), language)


def rules_text(t: Traveler, d: Decision) -> str:
    """The generator's wording of a decision."""
    lang = t.language
    if d.form == "greet":
        return lang.greet(d.constraints)
    if d.form == "answer":
        return lang.answer(d.constraints)
    if d.form == "priority":
        return lang.priority(d.constraints[0]) if d.constraints else lang.nudge(t.goal.poi_type)
    if d.form == "nudge":
        return lang.nudge(t.goal.poi_type, d.constraints)
    if d.poi_id is None:
        raise ValueError(f"decision {d.form!r} needs a POI")
    if d.form == "reject":
        return lang.reject(d.poi_id, d.constraints[0])
    if d.form == "accept":
        return lang.accept(d.poi_id)
    raise ValueError(f"unknown decision form {d.form!r}")


class Simulator(SimulatedUser):
    """Base: start travelers, open dialogues, answer system turns (batched). Subclasses word decisions."""

    def start(self, goals: Sequence[TravelerGoal]) -> list[Traveler]:
        return [make_traveler(g, self.world, self.seed) for g in goals]

    def open(self, travelers: Sequence[Traveler]) -> list[UserTurn]:
        decisions = [opening(t.state) for t in travelers]
        return self._turns(travelers, decisions)

    def respond(self, travelers: Sequence[Traveler], views: Sequence[SystemView]) -> list[UserTurn | None]:
        """One user turn per traveler after the system turn it saw (None where the dialogue is over)."""
        if len(travelers) != len(views):
            raise ValueError(f"{len(travelers)} travelers but {len(views)} system turns")
        decisions = []
        for t, v in zip(travelers, views, strict=True):
            t.transcript.append(("system", v.text))
            decisions.append(decide(t.state, self.world, v.action, list(v.ranked), v.text))
        live = [(t, d) for t, d in zip(travelers, decisions, strict=True) if d is not None]
        turns = iter(self._turns([t for t, _ in live], [d for _, d in live]))
        return [None if d is None else next(turns) for d in decisions]

    def _turns(self, travelers: Sequence[Traveler], decisions: Sequence[Decision]) -> list[UserTurn]:
        texts = self.words(travelers, decisions)
        out = []
        for t, d, (text, extra) in zip(travelers, decisions, texts, strict=True):
            t.state.record(d)
            t.transcript.append(("user", text))
            out.append(
                UserTurn(d.action, text, (d.poi_id,) if d.poi_id else (), {**decision_meta(d), **extra})
            )
        return out

    def words(
        self, travelers: Sequence[Traveler], decisions: Sequence[Decision]
    ) -> list[tuple[str, dict[str, Any]]]:
        """(text, extra meta) of every decision."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """Settings only: what happened (decisions, fallbacks) is counted from the logs (report.traveler_counts)."""
        return {
            "simulator": self.name,
            "version": SIMULATOR_VERSION,
            "seed": self.seed,
            "topics_sha256": topics_sha256(),
        }


class RulesSimulator(Simulator):
    """Offline and deterministic: the generator's user-side language."""

    name = "rules"

    def words(
        self, travelers: Sequence[Traveler], decisions: Sequence[Decision]
    ) -> list[tuple[str, dict[str, Any]]]:
        return [(rules_text(t, d), {}) for t, d in zip(travelers, decisions, strict=True)]
