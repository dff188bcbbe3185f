"""`run_interactive`: seed travelers from a corpus split, let them talk to a system, write logs and metrics.

Dialogues run in chunks of `batch_dialogues`, in lockstep inside a chunk (turn t of every live dialogue of
the chunk in one system call, so a dense model encodes the chunk's queries in one batch); each finished
chunk is appended to the progress file, so an interrupted run resumes (output.py). The output is identical
for any chunk size, 1 (the sequential loop) included, with the rules simulator and a session-isolated
system (every dialogue draws from its own RNG; tests/trace_harness/protocols/interactive/test_interactive_lockstep.py). A system
that is not session-isolated (Memory-Aug.) runs its dialogues one at a time, in order, whatever the
chunk size.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.constants import POOLS, SEED, SPLITS
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    corpus_version,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import TraceDataError, sha256_file, write_json
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.loop import GENERATOR, LiveDialogue, converse
from trace_harness.protocols.interactive.output import METRICS_FILE, Progress, write_outputs
from trace_harness.protocols.interactive.reply import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT_S,
    System,
)
from trace_harness.protocols.interactive.report import build_metrics
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World
from trace_harness.protocols.interactive.simulator.party import SimulatedUser
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator, Simulator
from trace_harness.protocols.interactive.simulator.seeding import CorpusSeeder
from trace_harness.protocols.interactive.systems import load_system
from trace_harness.protocols.teacher_forced.runner import llm_identity

log = logging.getLogger(__name__)

SIMULATORS: tuple[str, ...] = ("rules", "llm")
DEFAULT_TURNS = 8
DEFAULT_BATCH_DIALOGUES = 64


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


def seed_goals(
    data_dir: str | os.PathLike, kb: KnowledgeBase, world: World, split: str, n: int | None
) -> list[TravelerGoal]:
    """Travelers of the first `n` dialogues of `split` (all with None), in corpus order."""
    records = iter_dialogues(data_dir, split)
    if n is not None:
        records = itertools.islice(records, n)
    goals = list(CorpusSeeder(data_dir, kb, world).goals(records))
    if not goals:
        raise TraceDataError(f"split {split!r} holds no dialogues to seed travelers from", path=data_dir)
    return goals


def seed_travellers(
    data_dir: str | os.PathLike, split: str = "test", n: int | None = None, kb: KnowledgeBase | None = None
) -> tuple[KnowledgeBase, list[TravelerGoal]]:
    """The knowledge base (`kb` when given, loaded from the data directory) and the travelers of `split` (as
    `run_interactive` seeds them), for several runs to share (`run_interactive(..., kb=kb, goals=goals)`): the
    caller never touches the simulator itself."""
    kb = load_data_kb(data_dir, kb)
    return kb, seed_goals(data_dir, kb, World(kb), split, n)


def make_simulator(name: str, world: World, llm: Any = None, seed: int = SEED) -> Simulator:
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
    llm: Any = None,
    seed: int = SEED,
) -> tuple[World, list[TravelerGoal], Simulator]:
    """The world, the seeded travelers of `split` and the simulator that plays them, as `run_interactive` sets
    them up (for callers above the harness's interactive package, which alone reaches the simulator)."""
    world = World(kb)
    return world, seed_goals(data_dir, kb, world, split, n), make_simulator(simulator, world, llm, seed)


def simulator_identity(sim: SimulatedUser) -> dict[str, Any]:
    d = sim.describe()
    keep: dict[str, Any] = {k: d[k] for k in ("simulator", "version", "seed", "topics_sha256") if k in d}
    if "prompt" in d:
        keep["prompt"] = d["prompt"]
        keep["llm"] = {k: d["llm"].get(k) for k in ("spec", "model", "settings")}
    return keep


def system_parameters(desc: Mapping[str, Any]) -> dict[str, Any]:
    """A system's parameters as its run's identity holds them: an LLM's without where the model runs and how
    its requests travel (a run resumed with another --llm-timeout or --llm-prompt-cache appends)."""
    parameters = dict(desc.get("parameters", {}))
    if isinstance(parameters.get("llm"), dict):
        parameters["llm"] = llm_identity(parameters["llm"])
    return parameters


def system_label(desc: Mapping[str, Any]) -> str:
    llm = desc.get("llm") or (desc.get("parameters") or {}).get("llm")
    model = llm.get("model") if isinstance(llm, Mapping) else None
    name = str(desc.get("system", "?"))
    return f"{name} ({model})" if model else name


def dialogue_item(live: LiveDialogue) -> dict[str, Any]:
    return {
        "record": live.record,
        "predictions": live.predictions,
        "traveler": {"goal": live.goal.to_dict(), "turns": live.traveler_log},
    }


def run_interactive(
    system: str | System,
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    *,
    simulator: str = "rules",
    llm: Any = None,
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
) -> dict[str, Any]:
    """The `trace` protocol end to end; returns metrics.json's content."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOLS}")
    if turns < 1 or (n is not None and n < 1) or batch_dialogues < 1:
        raise ValueError(
            f"need turns >= 1, n >= 1 and batch_dialogues >= 1; got {turns}, {n}, {batch_dialogues}"
        )
    root = check_data_dir(data_dir, (split,))
    kb = load_data_kb(root) if kb is None else kb
    world = World(kb)
    if goals is None:
        goals = seed_goals(root, kb, world, split, n)
    sim = make_simulator(simulator, world, llm, seed)
    sys_ = (
        system
        if isinstance(system, System)
        else load_system(
            system,
            kb,
            params=params,
            timeout=timeout,
            concurrency=concurrency,
            max_reply_bytes=max_reply_bytes,
        )
    )
    try:
        return _run(
            sys_,
            sim,
            goals,
            root,
            Path(out),
            world,
            turns=turns,
            n=n,
            split=split,
            pool=pool,
            seed=seed,
            params=dict(params or {}),
            batch=batch_dialogues,
            overwrite=overwrite,
            progress=progress,
            n_boot=n_boot,
        )
    finally:
        if not isinstance(system, System):
            sys_.close()


def _run(
    system: System,
    sim: Simulator,
    goals: list[TravelerGoal],
    root: Path,
    out: Path,
    world: World,
    *,
    turns: int,
    n: int | None,
    split: str,
    pool: str,
    seed: int,
    params: dict[str, Any],
    batch: int,
    overwrite: bool,
    progress: bool,
    n_boot: int,
) -> dict[str, Any]:
    from tqdm.auto import tqdm

    kb = world.kb
    desc = system.describe()
    identity = {
        "protocol": "trace",
        "system": desc.get("system"),
        "system_parameters": system_parameters(desc),
        "params": params,
        "simulator": simulator_identity(sim),
        "split": split,
        "pool": pool,
        "turns": turns,
        "n": n,
        "seed": seed,
        "data_file": sha256_file(split_file(root, split)),
        "kb_version": kb.version,
    }
    store = Progress(out, identity, overwrite=overwrite)
    meta = {
        "identity": identity,
        "system": desc,
        "system_label": system_label(desc),
        "protocol": "trace",
        "simulator": sim.describe(),
        "generator": GENERATOR,
        "data_dir": str(root.absolute()),
        "corpus_version": corpus_version(corpus_meta(root)),
        "kb_version": kb.version,
        "split": split,
        "pool": pool,
        "turns": turns,
        "n_dialogues": len(goals),
        "trace_bench_version": TRACE_VERSION,
        "complete": False,
    }
    store.write_meta(meta)
    metadata = {
        "generator": f"{GENERATOR} ({sim.name} simulator)",
        "backend": sim.name,
        "model": str(getattr(getattr(sim, "llm", None), "model", "") or ""),
        "seed": seed,
        "kb_version": kb.version,
    }
    todo = [g for g in goals if g.dialogue_id not in store.done]
    if not system.session_isolated and batch > 1:
        log.info(
            "%s carries state across dialogues: its dialogues run one at a time (not %d in lockstep)",
            system.name,
            batch,
        )
        batch = 1
    bar = tqdm(
        total=len(goals),
        initial=len(goals) - len(todo),
        desc=f"interact {system.name}"[:40],
        unit="dlg",
        disable=not progress,
        dynamic_ncols=True,
    )
    for start in range(0, len(todo), batch):
        lives = converse(
            system,
            sim,
            todo[start : start + batch],
            pool=pool,
            max_turns=turns,
            seed=seed,
            metadata=metadata,
            progress=bar,
        )
        store.append(dialogue_item(x) for x in lives)
        bar.update(len(lives))
    bar.close()
    items = [store.done[g.dialogue_id] for g in goals]
    names = {pid: kb.pois[pid].name for g in goals for pid in g.pools.get(pool, ()) if pid in kb.pois}
    write_outputs(out, items, names)
    meta.update({"system": system.describe(), "simulator": sim.describe(), "complete": True})
    if sim.llm is not None:  # tokens and cache hits of this process (not of resumed ones)
        meta["simulator_llm_usage_this_session"] = dict(sim.llm.usage)
    run = {
        "system": desc.get("system"),
        "system_label": meta["system_label"],
        "simulator": sim.name,
        "family": desc.get("family", "external"),
        "session_isolated": desc.get("session_isolated"),
        "split": split,
        "pool": pool,
        "turns": turns,
        "seed": seed,
        "kb_version": kb.version,
        "corpus_version": meta["corpus_version"],
    }
    metrics = build_metrics(items, kb, protocol="trace", run=run, n_boot=n_boot, seed=seed)
    write_json(out / METRICS_FILE, metrics)
    store.write_meta(meta)  # complete only once metrics.json is in place
    return metrics
