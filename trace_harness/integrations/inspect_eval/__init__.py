"""Trace as Inspect AI tasks (docs/inspect.md): `inspect eval trace_bench/trace --model MODEL -T data=DIR`.

- `trace_bench/trace` (`tasks.trace`): the teacher-forced protocol, one Inspect sample per system turn, the
  LLM Zero-Shot baseline's request (`turns`), the solver `trace_bench/trace_answer` (`solver`: Inspect's
  structured output where the provider takes it, else the prompt's JSON instruction; the LLM layer's repairs),
  the scorer `trace_bench/trace_scores` (`scorer`: the metric registry's per-item functions per turn, and the
  suite with its cluster bootstrap over dialogues as the metric `trace_bench/trace_suite`);
- `trace_bench/trace_live` (`live`): the live protocol, the rules traveller as the user and the Inspect model
  as the system (the interaction loop `converse`), the live metrics as scores;
- `logs`: an Inspect log back to a predictions file (and its run metadata) that `trace-bench evaluate` and
  `trace-bench leaderboard` score like any run; `trace-bench inspect predictions LOG` (`cli`).

Only the modules that need it import `inspect_ai` (tasks, solver, scorer, live, logs, _registry: the
`inspect_ai` entry point of this package loads `_registry`); `turns` and `scores` hold the protocol itself and
import nothing of Inspect, so they are tested and used without it. `require_inspect()` is the one check and
install hint (the `inspect` extra).
"""

from __future__ import annotations

import importlib.util

from trace_bench.errors import TraceBenchError
from trace_bench.shell import pip_install_command

EXTRA = "trace-bench[inspect]"
NAMESPACE = "trace_bench"  # the Inspect namespace of the tasks, solver, scorer and metric (`_namespace`)
TEACHER_FORCED_TASK = f"{NAMESPACE}/trace"
LIVE_TASK = f"{NAMESPACE}/trace_live"
SOLVER = f"{NAMESPACE}/trace_answer"
SCORER = f"{NAMESPACE}/trace_scores"
SUITE_METRIC = f"{NAMESPACE}/trace_suite"
LIVE_SOLVER = f"{NAMESPACE}/trace_converse"
LIVE_SCORER = f"{NAMESPACE}/trace_live_scores"
LIVE_METRIC = f"{NAMESPACE}/trace_live_suite"


class InspectNotInstalled(TraceBenchError):
    """Inspect AI is not installed; the message says how to install the `inspect` extra."""


def require_inspect() -> None:
    """Raise InspectNotInstalled, with the install command, unless `inspect_ai` can be imported."""
    if importlib.util.find_spec("inspect_ai") is None:
        raise InspectNotInstalled(
            f"Inspect AI is not installed; install the inspect extra: {pip_install_command(EXTRA)}"
        )
