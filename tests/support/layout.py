"""The repository's layout as the tests see it: its root and the product packages, bottom layer first."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS: tuple[str, ...] = (
    "trace_bench",  # the kernel: seed, user-facing error base, printed commands, the root command
    "trace_llm",  # the LLM layer, self-contained
    "trace_dataset",  # data: Yelp reader, knowledge base, generator, release, datasets builder
    "trace_metrics",  # metrics and evaluators (CoRE)
    "baselines",  # the systems and the toolkit they share
    "trace_harness",  # the protocols (the simulator inside), the leaderboards, the job engine, the main job
    "spaces_app",  # the Space: the app, its results store and its commands
)
