"""The interaction loop of the `trace` protocol: a simulated traveler and a system take turns, in lockstep
over a batch of dialogues (one batched system call and one batched simulator call per turn). Every dialogue
draws from its own RNG, so a batch of one (the sequential loop) gives the same conversations; run.py gives a
system that is not session-isolated batches of one.

Each live conversation is kept as a dialogue record in the project's schema (`schema.DIALOGUE_FEATURES`)
and a prediction row per system turn, so the logs score, browse and convert exactly like teacher-forced
(dialogue, predictions) pairs. The system sees only the turn row `trace_dataset.views.turn_row` builds from
the conversation so far (the gold fields of the row are empty: the traveler's goal never reaches it).

Protocol (documented in docs/interactive.md):
- the traveler opens (greet_and_seek);
- the system is asked for ask_preference as many times as the seeding dialogue asked before its first
  recommendation, then for recommend after every traveler turn, and for farewell after an acceptance;
- the dialogue ends after the system's farewell, or after `max_turns` system turns (then with the
  traveler's last message); an external system may answer with another action (HTTP contract), which is
  recorded, and its farewell ends the dialogue.
Gold of a live recommend/compare turn: the targets (pool POIs that satisfy every held preference). Each
ranked system turn also records the targets' position (random tie-breaking, trace_metrics.lib.interactive).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.prediction import Prediction
from trace_dataset.views import turn_row
from trace_harness.protocols.interactive.reply import System, SystemReply
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World
from trace_harness.protocols.interactive.simulator.rules import Simulator, SystemView, Traveler, UserTurn
from trace_metrics.lib.interactive import target_position, turn_rng

GENERATOR = "trace-bench interactive v1"
RECOMMENDED_PER_ACTION = {"recommend": 1, "compare": 2}


def new_record(goal: TravelerGoal, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """An empty dialogue record (schema field order) for a live conversation seeded from `goal`."""
    return {
        "dialogue_id": goal.dialogue_id,
        "split": goal.split,
        "scenario": dict(goal.scenario),
        "candidate_poi_ids": list(goal.pools.get("closed", ())),
        "pool_16_poi_ids": list(goal.pools.get("pool_16", ())),
        "pool_32_poi_ids": list(goal.pools.get("pool_32", ())),
        "open_set_poi_ids": list(goal.pools.get("open", ())),
        "turns": [],
        "quote_spans": [],
        "metadata": dict(metadata),
    }


def _turn(
    turn_id: int,
    role: str,
    action: str,
    text: str,
    pois: Sequence[str] = (),
    gold: Sequence[str] = (),
    citations: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    return {
        "turn_id": turn_id,
        "role": role,
        "action": action,
        "text": text,
        "referenced_poi_ids": list(pois),
        "referenced_review_ids": [c["review_id"] for c in citations],
        "gold_poi_ids": list(gold),
        "acceptable_alternative_poi_ids": [],
        "citations": list(citations),
    }


def citation_list(citations: Mapping[str, str], kb: KnowledgeBase) -> list[dict[str, str]]:
    """{label: review_id} -> the record's citation objects, in label order."""

    def number(label: str) -> int:
        return int(label[1:]) if label[1:].isdigit() else 0

    return [
        {"label": lab, "review_id": rid, "business_id": kb.review_business.get(rid, "")}
        for lab, rid in sorted(citations.items(), key=lambda kv: number(kv[0]))
    ]


@dataclass
class LiveDialogue:
    goal: TravelerGoal
    traveler: Traveler
    record: dict[str, Any]
    pool: str
    predictions: list[dict[str, Any]] = field(default_factory=list)
    traveler_log: list[dict[str, Any]] = field(default_factory=list)  # hidden side of each user turn
    asks: int = 0
    recommended: bool = False
    done: bool = False

    @property
    def turns(self) -> list[dict[str, Any]]:
        return self.record["turns"]

    @property
    def system_turns(self) -> int:
        return sum(t["role"] == "system" for t in self.turns)

    def add_user(self, ut: UserTurn) -> None:
        tid = len(self.turns)
        self.turns.append(_turn(tid, "user", ut.action, ut.text, ut.poi_ids))
        self.traveler_log.append({"turn_id": tid, "action": ut.action, **ut.meta})

    def next_action(self) -> str:
        last = next((t for t in reversed(self.turns) if t["role"] == "user"), None)
        if last is not None and last["action"] == "accept":
            return "farewell"
        if not self.recommended and self.asks < self.goal.asks:
            return "ask_preference"
        return "recommend"

    def next_row(self) -> dict[str, Any]:
        """The turn row of the next system turn (what the system sees), built by trace_dataset.views."""
        action = self.next_action()
        placeholder = _turn(len(self.turns), "system", action, "")
        probe = {**self.record, "turns": [*self.turns, placeholder]}
        return turn_row(probe, len(self.turns), self.pool)

    def add_system(self, row: Mapping[str, Any], reply: SystemReply, world: World, seed: int) -> None:
        kb = world.kb
        tid = int(row["turn_id"])
        action = reply.action
        k = RECOMMENDED_PER_ACTION.get(action, 0)
        cites = citation_list(reply.citations, kb)
        targets = world.targets(self.goal, row["candidate_poi_ids"]) if action != "farewell" else []
        gold = targets if action in RECOMMENDATION_ACTIONS else []
        self.turns.append(_turn(tid, "system", action, reply.response, reply.ranked_poi_ids[:k], gold, cites))
        meta = dict(reply.meta)
        turn_index = self.system_turns
        if action != "farewell" and reply.lost is None and reply.ranked_poi_ids:
            position = target_position(
                reply.ranked_poi_ids,
                targets,
                row["candidate_poi_ids"],
                turn_rng(seed, self.goal.dialogue_id, turn_index),
                reply.scores,
            )
        elif action != "farewell" and targets:
            position = target_position(
                [], targets, row["candidate_poi_ids"], turn_rng(seed, self.goal.dialogue_id, turn_index)
            )
        else:
            position = None
        meta["interactive"] = {
            "turn": turn_index,
            "requested_action": row["action"],
            "target_position": position,
            "n_targets": len(targets),
            "n_candidates": len(row["candidate_poi_ids"]),
        }
        self.predictions.append(
            Prediction(
                self.goal.dialogue_id,
                tid,
                tuple(reply.ranked_poi_ids),
                reply.response,
                dict(reply.citations),
                meta,
            ).to_dict()
        )
        if action == "ask_preference":
            self.asks += 1
        if action in RECOMMENDATION_ACTIONS:
            self.recommended = True
        if action == "farewell":
            self.done = True

    def view(self) -> SystemView:
        p = self.predictions[-1]
        return SystemView(self.turns[-1]["action"], tuple(p["ranked_poi_ids"]), p["response"])


def converse(
    system: System,
    simulator: Simulator,
    goals: Sequence[TravelerGoal],
    *,
    pool: str,
    max_turns: int,
    seed: int,
    metadata: Mapping[str, Any],
    progress: Any = None,
) -> list[LiveDialogue]:
    """Run one batch of conversations to their end (see the module docstring)."""
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    world = simulator.world
    travelers = simulator.start(goals)
    lives = [LiveDialogue(g, t, new_record(g, metadata), pool) for g, t in zip(goals, travelers, strict=True)]
    for live, ut in zip(lives, simulator.open(travelers), strict=True):
        live.add_user(ut)
    for _ in range(max_turns):
        active = [x for x in lives if not x.done]
        if not active:
            break
        rows = [x.next_row() for x in active]
        replies = system.respond(rows)
        if len(replies) != len(rows):
            raise RuntimeError(f"system {system.name} returned {len(replies)} replies for {len(rows)} turns")
        for live, row, reply in zip(active, rows, replies, strict=True):
            live.add_system(row, reply, world, seed)
        talking = [x for x in active if not x.done]
        answers = simulator.respond([x.traveler for x in talking], [x.view() for x in talking])
        for live, answer in zip(talking, answers, strict=True):
            if answer is None:
                live.done = True
            else:
                live.add_user(answer)
        if progress is not None:
            progress.set_postfix(turn=active[0].system_turns, refresh=False)
    for live in lives:
        live.done = True
    return lives
