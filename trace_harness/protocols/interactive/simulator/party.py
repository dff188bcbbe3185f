"""What every simulated user shares, whichever protocol it speaks (Trace's traveller, SnipRec's seeker).

The harness reads only these of a simulator besides its protocol's turn methods: `name`, `describe()` (its
settings, for run metadata) and `llm` (the model that words its turns, whose usage the run records; None for
the rules simulators).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from trace_dataset.constants import SEED

if TYPE_CHECKING:
    from trace_harness.protocols.interactive.simulator.goal import World
    from trace_llm.base import LLM


class SimulatedUser:
    """Base of the simulators: the world they draw goals from and their seed."""

    name: ClassVar[str] = ""
    llm: LLM | None = None  # set by the LLM-worded simulators (simulator.llm.LLMWording)

    def __init__(self, world: World, seed: int = SEED):
        self.world = world
        self.seed = seed

    def describe(self) -> dict[str, Any]:
        """Settings only, for run metadata."""
        raise NotImplementedError
