"""Random pick: a deliberately bad system, the first of the two counterfactual baselines.

It ranks the usable candidates (the pool minus the POIs the traveller rejected) in an order drawn at random
and ignores everything else the dialogue says. The draw is a pure function of (seed, dialogue id, turn id,
POI id), the first 8 bytes of their SHA-256, so its rankings do not depend on batching, worker processes
or the order the rows arrive in (session-isolated), and the same seed gives the same bytes.

Why it exists: a simulated traveller that accepts what a random ranker offers as often as what a real one
offers cannot tell systems apart (ConvApparel's counterfactual validation). The interactive protocol's
simulator report runs it beside the system under test on the same travellers and prints the real system's
margin over it (docs/interactive.md, "How far to trust the simulated traveller"); it never ranks on the
leaderboard (`baselines.identity`: `counterfactual=True`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from trace_dataset.constants import SEED

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase


def draw(seed: int, dialogue_id: str, turn_id: int, business_id: str) -> int:
    """The candidate's random score on this turn: the first 8 bytes of a SHA-256, as an integer."""
    key = f"{seed}:{dialogue_id}:{turn_id}:{business_id}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


class RandomPickBaseline(RankingPipeline):
    """The usable candidates in a seeded random order (module docstring)."""

    name: ClassVar[str] = "random_pick"
    config_keys: ClassVar[tuple[str, ...]] = ("seed",)

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, seed: int = SEED):
        super().__init__(kb, batch_size)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        self.seed = seed

    def score(self, inp: Mapping[str, Any]) -> dict[str, int]:
        did, tid = inp["dialogue_id"], inp["turn_id"]
        return {pid: draw(self.seed, did, tid, pid) for pid in inp["candidates"]}
