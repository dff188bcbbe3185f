"""The main job's options (`trace-bench demo`'s flags), as one frozen record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trace_dataset.constants import SEED
from trace_harness.main_job.layout import DEFAULT_OUT


@dataclass(frozen=True)
class DemoConfig:
    """What `trace-bench demo` runs (its options; `check_settings` records the data-shaping ones)."""

    out: Path = DEFAULT_OUT
    n: int = 10_000  # dialogues to generate
    scale: float = 1.0  # size of the synthetic Yelp bundle
    per_cell: int | None = None  # POIs per city x type (None: KB_PER_CELL, the paper's 100)
    seed: int = SEED
    split: str = "test"  # the split the baselines run on
    baselines: str = "all"  # comma-separated names, "all" (the nine non-LLM baselines) and/or "llm"
    workers: int | None = None  # generator and interactive worker processes (None: the CPU count)
    num_proc: int = 1  # worker processes per baseline run
    interactive: bool = True  # the interactive runs (each baseline with the rules traveller)
    interactive_n: int | None = (
        None  # travellers of the interactive runs: the first N dialogues (None: the split)
    )
    serve: bool = False  # start the leaderboard app at the end
    host: str = "127.0.0.1"
    port: int = 7860
