"""A stage of a job, and the runner of a list of them.

A `Stage` says what it is called, what it writes, when it is done and how it runs. `run_stages` runs a list in
order: a stage that is done is skipped (so rerunning a job resumes it), every other one is run and timed, and a
failure of a kind the stage may have (`may_fail`: a baseline without its model package, an unreachable server)
is logged and collected under the stage's `failure` label while the later stages still run. Any other
exception stops the job. A stage that runs several things side by side (`parts_fail`) returns the allowed
failures of its parts, {label: error}, collected the same way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


def never() -> bool:
    """`done` of a stage that runs every time (a report that prints, a step that only reads)."""
    return False


@dataclass(frozen=True)
class Stage:
    """One step of a job."""

    name: str  # how the log names it
    writes: tuple[Path, ...]  # what it writes (files or folders; empty for a stage that only reports)
    done: Callable[[], bool]  # whether its output is already complete: then it is skipped
    run: Callable[[], object]  # how it runs (its return value is used only with parts_fail)
    may_fail: tuple[type[BaseException], ...] = ()  # failures collected instead of stopping the job
    failure: str = ""  # the label a collected failure is reported under (default: the name)
    parts_fail: bool = False  # run returns {label: error} of its parts' allowed failures


def run_stages(stages: Iterable[Stage], logger: logging.Logger | None = None) -> dict[str, str]:
    """Run `stages` in order (module docstring); returns {failure label: "ErrorType: message"} of the failures
    the stages were allowed to have, in the order they happened."""
    logger = logger or log
    failed: dict[str, str] = {}
    for stage in stages:
        if stage.done():
            logger.info("[%s] already done, skipping", stage.name)
            continue
        t0 = time.perf_counter()
        logger.info("[%s] running", stage.name)
        try:
            result = stage.run()
        except stage.may_fail as e:
            logger.error("%s failed: %s", stage.name, e)
            failed[stage.failure or stage.name] = f"{type(e).__name__}: {e}"
            continue
        if stage.parts_fail and isinstance(result, Mapping):
            failed.update({str(k): str(v) for k, v in result.items()})
        logger.info("[%s] done in %.1f s", stage.name, time.perf_counter() - t0)
    return failed
