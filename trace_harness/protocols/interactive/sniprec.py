"""SnipRec's simulator protocol (§5.1, Table 4): `trace-bench interact --protocol sniprec --data CATALOGUE`.

Seeds: (user, venue) pairs of a catalogue (`trace_harness.protocols.interactive.simulator.sniprec_seeds`: reviews rated 4-5 with a
useful vote, users with 10-99 reviews, maximum bipartite matching, 500 validation / 1,000 test pairs). Each
conversation: the system's fixed first question "Hello, what category of restaurant are you looking for?",
then `turns` (5) rounds of: the seeker answers, the system ranks every catalogue venue and asks its next
question (the system is asked for ask_preference every turn; its ranking is what is scored). Metrics per
turn 0..4: Hits@1/5/10, MRR and average position of the target venue among all catalogue venues, ties
broken at random (seeded). A turn where the system ranks nothing (an LLM baseline asking a question) has no
position, not a chance one: it is counted apart (`n_unranked` of the per-turn table) and in no mean. Any registered pipeline can be the system (the `sniprec` pipeline unchanged).

Logs: dialogue records and predictions like the `trace` protocol's; the target is the gold of every ranked
system turn; the candidate pools are not copied into each record (they are the whole catalogue, named in
the run metadata by its kb_version), and each stored ranking keeps its top STORED_RANKS POIs (the target's
position is computed on the full ranking before that cut).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import SEED
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.prediction import Prediction
from trace_dataset.views import turn_rows
from trace_harness.protocols.base import RunConfig
from trace_harness.protocols.interactive.loop import GENERATOR, _turn, citation_list, new_record
from trace_harness.protocols.interactive.reply import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT_S,
    System,
)
from trace_harness.protocols.interactive.session import InteractiveRun, ReplyLimits
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.seeker import (
    FIRST_QUESTION,
    LLMSeeker,
    Seeker,
    SeekerSimulator,
)
from trace_harness.protocols.interactive.simulator.sniprec_seeds import (
    SeedCriteria,
    SeekerContext,
    catalogue_root,
    load_votes,
    seed_pairs,
    seeker_context,
)
from trace_llm import LLM
from trace_metrics.lib.interactive import target_position, turn_rng

log = logging.getLogger(__name__)

SNIPREC_TURNS = 5
STORED_RANKS = 100
# SnipRec Table 4 (GPT-4o-mini and LLaMA-3.1 70B, k = 500): the reference rows docs/interactive.md shows.
PAPER_TABLE4_SOURCE = "Sun et al., Snippet-based Conversational Recommender System, Table 4"


def load_catalogue(path: str | os.PathLike) -> KnowledgeBase:
    root = catalogue_root(path)
    kb = KnowledgeBase.load(root)
    if not kb.has_text:
        raise TraceDataError("the catalogue has no review texts", path=root)
    return kb


def make_seeker(name: str, world: World, llm: LLM | None = None, seed: int = SEED) -> SeekerSimulator:
    if name == "rules":
        return SeekerSimulator(world, seed)
    if name == "llm":
        if llm is None:
            raise ValueError("the llm simulator needs an LLM (--llm SPEC)")
        return LLMSeeker(world, llm, seed)
    raise ValueError(f"unknown simulator {name!r}; expected rules or llm")


class SeekerDialogue:
    """One SnipRec conversation being built."""

    def __init__(self, seeker: Seeker, catalogue: Sequence[str], metadata: Mapping[str, Any]):
        self.seeker = seeker
        self.catalogue = list(catalogue)
        goal = seeker.goal
        self.target = seeker.context.pair.business_id if seeker.context else ""
        self.record = new_record(goal, metadata)
        self.record["open_set_poi_ids"] = []
        self.predictions: list[dict[str, Any]] = []
        self.turns = self.record["turns"]
        self.turns.append(_turn(0, "system", "ask_preference", FIRST_QUESTION))
        fixed = {"interactive": {"fixed_question": True, "requested_action": "ask_preference"}}
        self.predictions.append(Prediction(goal.dialogue_id, 0, (), FIRST_QUESTION, {}, fixed).to_dict())
        self.question = FIRST_QUESTION
        self.log: list[dict[str, Any]] = []

    def add_answer(self, ut) -> None:
        tid = len(self.turns)
        self.turns.append(_turn(tid, "user", ut.action, ut.text))
        self.log.append({"turn_id": tid, "action": ut.action, **ut.meta})

    def row(self) -> dict[str, Any]:
        placeholder = _turn(len(self.turns), "system", "ask_preference", "")
        probe = {**self.record, "open_set_poi_ids": self.catalogue, "turns": [*self.turns, placeholder]}
        return list(turn_rows(probe, "open"))[-1]

    def add_system(self, row: Mapping[str, Any], reply, turn: int, seed: int, kb: KnowledgeBase) -> None:
        tid = int(row["turn_id"])
        self.turns.append(
            _turn(
                tid,
                "system",
                reply.action,
                reply.response,
                (),
                [self.target],
                citation_list(reply.citations, kb),
            )
        )
        rng = turn_rng(seed, self.record["dialogue_id"], turn)
        ranked = reply.ranked_poi_ids if reply.lost is None else []
        # a system that ranks nothing (the LLM baselines asking a question) has no position: every venue would
        # tie and the target's place be chance; the turn is counted as unranked instead (`n_unranked`)
        unranked = reply.lost is None and not reply.ranked_poi_ids
        position = (
            None if unranked else target_position(ranked, [self.target], self.catalogue, rng, reply.scores)
        )
        info = {
            "turn": turn,
            "requested_action": row["action"],
            "target_position": position,
            "n_targets": 1,
            "n_candidates": len(self.catalogue),
            "ranked": len(reply.ranked_poi_ids),
        }
        meta = {**reply.meta, "interactive": {**info, "unranked": True} if unranked else info}
        ranked_kept = tuple(reply.ranked_poi_ids[:STORED_RANKS])
        self.predictions.append(
            Prediction(
                self.record["dialogue_id"], tid, ranked_kept, reply.response, dict(reply.citations), meta
            ).to_dict()
        )
        self.question = reply.response

    def item(self) -> dict[str, Any]:
        ctx: SeekerContext | None = self.seeker.context
        return {
            "record": self.record,
            "predictions": self.predictions,
            "traveler": {
                "goal": self.seeker.goal.to_dict() | {"pools": {}},
                "turns": self.log,
                "context": ctx.to_dict() if ctx else None,
            },
        }


def converse_sniprec(
    system: System,
    sim: SeekerSimulator,
    contexts: Sequence[SeekerContext],
    catalogue: Sequence[str],
    *,
    turns: int,
    seed: int,
    metadata: Mapping[str, Any],
) -> list[SeekerDialogue]:
    seekers = sim.start(contexts, catalogue)
    dialogues = [SeekerDialogue(s, catalogue, metadata) for s in seekers]
    for turn in range(turns):
        for d, ut in zip(dialogues, sim.answer(seekers, [d.question for d in dialogues]), strict=True):
            d.add_answer(ut)
        rows = [d.row() for d in dialogues]
        replies = system.respond(rows)
        for d, row, reply in zip(dialogues, rows, replies, strict=True):
            d.add_system(row, reply, turn, seed, sim.world.kb)
    return dialogues


class SnipRecRun(InteractiveRun):
    """SnipRec's protocol: seekers seeded from (user, venue) pairs of a catalogue, the whole catalogue ranked
    every turn (module docstring)."""

    name = "sniprec"
    bar_prefix = "sniprec"
    sim: SeekerSimulator

    def __init__(
        self,
        system: str | System,
        config: RunConfig,
        out: str | os.PathLike,
        *,
        turns: int = SNIPREC_TURNS,
        criteria: SeedCriteria | None = None,
        **options: Any,
    ):
        n = config.limit
        if turns < 1 or (n is not None and n < 1):
            raise ValueError(f"need turns >= 1 and n >= 1; got {turns}, {n}")
        super().__init__(system, config, Path(out), turns=turns, **options)
        self.criteria = criteria or SeedCriteria()

    def prepare(self) -> KnowledgeBase:
        config, criteria = self.config, self.criteria
        kb = load_catalogue(config.data)
        world = World(kb)
        votes = load_votes(kb)
        by_review = {v.review_id: v for v in votes}
        self.pairs = pairs = config.units(seed_pairs(votes, criteria, split=config.split, seed=config.seed))
        if not pairs:
            raise TraceDataError(
                f"no (user, venue) seed pair meets {criteria} in split {config.split!r} (the matching has "
                "fewer pairs than the validation slice?)",
                path=kb.root,
            )
        self.units = [seeker_context(kb, p, by_review) for p in pairs]
        self.catalogue = list(kb.pois)
        self.sim = make_seeker(self.simulator, world, self.llm, config.seed)
        return kb

    def identity_fields(self) -> dict[str, Any]:
        config, criteria = self.config, self.criteria
        return {
            "turns": self.turns,
            "n": config.limit,
            "seed": config.seed,
            "criteria": {
                "min_stars": criteria.min_stars,
                "min_useful": criteria.min_useful,
                "user_reviews": list(criteria.user_reviews),
            },
            "kb_version": self.kb.version,
        }

    def meta_fields(self) -> dict[str, Any]:
        kb = self.kb
        return {
            "catalogue": str(Path(kb.root or "").absolute()),
            "catalogue_source": kb.meta.get("source", ""),
            "kb_version": kb.version,
            "n_candidates": len(self.catalogue),
            "n_seed_pairs": len(self.pairs),
            "split": self.config.split,
            "turns": self.turns,
        }

    def run_fields(self) -> dict[str, Any]:
        return {
            "split": self.config.split,
            "turns": self.turns,
            "seed": self.config.seed,
            "kb_version": self.kb.version,
            "catalogue_source": self.meta["catalogue_source"],
            "n_candidates": len(self.catalogue),
        }

    def generator_label(self) -> str:
        return f"{GENERATOR} (sniprec protocol, {self.sim.name} seeker)"

    def unit_id(self, unit: SeekerContext) -> str:
        return f"sniprec_{unit.pair.index + 1:05d}"

    def converse(self, chunk: Sequence[SeekerContext], system: System) -> list[dict[str, Any]]:
        dialogues = converse_sniprec(
            system,
            self.sim,
            chunk,
            self.catalogue,
            turns=self.turns,
            seed=self.config.seed,
            metadata=self.metadata,
        )
        return [d.item() for d in dialogues]

    def poi_names(self) -> dict[str, str]:
        return {pid: self.kb.pois[pid].name for pid in self.catalogue}


def run_sniprec(
    system: str | System,
    data: str | os.PathLike,
    out: str | os.PathLike,
    *,
    simulator: str = "rules",
    llm: LLM | None = None,
    turns: int = SNIPREC_TURNS,
    n: int | None = None,
    split: str = "test",
    seed: int = SEED,
    criteria: SeedCriteria | None = None,
    params: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    concurrency: int = DEFAULT_CONCURRENCY,
    batch_dialogues: int = 64,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    overwrite: bool = False,
    progress: bool = True,
    n_boot: int = 10_000,
) -> dict[str, Any]:
    """SnipRec's protocol end to end (SnipRecRun); returns metrics.json's content."""
    run = SnipRecRun(
        system,
        RunConfig(Path(data), split=split, limit=n, seed=seed),
        out,
        turns=turns,
        criteria=criteria,
        simulator=simulator,
        llm=llm,
        params=params,
        limits=ReplyLimits(timeout, concurrency, max_reply_bytes),
        batch_dialogues=batch_dialogues,
        overwrite=overwrite,
        progress=progress,
        n_boot=n_boot,
    )
    return run.run()
