"""The `trace` protocol (`TraceRun`, `run_interactive`): seed travelers from a corpus split, let them talk to a
system, write logs and metrics (the set-up every interactive protocol shares: session.py).

Dialogues run in chunks of `batch_dialogues`, in lockstep inside a chunk (turn t of every live dialogue of
the chunk in one system call, so a dense model encodes the chunk's queries in one batch); each finished
chunk is appended to the progress file, so an interrupted run resumes (output.py). The output is identical
for any chunk size, 1 (the sequential loop) included, with the rules simulator and a session-isolated
system (every dialogue draws from its own RNG; tests/trace_harness/protocols/interactive/test_interactive_lockstep.py). A system
that is not session-isolated (Memory-Aug.) runs its dialogues one at a time, in order, whatever the
chunk size.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import POOLS, SEED, SPLITS
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    corpus_version,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import TraceDataError, sha256_file
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.shards import Shard
from trace_harness.protocols.base import RunConfig
from trace_harness.protocols.interactive.loop import GENERATOR, LiveDialogue, converse
from trace_harness.protocols.interactive.output import read_outputs
from trace_harness.protocols.interactive.reply import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT_S,
    System,
)
from trace_harness.protocols.interactive.session import InteractiveRun, ReplyLimits
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator, Simulator
from trace_harness.protocols.interactive.simulator.seeding import CorpusSeeder
from trace_harness.protocols.interactive.validity.report import build_report, write_report
from trace_llm import LLM

log = logging.getLogger(__name__)

SIMULATORS: tuple[str, ...] = ("rules", "llm")
DEFAULT_TURNS = 8
DEFAULT_BATCH_DIALOGUES = 64
COUNTERFACTUAL_DIR = "counterfactual"  # OUT/counterfactual/<bad system>/: the counterfactual check's runs


def load_data_kb(data_dir: str | os.PathLike, kb: KnowledgeBase | None = None) -> KnowledgeBase:
    """The knowledge base of a data directory (or `kb`, already loaded from it), refused without review texts."""
    kb = KnowledgeBase.load(kb_dir(data_dir)) if kb is None else kb
    if not kb.has_text:
        raise TraceDataError(
            "the knowledge base has no review texts: the traveler's preferences are checked against "
            "reviews and systems quote them; hydrate the release first (trace-bench corpus hydrate)",
            path=kb_dir(data_dir),
        )
    return kb


def seeded_goals(config: RunConfig, kb: KnowledgeBase, world: World) -> list[TravelerGoal]:
    """Travelers of the dialogues of the run's split it covers (`config.units`), in corpus order."""
    return seeded_share(config, kb, world)[0]


def seeded_share(
    config: RunConfig, kb: KnowledgeBase, world: World
) -> tuple[list[TravelerGoal], dict[str, Any] | None]:
    """(the travelers of the dialogues the run covers, the shard's record when sharded: `config.select`)."""
    records, shard = config.select(iter_dialogues(config.data, config.split), key=lambda d: d["dialogue_id"])
    goals = list(CorpusSeeder(config.data, kb, world).goals(records))
    if not goals and (shard is None or records):
        raise TraceDataError(
            f"split {config.split!r} holds no dialogues to seed travelers from", path=config.data
        )
    return goals, shard


def seed_goals(
    data_dir: str | os.PathLike, kb: KnowledgeBase, world: World, split: str, n: int | None
) -> list[TravelerGoal]:
    """Travelers of the first `n` dialogues of `split` (all with None), in corpus order."""
    return seeded_goals(RunConfig(Path(data_dir), split=split, limit=n), kb, world)


def seed_travellers(
    data_dir: str | os.PathLike, split: str = "test", n: int | None = None, kb: KnowledgeBase | None = None
) -> tuple[KnowledgeBase, list[TravelerGoal]]:
    """The knowledge base (`kb` when given, loaded from the data directory) and the travelers of `split` (as
    `run_interactive` seeds them), for several runs to share (`run_interactive(..., kb=kb, goals=goals)`): the
    caller never touches the simulator itself."""
    kb = load_data_kb(data_dir, kb)
    return kb, seed_goals(data_dir, kb, World(kb), split, n)


def make_simulator(name: str, world: World, llm: LLM | None = None, seed: int = SEED) -> Simulator:
    if name == "rules":
        return RulesSimulator(world, seed)
    if name == "llm":
        if llm is None:
            raise ValueError("the llm simulator needs an LLM (--llm SPEC)")
        from trace_harness.protocols.interactive.simulator.llm import LLMSimulator

        return LLMSimulator(world, llm, seed)
    raise ValueError(f"unknown simulator {name!r}; expected one of {SIMULATORS}")


def travelers(
    data_dir: str | os.PathLike,
    kb: KnowledgeBase,
    *,
    split: str,
    n: int | None,
    simulator: str = "rules",
    llm: LLM | None = None,
    seed: int = SEED,
) -> tuple[World, list[TravelerGoal], Simulator]:
    """The world, the seeded travelers of `split` and the simulator that plays them, as `run_interactive` sets
    them up (for callers above the harness's interactive package, which alone reaches the simulator)."""
    world = World(kb)
    return world, seed_goals(data_dir, kb, world, split, n), make_simulator(simulator, world, llm, seed)


def dialogue_item(live: LiveDialogue) -> dict[str, Any]:
    return {
        "record": live.record,
        "predictions": live.predictions,
        "traveler": {"goal": live.goal.to_dict(), "turns": live.traveler_log},
    }


class TraceRun(InteractiveRun):
    """The `trace` protocol: travellers seeded from the dialogues of a split talk to the system over one
    candidate pool (module docstring)."""

    name = "trace"
    bar_prefix = "interact"
    sim: Simulator

    def __init__(
        self,
        system: str | System,
        config: RunConfig,
        out: str | os.PathLike,
        *,
        turns: int = DEFAULT_TURNS,
        batch_dialogues: int = DEFAULT_BATCH_DIALOGUES,
        kb: KnowledgeBase | None = None,
        goals: list[TravelerGoal] | None = None,
        counterfactual: bool = False,
        **options: Any,
    ):
        if config.split not in SPLITS:
            raise ValueError(f"unknown split {config.split!r}; expected one of {SPLITS}")
        if config.pool not in POOLS:
            raise ValueError(f"unknown pool {config.pool!r}; expected one of {POOLS}")
        n = config.limit
        if turns < 1 or (n is not None and n < 1) or batch_dialogues < 1:
            raise ValueError(
                f"need turns >= 1, n >= 1 and batch_dialogues >= 1; got {turns}, {n}, {batch_dialogues}"
            )
        super().__init__(system, config, Path(out), turns=turns, batch_dialogues=batch_dialogues, **options)
        self.given_kb, self.goals, self.counterfactual = kb, goals, counterfactual

    def prepare(self) -> KnowledgeBase:
        config = self.config
        self.root = root = check_data_dir(config.data, (config.split,))
        kb = load_data_kb(root) if self.given_kb is None else self.given_kb
        self.world = world = World(kb)
        if self.goals is not None and config.shard is not None:
            raise ValueError("a sharded run seeds its own travelers: give goals or a shard, not both")
        if self.goals is not None:
            self.units = self.goals
        else:
            self.units, self.shard = seeded_share(dataclasses.replace(config, data=root), kb, world)
        self.sim = make_simulator(self.simulator, world, self.llm, config.seed)
        return kb

    def identity_fields(self) -> dict[str, Any]:
        config = self.config
        return {
            "pool": config.pool,
            "turns": self.turns,
            "n": config.limit,
            "seed": config.seed,
            "data_file": sha256_file(split_file(self.root, config.split)),
            "kb_version": self.kb.version,
        }

    def meta_fields(self) -> dict[str, Any]:
        return {
            "data_dir": str(self.root.absolute()),
            "corpus_version": corpus_version(corpus_meta(self.root)),
            "kb_version": self.kb.version,
            "split": self.config.split,
            "pool": self.config.pool,
            "turns": self.turns,
            "n_dialogues": len(self.units),
        }

    def run_fields(self) -> dict[str, Any]:
        config = self.config
        return {
            "session_isolated": self.desc.get("session_isolated"),
            "split": config.split,
            "pool": config.pool,
            "turns": self.turns,
            "seed": config.seed,
            "kb_version": self.kb.version,
            "corpus_version": self.meta["corpus_version"],
        }

    def generator_label(self) -> str:
        return f"{GENERATOR} ({self.sim.name} simulator)"

    def unit_id(self, unit: TravelerGoal) -> str:
        return unit.dialogue_id

    def chunk_size(self, system: System) -> int:
        if not system.session_isolated and self.batch_dialogues > 1:
            log.info(
                "%s carries state across dialogues: its dialogues run one at a time (not %d in lockstep)",
                system.name,
                self.batch_dialogues,
            )
            return 1
        return self.batch_dialogues

    def converse(self, chunk: Sequence[TravelerGoal], system: System) -> list[dict[str, Any]]:
        lives = converse(
            system,
            self.sim,
            chunk,
            pool=self.config.pool,
            max_turns=self.turns,
            seed=self.config.seed,
            metadata=self.metadata,
            progress=self.bar,
        )
        return [dialogue_item(x) for x in lives]

    def poi_names(self) -> dict[str, str]:
        kb, pool = self.kb, self.config.pool
        return {pid: kb.pois[pid].name for g in self.units for pid in g.pools.get(pool, ()) if pid in kb.pois}

    def finish(self) -> dict[str, Any]:
        """The run's files, then its simulator report (validity/report.py), after the counterfactual runs
        when asked for."""
        metrics = super().finish()
        items = [self.store.done[self.unit_id(u)] for u in self.units]
        bad = self.counterfactual_runs() if self.counterfactual else None
        report = build_report(
            items, self.world, metrics["run"], counterfactual=bad, n_boot=self.n_boot, seed=self.config.seed
        )
        write_report(self.out, report)
        return metrics

    def counterfactual_runs(self) -> dict[str, list[dict[str, Any]]]:
        """The deliberately bad systems on the same travellers, simulator, pool, turns and seed, each in
        OUT/counterfactual/<name>/ (resumable, as any run); name -> their finished dialogues. None of them
        when the system under test is one."""
        from baselines import COUNTERFACTUAL_BASELINES

        if self.desc.get("system") in COUNTERFACTUAL_BASELINES:
            return {}
        out = {}
        for name in COUNTERFACTUAL_BASELINES:
            folder = self.out / COUNTERFACTUAL_DIR / name
            run = TraceRun(
                name,
                dataclasses.replace(self.config, shard=None),  # this run's travellers, given as they are
                folder,
                turns=self.turns,
                batch_dialogues=self.batch_dialogues,
                kb=self.kb,
                goals=list(self.units),
                simulator=self.simulator,
                llm=self.llm,
                overwrite=self.overwrite,
                progress=self.progress,
                n_boot=self.n_boot,
            )
            run.run()
            out[name] = read_outputs(folder)
        return out


def run_interactive(
    system: str | System,
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    *,
    simulator: str = "rules",
    llm: LLM | None = None,
    turns: int = DEFAULT_TURNS,
    n: int | None = None,
    split: str = "test",
    pool: str = "closed",
    seed: int = SEED,
    params: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    concurrency: int = DEFAULT_CONCURRENCY,
    batch_dialogues: int = DEFAULT_BATCH_DIALOGUES,
    overwrite: bool = False,
    progress: bool = True,
    n_boot: int = 10_000,
    kb: KnowledgeBase | None = None,
    goals: list[TravelerGoal] | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    shard: Shard | None = None,
    counterfactual: bool = False,
) -> dict[str, Any]:
    """The `trace` protocol end to end (TraceRun); returns metrics.json's content (`shard`: only that shard's
    travelers, for `trace-bench merge`; `counterfactual`: run the deliberately bad systems on the same
    travellers for the simulator report)."""
    config = RunConfig(Path(data_dir), split=split, pool=pool, limit=n, seed=seed, shard=shard)
    run = TraceRun(
        system,
        config,
        out,
        turns=turns,
        batch_dialogues=batch_dialogues,
        kb=kb,
        goals=goals,
        counterfactual=counterfactual,
        simulator=simulator,
        llm=llm,
        params=params,
        limits=ReplyLimits(timeout, concurrency, max_reply_bytes),
        overwrite=overwrite,
        progress=progress,
        n_boot=n_boot,
    )
    return run.run()
