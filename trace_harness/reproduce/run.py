"""The live path: plan, preflight, run every job with the role models, then the leaderboard and the manifest.

1. Plan: a dry run (collect.py) counts each part's requests, so every part's progress bar has a total and an
   ETA (per request, not per batch of rows). `plan=False` skips it (bars then count without a total).
2. Preflight: one one-token request to every server of every OpenAI-compatible model that has requests to send
   (`OpenAILLM.preflight`: the first server that does not answer is named, before any work); what the servers
   report about themselves goes to the manifest. A run the cache can finish sends nothing, preflight included.
3. Jobs, in order: closed runs, open runs, interactive runs, CoRE; each a stage of the job engine run through
   the command's own function, each resumable (a complete job is skipped). A server that fails more than the allowed share of requests stops the run
   (ErrorRateExceeded); what was answered is cached and a rerun resumes.
4. The leaderboard (the LLM judge and NLI score the closed runs inside it), the Space's leaderboard.json.
5. The reliability reports of CoRE and the judge (reproduce/reliability.py; config key `reliability`),
   OUT/manifest.json.
"""

from __future__ import annotations

import logging
from typing import Any

from trace_harness.engine.stage import run_stages
from trace_harness.reproduce import execute
from trace_harness.reproduce.jobs import Context, Job, build_jobs
from trace_harness.reproduce.manifest import write_manifest
from trace_harness.reproduce.reports import run_reports

log = logging.getLogger(__name__)


def run_live(
    ctx: Context, source: str, *, plan: bool = True, preflight: bool = True, progress: bool = True
) -> dict[str, Any]:
    """Everything the config asks for, sending what the cache cannot answer; returns the leaderboard result
    with the manifest's path under "manifest"."""
    from trace_harness.reproduce.dryrun import plan as make_plan
    from trace_harness.reproduce.dryrun import write_plan
    from trace_llm.progress import RequestProgress

    config = ctx.config
    planned = None
    if plan:
        log.info("planning: counting the requests each part still needs (nothing is sent)")
        planned = make_plan(ctx)
        write_plan(config, planned)
    engines: dict[str, Any] = {}
    sending = set(planned["roles_sending"]) if planned is not None else None
    if preflight:
        for role in sorted(sending if sending is not None else _roles(ctx)):
            llm = ctx.llm(role)
            if hasattr(llm, "preflight"):
                log.info(
                    "preflight: %s model %s at %s", role, llm.model, ", ".join(getattr(llm, "base_urls", []))
                )
                engines[role] = llm.preflight()
    bars: dict[str, RequestProgress] = {}

    def bar(part: str) -> RequestProgress:
        if part not in bars:
            total = planned["parts"][part]["requests"] if planned is not None else None
            bars[part] = RequestProgress(part, total=total, enabled=progress)
        return bars[part]

    def bars_of(job: Job) -> None:
        for role in job.roles:
            ctx.llm(role).progress = bar(job.part)

    try:
        jobs = [j for j in build_jobs(config) if j.kind not in ("judge", "nli")]
        for job in jobs:  # every model the jobs name and every part's bar, complete jobs' too: the manifest
            for role in job.roles:  # records each model and what each part sent (0 for a complete part)
                ctx.llm(role)
                bar(job.part)
        run_stages(execute.job_stages(ctx, jobs, ctx.llm, before=bars_of), log)
        judge = None
        if config.wants("judge"):
            judge = ctx.llm("judge")
            judge.progress = bar("judge")
        nli = _nli(ctx, source)
        board = execute.leaderboard(ctx, judge=judge, nli=nli)
        board["reliability"] = run_reports(ctx, ctx.llm)
    finally:
        for b in bars.values():
            b.close()
    usage = {part: b.summary() for part, b in bars.items()}
    board["manifest"] = str(
        write_manifest(ctx, mode="live", plan=planned, usage=usage, engines=engines, board=board)
    )
    return board


def finish_from_cache(
    ctx: Context, llm_of: execute.LlmOf, source: str, batch: dict[str, Any] | None
) -> dict[str, Any]:
    """The leaderboard and the manifest of a run whose every request is in the cache (the batch path's end)."""
    judge = llm_of("judge") if ctx.config.wants("judge") else None
    board = execute.leaderboard(ctx, judge=judge, nli=_nli(ctx, source))
    board["manifest"] = str(
        write_manifest(ctx, mode="batch", plan=None, usage={}, engines={}, board=board, batch=batch)
    )
    return board


def _nli(ctx: Context, source: str) -> Any:
    """The NLI scorer for the leaderboard; with several processes, the pairs are scored first under accelerate."""
    if not ctx.config.wants("nli"):
        return None
    processes = execute.nli_processes(ctx)
    if processes > 1:
        ctx.root(ctx.config.closed)  # the subset is written once, before several processes read it
        execute.launch_nli(ctx, source, processes)
    return execute.nli_scorer(ctx)


def _roles(ctx: Context) -> set[str]:
    from trace_harness.reproduce.config import needed_roles

    return set(needed_roles(ctx.config))
