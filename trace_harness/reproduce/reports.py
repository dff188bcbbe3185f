"""`reproduce`'s reliability reports, after the leaderboard (what they are: reproduce/reliability.py)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from trace_harness.reproduce.reliability import JUDGE_REPORT_DIR

if TYPE_CHECKING:
    from trace_harness.reproduce.execute import LlmOf
    from trace_harness.reproduce.jobs import Context

log = logging.getLogger(__name__)


def run_reports(ctx: Context, llm_of: LlmOf) -> dict[str, Any]:
    """The reports the config asks for; returns {name: report folder}."""
    from trace_harness.reproduce.jobs import build_jobs, closed_run
    from trace_metrics.core.reliability import RELIABILITY_DIR, run_report
    from trace_metrics.core.rerate import core_subject, judge_subject

    config = ctx.config
    k = config.reliability.k
    written: dict[str, Any] = {}
    if k is None:
        return written
    if config.wants("core"):
        llm = llm_of("core")
        for job in (j for j in build_jobs(config) if j.kind == "core"):
            out = job.out / RELIABILITY_DIR
            predictions = [ctx.merged_run(job.system)]
            run_report(llm, core_subject(llm, [job.out]), out, k, predictions=predictions)
            written[f"core/{job.system}/{job.split}"] = str(out)
    if config.wants("judge"):
        llm = llm_of("judge")
        runs = [closed_run(config, s) for s in config.systems if closed_run(config, s).exists()]
        if runs:
            root = ctx.root(config.closed)
            split = "test" if config.closed.split == "all" else config.closed.split
            subject = judge_subject(llm, root, runs, split=split, limit=config.reliability.limit)
            out = config.out / JUDGE_REPORT_DIR
            run_report(llm, subject, out, k, predictions=runs)
            written["judge"] = str(out)
    for name, folder in written.items():
        log.info("reliability report of %s: %s", name, folder)
    return written
