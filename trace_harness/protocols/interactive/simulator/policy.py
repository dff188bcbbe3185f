"""What the traveler does next: the decision both simulators share (the `llm` one only words it).

Rules (documented in docs/interactive.md):
- Opening (greet_and_seek): the preferences the seeding dialogue's greeting stated.
- After a question (ask_preference, or any system turn that recommends nothing): one preference not yet
  stated, preferring the kind the question asks about (`topics.json`; the kind named earliest in the
  question wins, then the goal's order); with nothing left to state, repeat the first preference as a
  priority (provide_preference).
- After a recommendation (recommend / compare): the system's top-1 POI is judged by the goal's check. It
  satisfies every held preference -> accept. Otherwise reject_and_refine naming one violated preference:
  ones already stated first (the system ignored them), then unstated ones; inside each group violations the
  data states outright first, then the goal's order. A recommendation turn with an empty ranking gets a
  nudge (ask again, adding the next unstated preference if any).
- After farewell: nothing (the dialogue is over).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.generate.preferences.constraints import Constraint
from trace_dataset.io import sha256_text
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World, order_violations

TOPICS_FILE = "topics.json"


@lru_cache(maxsize=1)
def _topics_text() -> str:
    return (
        resources.files("trace_harness.protocols.interactive.simulator")
        .joinpath(TOPICS_FILE)
        .read_text(encoding="utf-8")
    )


@lru_cache(maxsize=1)
def topic_patterns() -> dict[str, re.Pattern[str]]:
    """Preference kind -> one pattern over its question words (word boundaries, case-insensitive)."""
    topics = json.loads(_topics_text())["topics"]
    return {
        kind: re.compile(
            r"(?<![\w-])(?:"
            + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
            + r")(?![\w-])",
            re.IGNORECASE,
        )
        for kind, words in topics.items()
    }


def topics_sha256() -> str:
    return sha256_text(_topics_text())


def asked_kinds(question: str) -> list[str]:
    """Preference kinds a question asks about, in order of first mention."""
    found = []
    for kind, pattern in topic_patterns().items():
        m = pattern.search(question)
        if m:
            found.append((m.start(), kind))
    return [k for _, k in sorted(found)]


@dataclass(frozen=True)
class Decision:
    """One traveler move: the user action, the POI it is about, the preferences it states, and its form."""

    action: str  # greet_and_seek | provide_preference | reject_and_refine | accept
    form: str  # greet | answer | priority | nudge | reject | accept
    poi_id: str | None = None
    constraints: tuple[Constraint, ...] = ()


@dataclass
class TravelerState:
    """What one traveler has said so far (simulator side)."""

    goal: TravelerGoal
    stated: list[str] = field(default_factory=list)  # constraint keys, in order of first statement
    rejected: list[str] = field(default_factory=list)
    accepted: str | None = None

    def unstated(self) -> list[Constraint]:
        said = set(self.stated)
        return [c for c in self.goal.constraints if c.key not in said]

    def record(self, d: Decision) -> None:
        for c in d.constraints:
            if c.key not in self.stated:
                self.stated.append(c.key)
        if d.action == "reject_and_refine" and d.poi_id is not None:
            self.rejected.append(d.poi_id)
        if d.action == "accept":
            self.accepted = d.poi_id


def opening(state: TravelerState) -> Decision:
    return Decision("greet_and_seek", "greet", None, tuple(state.goal.constraints[: state.goal.opening]))


def answer_to(state: TravelerState, question: str) -> Decision:
    left = state.unstated()
    if left:
        for kind in asked_kinds(question):
            match = next((c for c in left if c.kind == kind), None)
            if match is not None:
                return Decision("provide_preference", "answer", None, (match,))
        return Decision("provide_preference", "answer", None, (left[0],))
    first = state.goal.constraints[:1]
    return Decision("provide_preference", "priority", None, first)


def decide(
    state: TravelerState,
    world: World,
    system_action: str,
    ranked: list[str] | tuple[str, ...],
    system_text: str,
) -> Decision | None:
    """The traveler's next move after a system turn (None after farewell: the dialogue is over)."""
    if system_action == "farewell":
        return None
    if system_action not in RECOMMENDATION_ACTIONS:
        return answer_to(state, system_text)
    if not ranked:
        return Decision("provide_preference", "nudge", None, tuple(state.unstated()[:1]))
    poi = ranked[0]
    violated = world.violations(state.goal, poi)
    if not violated:
        return Decision("accept", "accept", poi)
    if poi not in world.kb.pois:  # not a POI at all: nothing the data can state about it
        explicit: dict[str, bool] = {}
    else:
        explicit = {c.key: world.explicit(poi, c) for c in violated}
    c = order_violations(violated, state.stated, explicit)[0]
    return Decision("reject_and_refine", "reject", poi, (c,))


def decision_meta(d: Decision) -> dict[str, Any]:
    return {"form": d.form, "stated": [c.key for c in d.constraints]}
