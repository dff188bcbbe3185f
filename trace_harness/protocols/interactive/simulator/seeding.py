"""Seed travelers from corpus dialogues: recover each dialogue's hidden preferences from the generator itself.

A dialogue record carries the text of what the user said, not the constraints behind it. The generator is
deterministic (every dialogue draws from an RNG seeded with (seed, index, attempt), cells and personas are
assigned for the whole corpus up front), so the plan a record was rendered from can be rebuilt exactly from
corpus.json's parameters (n, seed, max_attempts) and the knowledge base: plan attempts are replayed until
one matches the record's structure (pools, persona, every turn's role, action, POIs, gold and
alternatives). Nothing is parsed back out of text, and a record the generator did not make is an error,
never a guess.

The goal keeps the plan's final constraints (after any Expert-tier revision) in the order the user stated
them; the opening message states those the plan's greeting stated.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from trace_dataset.datadir import corpus_meta
from trace_dataset.generate.attempts import Context, plan_for, total_attempts
from trace_dataset.generate.index import CellIndex
from trace_dataset.generate.plan import DialoguePlan
from trace_dataset.generate.scenario import assign
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World, pools_of

log = logging.getLogger(__name__)

_POOL_ATTRS = {
    "candidate_poi_ids": "candidates",
    "pool_16_poi_ids": "pool_16",
    "pool_32_poi_ids": "pool_32",
    "open_set_poi_ids": "open_set",
}


def dialogue_index(dialogue_id: str) -> int:
    """crs_yelp_00042 -> 41 (the generator's 0-based index)."""
    head, _, number = dialogue_id.rpartition("_")
    if not head or not number.isdigit() or int(number) < 1:
        raise TraceDataError(f"dialogue_id {dialogue_id!r} is not a generator id (crs_yelp_NNNNN)")
    return int(number) - 1


def plan_matches(plan: DialoguePlan, record: Mapping[str, Any]) -> bool:
    """Whether `record` was rendered from `plan`: pools, persona and the structure of every turn agree."""
    if any(list(getattr(plan, attr)) != list(record[f]) for f, attr in _POOL_ATTRS.items()):
        return False
    if plan.persona != record["scenario"]["persona"] or len(plan.turns) != len(record["turns"]):
        return False
    for pt, t in zip(plan.turns, record["turns"], strict=True):
        if (pt.role, pt.action) != (t["role"], t["action"]) or list(pt.pois) != list(t["referenced_poi_ids"]):
            return False
        if list(pt.gold) != list(t["gold_poi_ids"]) or list(pt.alternatives) != list(
            t["acceptable_alternative_poi_ids"]
        ):
            return False
    return True


def goal_from_plan(plan: DialoguePlan, record: Mapping[str, Any]) -> TravelerGoal:
    final = plan.turns[-1].active
    order = [c for c in plan.stated if c in final] + [c for c in final if c not in plan.stated]
    greet = plan.turns[0].new if plan.turns else ()
    opening = sum(1 for c in greet if c in final)
    asks = 0
    for t in plan.turns:
        if t.action in ("recommend", "compare"):
            break
        asks += t.action == "ask_preference"
    return TravelerGoal(
        dialogue_id=record["dialogue_id"],
        split=record["split"],
        scenario=dict(record["scenario"]),
        persona_name=plan.persona_name,
        constraints=tuple(order),
        opening=opening,
        asks=max(1, asks),
        pools=pools_of(record),
    )


class CorpusSeeder:
    """Rebuilds the plans of a generated corpus (see the module docstring)."""

    def __init__(self, data_dir: str | os.PathLike, kb: KnowledgeBase, world: World | None = None):
        meta = corpus_meta(data_dir)
        params = meta.get("parameters") if isinstance(meta.get("parameters"), dict) else None
        if not params or "n" not in params or "seed" not in params:
            raise TraceDataError(
                "interactive seeding needs corpus.json with the generator's parameters (n, seed): rebuild the "
                "dialogues' hidden preferences is only possible for a corpus made by `trace-bench corpus generate` "
                "(or its release, hydrated)",
                path=data_dir,
            )
        self.kb = kb
        self.world = world or World(kb)
        self.n_total = int(params["n"])
        self.seed = int(params["seed"])
        self.max_attempts = int(params.get("max_attempts") or 50)
        keys = sorted({(p.city, p.poi_type) for p in kb.pois.values()})
        self.ctx = Context(
            kb=kb,
            cells=_LazyCells(self.world),
            ngrams=None,
            assignments=assign(self.n_total, keys, self.seed),
            splits=[],
            seed=self.seed,
            kb_version=kb.version,
            max_attempts=self.max_attempts,
        )
        self.attempts: Counter = Counter()

    def goal(self, record: Mapping[str, Any]) -> TravelerGoal:
        did = record["dialogue_id"]
        index = dialogue_index(did)
        if index >= self.n_total:
            raise TraceDataError(
                f"dialogue {did}: index {index + 1} is beyond corpus.json's n={self.n_total}"
            )
        a = self.ctx.assignments[index]
        scen = record["scenario"]
        if (a.city, a.poi_type, a.persona_type) != (scen["city"], scen["poi_type"], scen["persona_type"]):
            raise TraceDataError(
                f"dialogue {did}: the generator assigns {a.city} x {a.poi_type} ({a.persona_type}) to this id, the "
                f"record says {scen['city']} x {scen['poi_type']} ({scen['persona_type']}); was it generated with "
                "this corpus.json and knowledge base?"
            )
        reasons: Counter = Counter()
        for attempt in range(total_attempts(self.ctx, index)):
            planned = plan_for(self.ctx, index, attempt, reasons)
            if planned is not None and plan_matches(planned[0], record):
                self.attempts[attempt + 1] += 1
                return goal_from_plan(planned[0], record)
        raise TraceDataError(
            f"dialogue {did}: no generator plan matches the record (tried {total_attempts(self.ctx, index)} attempts); "
            "its hidden preferences cannot be recovered. Was it generated with this corpus.json and knowledge base?"
        )

    def goals(self, records: Iterable[Mapping[str, Any]]) -> Iterator[TravelerGoal]:
        for record in records:
            yield self.goal(record)


class _LazyCells(dict[tuple[str, str], CellIndex]):
    """The generator context's `cells`: built from the world on first use (only the cells the seeds need)."""

    def __init__(self, world: World):
        super().__init__()
        self.world = world

    def __missing__(self, key: tuple[str, str]) -> CellIndex:
        cell = self.world.cell(*key)
        self[key] = cell
        return cell
