"""What the `inspect_ai` entry point of this distribution loads (pyproject.toml): importing the modules that
define the components registers them with Inspect as `trace_bench/...`."""

from __future__ import annotations

from trace_harness.integrations.inspect_eval.live import (
    trace_converse,
    trace_live,
    trace_live_scores,
    trace_live_suite,
)
from trace_harness.integrations.inspect_eval.scorer import trace_scores, trace_suite
from trace_harness.integrations.inspect_eval.solver import trace_answer
from trace_harness.integrations.inspect_eval.tasks import trace

__all__ = [
    "trace",
    "trace_answer",
    "trace_converse",
    "trace_live",
    "trace_live_scores",
    "trace_live_suite",
    "trace_scores",
    "trace_suite",
]
