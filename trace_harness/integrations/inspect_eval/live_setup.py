"""The live protocol's parts for another harness, without that harness: the travellers, and the system seat the
harness's model answers from.

- `load_live(data, ...)`: the knowledge base, the rules simulator and the travellers of the first `n`
  dialogues of the split, set up as `trace-bench interact` sets them up (`interactive.run.travelers`); the
  travellers' hidden goals stay here and in the simulator, never in what the system is sent.
- `ModelSystem`: the interaction loop's `System` whose replies are LLM Zero-Shot's request and reading
  (`turns.ZeroShotTurns`) around a callable that returns a turn's replies (the Inspect model, asked from the
  worker thread the loop runs in); each reply goes through the loop's own check (`check_reply`).
- `conversation_item(live)`: the finished dialogue as `trace-bench interact` logs it (record, predictions,
  traveller side), and `live_scores(item)`: the live declarations' values of that dialogue.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_dataset.constants import POOLS, SEED, SPLITS
from trace_dataset.datadir import check_data_dir
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.integrations.inspect_eval.turns import (
    DEFAULT_HISTORY,
    TurnRequest,
    ZeroShotTurns,
    final_answer,
)
from trace_harness.protocols.interactive.loop import LiveDialogue
from trace_harness.protocols.interactive.reply import System, SystemReply, check_reply
from trace_harness.protocols.interactive.run import DEFAULT_TURNS, dialogue_item, load_data_kb, travelers
from trace_metrics.lib import scoring
from trace_metrics.lib.interactive import LIVE_METRICS

Ask = Callable[[TurnRequest], Sequence[tuple[str, bool]]]  # a turn's request -> its replies (text, cut)


class ModelSystem(System):
    """The system seat of the live protocol: LLM Zero-Shot's request, answered by `ask` (module docstring)."""

    name = "llm_zero_shot"

    def __init__(self, turns: ZeroShotTurns, ask: Ask, model: str = ""):
        self.turns = turns
        self.ask = ask
        self.model = model

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        out = []
        for row in rows:
            request = self.turns.request(row)
            answer = final_answer(list(self.ask(request)), request.schema, self.turns.pipe.json_repairs)
            p = self.turns.read(request, answer)
            reply = SystemReply(
                row["action"],
                list(p["ranked_poi_ids"]),
                p["response"],
                dict(p["citations"]),
                dict(p.get("meta") or {}),
                p.get("scores"),
            )
            out.append(check_reply(row, reply))
        return out

    def describe(self) -> dict[str, Any]:
        return {"system": self.name, "kind": "inspect model", "model": self.model, **self.turns.describe()}


@dataclass
class LiveSetup:
    """What every live sample of one task shares: the travellers (by dialogue id), the simulator playing them."""

    data_dir: Path
    split: str
    pool: str
    max_turns: int
    seed: int
    kb: KnowledgeBase
    world: Any  # the simulator's World (interactive.run sets it up; only the loop reads it)
    simulator: Any
    goals: dict[str, Any]  # dialogue id -> the traveller's goal
    turns: ZeroShotTurns

    def describe(self) -> dict[str, Any]:
        return {
            "data": str(self.data_dir),
            "split": self.split,
            "pool": self.pool,
            "turns": self.max_turns,
            "seed": self.seed,
            "dialogues": len(self.goals),
            "simulator": self.simulator.describe(),
            "kb_version": self.kb.version,
            **self.turns.describe(),
        }


def load_live(
    data: str | os.PathLike | None,
    *,
    split: str = "test",
    pool: str = "closed",
    n: int | None = None,
    max_turns: int = DEFAULT_TURNS,
    seed: int = SEED,
    history: str = DEFAULT_HISTORY,
    **params: Any,
) -> LiveSetup:
    """The travellers of the first `n` dialogues of `split` (all with None) and the rules simulator."""
    if data is None or str(data) == "":
        raise TraceDataError("no Trace data directory: pass the task parameter data=DIR (-T data=DIR)")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOLS}")
    if max_turns < 1 or (n is not None and n < 1):
        raise ValueError(f"need turns >= 1 and n >= 1; got {max_turns}, {n}")
    root = check_data_dir(data, (split,))
    kb = load_data_kb(root)
    world, goals, simulator = travelers(root, kb, split=split, n=n, simulator="rules", seed=seed)
    for g in goals:  # the world's cells are built once here, before samples run side by side
        world.targets(g, ())
    turns = ZeroShotTurns(kb, history, **params)
    return LiveSetup(
        root, split, pool, max_turns, seed, kb, world, simulator, {g.dialogue_id: g for g in goals}, turns
    )


def conversation_item(live: LiveDialogue) -> dict[str, Any]:
    """The finished dialogue as `trace-bench interact` logs it: record, predictions, traveller side."""
    return dialogue_item(live)


def live_scores(item: Mapping[str, Any]) -> dict[str, float | None]:
    """The live declarations (benchmark "live": success, turns to success, system turns) of one dialogue."""
    return dict(scoring.score(LIVE_METRICS, {"live_dialogue": [item["record"]]}).values)
