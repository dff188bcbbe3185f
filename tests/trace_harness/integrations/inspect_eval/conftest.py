"""Fixtures: one Inspect run of `trace_bench/trace` with the scripted model on three dialogues of the small
corpus (shared by the module's tests, read only), and its log converted to a predictions file."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# inspect-ai 0.3.285 needs Python 3.11+: on 3.10 the `inspect` extra installs nothing and these tests are not
# collected (anywhere else a missing inspect-ai fails them: the test extra installs it)
collect_ignore_glob = ["test_*.py"] if sys.version_info < (3, 11) else []

SUBSET = 3
N_BOOT = 300  # the bootstrap is tested against the leaderboard's with the same n_boot and seed


@dataclass(frozen=True)
class InspectRun:
    data: Path
    log: Any  # inspect_ai.log.EvalLog
    log_path: Path
    script: Any  # tests.support.inspect_model.ScriptedInspectModel


def run_task(task: str, data: Path, log_dir: Path, reply=None, **task_args: Any) -> tuple[Any, Any]:
    """`inspect eval TASK` in this process with the scripted model: (its log, the script)."""
    from inspect_ai import eval as inspect_eval

    from tests.support.inspect_model import inspect_model, zero_shot_reply

    model, script = inspect_model(reply or zero_shot_reply)
    [log] = inspect_eval(
        task, model=model, task_args={"data": str(data), **task_args}, log_dir=str(log_dir), display="none"
    )
    assert log.status == "success", log.error
    return log, script


@pytest.fixture(scope="session")
def tf_run(small_corpus, tmp_path_factory) -> InspectRun:
    log_dir = tmp_path_factory.mktemp("inspect-logs")
    log, script = run_task("trace_bench/trace", small_corpus, log_dir, subset=SUBSET, n_boot=N_BOOT)
    return InspectRun(small_corpus, log, Path(log.location), script)
