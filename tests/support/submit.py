"""Helpers of the Space's submission tests: the `trace-bench submit` command line over a settings object."""

from __future__ import annotations

import os

OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def submit_argv(settings, predictions, name: str, *more: str) -> list[str]:
    """`trace-bench submit` (without the program name) of `predictions` as `name` into the settings' store."""
    return [
        "submit",
        str(predictions),
        "--data",
        str(settings.data_dir),
        "--results",
        str(settings.results_dir),
        "--name",
        name,
        *more,
    ]
