"""The dialogue plan both backends render: per turn the action, the constraints the user states, the POIs
named, the gold and the computed alternatives. Stages 1-2 produce it; stage 3 turns it into text."""

from __future__ import annotations

from dataclasses import dataclass, field

from trace_dataset.generate.preferences.constraints import Constraint


class PlanError(Exception):
    """This attempt cannot produce a valid dialogue; `reason` is counted in the report."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass
class PlannedTurn:
    role: str
    action: str
    new: tuple[Constraint, ...] = ()  # constraints the user states in this turn
    revised: tuple[tuple[Constraint, Constraint], ...] = ()  # (old, new): a conflicting revision (Expert)
    focus: Constraint | None = None  # ask_preference: the topic; provide_preference w/o new: the priority
    pois: tuple[str, ...] = ()  # POIs named in the text (system: favoured first)
    gold: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()
    active: tuple[Constraint, ...] = ()  # constraints in force after this turn
    rejected: tuple[str, ...] = ()  # POIs rejected before this turn

    @property
    def stated(self) -> tuple[Constraint, ...]:
        return self.new + tuple(n for _, n in self.revised)


@dataclass
class DialoguePlan:
    index: int
    city: str
    poi_type: str
    tier: str
    persona_type: str
    persona: str
    persona_name: str
    travel_context: str
    modifier: str
    turns: list[PlannedTurn] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    pool_16: list[str] = field(default_factory=list)
    pool_32: list[str] = field(default_factory=list)
    open_set: list[str] = field(default_factory=list)

    @property
    def stated(self) -> list[Constraint]:
        out: list[Constraint] = []
        for t in self.turns:
            out.extend(c for c in t.stated if c not in out)
        return out

    @property
    def rejections(self) -> int:
        return sum(t.action == "reject_and_refine" for t in self.turns)

    @property
    def conflict(self) -> bool:
        return any(t.revised for t in self.turns)

    @property
    def recommended(self) -> list[str]:
        out: list[str] = []
        for t in self.turns:
            if t.action in ("recommend", "compare"):
                out.extend(p for p in t.pois if p not in out)
        return out
