"""Running the jobs through the package's own commands' functions: `run_baseline`, `run_interactive`, CoRE's
`run_corpus`, and the leaderboard (`build_leaderboard`, which scores every run with `evaluate_run`, the LLM
judge and NLI included, and writes leaderboard.json, the Space's data).

Each job is a stage of the job engine (`job_stages`: its label, its output, `jobs.job_done`, `run_job`), so the
live path, the batch path's advance and the main job run them alike. Interactive runs that need no model can
run side by side in forked worker processes (`interactive.workers`), sharing one seeding of the travellers.

`llm_of(role)` gives each job its role's LLM object: the live model (sends requests, shares the response cache)
or a cache-only stand-in (`trace_llm.collecting.CollectingLLM`: answers from the cache, never sends). Every job
resumes where an earlier invocation stopped, as the commands do.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from baselines import LLM_SYSTEMS
from trace_dataset.constants import SEED
from trace_dataset.io import TraceDataError, read_jsonl, write_jsonl
from trace_harness.engine.forks import run_forked
from trace_harness.engine.stage import Stage
from trace_harness.reproduce.config import INTERACTIVE_DIR, LEADERBOARD_DIR
from trace_harness.reproduce.jobs import (
    Context,
    Job,
    closed_run,
    job_done,
    role_settings,
    run_complete,
)
from trace_llm import LLM

log = logging.getLogger(__name__)

LlmOf = Callable[[str], LLM]
# Interactive runs started first when they run side by side: the two that encode queries with a model take the
# longest, so starting them first lets the workers finish together (the order changes no output).
STARTED_FIRST: tuple[str, ...] = ("dense", "hybrid_rrf")


def core_options(ctx: Context) -> dict[str, Any]:
    """CoRE's options as `trace-bench core score` passes them (factor and debate decoding included)."""
    from trace_metrics.core.prompts import FACTOR_IDS

    cfg = ctx.config.core
    factor = role_settings(ctx.config, "core")
    return {
        "factors": list(cfg.factors or FACTOR_IDS),
        "debate": cfg.debate,
        "max_rounds": cfg.max_rounds,
        "max_retries": cfg.max_retries,
        "max_repairs": cfg.max_repairs,
        "factor_settings": factor,
        "debate_settings": factor.replace(max_new_tokens=cfg.debate_max_new_tokens),
    }


def core_predictions(ctx: Context, job: Job, root: Path, predictions: Path, folder: Path) -> Path:
    """The predictions CoRE reads for one split: the closed run itself, or (when the closed runs cover the whole
    corpus) the rows of that split's dialogues, written once beside the CoRE output."""
    if ctx.config.closed.split == job.split:
        return predictions
    from trace_dataset.datadir import iter_dialogues

    wanted = {d["dialogue_id"] for d in iter_dialogues(root, job.split)}
    path = folder / f"{job.system}.{job.split}.predictions.jsonl"
    if not path.exists() or path.stat().st_mtime < predictions.stat().st_mtime:
        write_jsonl(path, (row for row in read_jsonl(predictions) if row.get("dialogue_id") in wanted))
    return path


def scoring_options(ctx: Context) -> dict[str, Any]:
    grounding = ctx.config.grounding_turns
    return {"grounding_turns": grounding} if grounding else {}


def system_params(ctx: Context, system: str, llm_of: LlmOf) -> dict[str, Any]:
    params = dict(ctx.config.system_params.get(system, {}))
    if system in LLM_SYSTEMS:
        llm = llm_of("systems")
        llm.reset_usage()  # the run's summary counts this run's requests only (the object serves every system)
        params["llm"] = llm
    return params


def run_job(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    """Run one job to its end (judge and NLI jobs run inside the leaderboard: nothing to do here)."""
    if job.kind == "run":
        _run(ctx, job, llm_of)
    elif job.kind == "interactive":
        _interactive(ctx, job, llm_of)
    elif job.kind == "core":
        _core(ctx, job, llm_of)


def job_stage(
    ctx: Context,
    job: Job,
    llm_of: LlmOf,
    *,
    may_fail: tuple[type[BaseException], ...] = (),
    before: Callable[[Job], object] | None = None,
) -> Stage:
    """A job as a stage of the engine; `before(job)` runs first when the stage runs (a progress bar)."""

    def run() -> None:
        if before is not None:
            before(job)
        run_job(ctx, job, llm_of)

    return Stage(job.label, (job.out,), partial(job_done, job), run, may_fail)


def job_stages(
    ctx: Context,
    jobs: Sequence[Job],
    llm_of: LlmOf,
    *,
    may_fail: tuple[type[BaseException], ...] = (),
    before: Callable[[Job], object] | None = None,
) -> list[Stage]:
    """The stages of `jobs` in order (judge and NLI, done inside the leaderboard, left out); with
    `interactive.workers` other than 1, the interactive runs that need no model become one stage that runs
    them side by side in forked processes (`forked_interactive`)."""
    stages: list[Stage] = []
    todo = [j for j in jobs if j.kind not in ("judge", "nli")]
    forked = [j for j in todo if j.kind == "interactive" and not j.roles]
    if ctx.config.interactive.workers == 1:
        forked = []
    for job in todo:
        if job in forked:
            if job is forked[0]:
                stages.append(forked_interactive(ctx, forked, may_fail))
            continue
        stages.append(job_stage(ctx, job, llm_of, may_fail=may_fail, before=before))
    return stages


def _run(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    runset = ctx.runset(job.pool)
    uses_llm = job.system in LLM_SYSTEMS
    run_baseline(
        job.system,
        ctx.config.data,
        job.out,
        split=runset.split,
        pool=job.pool,
        batch_size=ctx.config.batch_size,
        num_proc=1 if uses_llm else ctx.config.num_proc,
        params=system_params(ctx, job.system, llm_of),
        progress=not uses_llm,
        kb=ctx.kb,
        subset=runset.subset,
        subset_seed=runset.seed,
        subset_dir=ctx.subset_dir(runset) if runset.subset is not None else None,
        shard=ctx.shard,
    )


def _interactive(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    from trace_harness.protocols.interactive.run import run_interactive
    from trace_harness.protocols.interactive.systems import load_system

    cfg = ctx.config.interactive
    sim_llm = llm_of("simulator") if cfg.simulator == "llm" else None
    if sim_llm is not None:
        sim_llm.reset_usage()
    system = load_system(job.system, ctx.kb, params=system_params(ctx, job.system, llm_of))
    try:
        run_interactive(
            system,
            ctx.config.data,
            job.out,
            simulator=cfg.simulator,
            llm=sim_llm,
            turns=cfg.turns,
            n=cfg.n,
            split=cfg.split,
            pool=cfg.pool,
            seed=cfg.seed,
            params=ctx.config.system_params.get(job.system, {}),
            batch_dialogues=cfg.batch_dialogues,
            kb=ctx.kb,
            shard=ctx.shard,
            counterfactual=cfg.simulator == "llm",  # the LLM traveller's report checks it against bad systems
        )
    finally:
        if job.system not in LLM_SYSTEMS:
            system.close()


def forked_interactive(
    ctx: Context, jobs: Sequence[Job], may_fail: tuple[type[BaseException], ...] = ()
) -> Stage:
    """The interactive runs of `jobs` (systems that need no model) as one stage: the travellers are seeded
    once, then the runs go side by side in `interactive.workers` forked processes (engine.forks), each
    process sharing the knowledge base and the travellers it was forked with. A run's failure of a kind in
    `may_fail` is collected under "<system> (interactive)"; the stage returns those failures."""
    cfg = ctx.config.interactive

    def run() -> dict[str, str]:
        from trace_harness.protocols.interactive.run import seed_travellers

        todo = sorted((j for j in jobs if not job_done(j)), key=lambda j: j.system not in STARTED_FIRST)
        kb, goals = seed_travellers(ctx.config.data, cfg.split, cfg.n, kb=ctx.kb)
        workers = max(1, min(cfg.workers or os.cpu_count() or 1, len(todo)))
        log.info(
            "[interactive runs] %s with the %s traveller, %d travellers, %d worker(s)",
            ", ".join(j.system for j in todo),
            cfg.simulator,
            len(goals),
            workers,
        )
        one = partial(_interactive_in_worker, ctx, kb, goals, may_fail)
        results = run_forked(one, todo, workers)
        return {f"{system} (interactive)": error for system, error in results if error}

    return Stage(
        "interactive runs",
        tuple(j.out for j in jobs),
        lambda: all(job_done(j) for j in jobs),
        run,
        parts_fail=True,
    )


def _interactive_in_worker(
    ctx: Context, kb: Any, goals: Any, may_fail: tuple[type[BaseException], ...], job: Job
) -> tuple[str, str]:
    """One interactive run of a forked worker (one torch thread: the workers already fill the cores);
    (system, error or "")."""
    from trace_harness.protocols.interactive.run import run_interactive

    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    cfg = ctx.config.interactive
    try:
        run_interactive(
            job.system,
            ctx.config.data,
            job.out,
            simulator=cfg.simulator,
            turns=cfg.turns,
            n=cfg.n,
            split=cfg.split,
            pool=cfg.pool,
            seed=cfg.seed,
            params=ctx.config.system_params.get(job.system, {}),
            batch_dialogues=cfg.batch_dialogues,
            progress=False,
            kb=kb,
            goals=goals,
            counterfactual=cfg.simulator == "llm",
        )
    except may_fail as e:  # e.g. dense without its model package
        log.error("interactive run of %s failed: %s", job.system, e)
        return job.system, f"{type(e).__name__}: {e}"
    return job.system, ""


def _core(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    from trace_metrics.core.prompts import load_prompts
    from trace_metrics.core.runner import collect_logs, run_corpus

    path = ctx.merged_run(job.system)
    if not run_complete(path):
        raise TraceDataError(
            f"CoRE of {job.system} needs its closed-pool run, which is not complete", path=path
        )
    root = ctx.root(ctx.config.closed)
    predictions = core_predictions(ctx, job, root, path, job.out.parent)
    logs, source = collect_logs(
        predictions, root, split=job.split, system=job.system, limit=ctx.config.core.limit, shard=ctx.shard
    )
    run_corpus(
        llm_of("core"),
        logs,
        job.out,
        load_prompts(None),
        source=source,
        chunk_size=ctx.config.core.chunk,
        **core_options(ctx),
    )


# ---------------------------------------------------------------------------------------------------------
# The leaderboard: Tables 5, 6 and 9 (+ judge and NLI columns), the Space's data, the interactive view
# ---------------------------------------------------------------------------------------------------------
def nli_cache_path(ctx: Context) -> Path | None:
    """The NLI cache beside the LLM response cache (None: trace-bench's default folder)."""
    from trace_metrics.lib.entailment import CACHE_FILE

    return ctx.config.cache.parent / CACHE_FILE if ctx.config.cache is not None else None


def nli_scorer(ctx: Context, show_progress: bool = True):
    from trace_metrics.lib.entailment import NLIScorer

    cfg = ctx.config.nli
    if cfg.model is None:  # config.check_models refuses this where parts lists nli
        raise TraceDataError(
            "nli.model: missing; expected an NLI model folder or Hub id", path=ctx.config.path
        )
    return NLIScorer(
        cfg.model,
        batch_size=cfg.batch_size,
        cache_path=nli_cache_path(ctx),
        dtype=cfg.dtype,
        show_progress=show_progress,
    )


def closed_runs(ctx: Context) -> list[Path]:
    return [closed_run(ctx.config, s) for s in ctx.config.systems]


def score_nli(ctx: Context, scorer: Any) -> None:
    """Every closed run's NLI pairs through `scorer` (each process of a distributed launch scores its share; the
    main one fills the NLI cache, which the leaderboard then reads)."""
    from trace_metrics.lib.suite import evaluate_run

    root = ctx.root(ctx.config.closed)
    for path in closed_runs(ctx):
        if run_complete(path):
            evaluate_run(
                root, path, split=ctx.config.closed.split, pool="closed", nli=scorer, **scoring_options(ctx)
            )


def score_runs(ctx: Context, judge: LLM | None = None, nli: Any = None) -> list[dict[str, Any]]:
    """Every complete run scored (the closed runs with the judge and NLI when given), the leaderboard's rows;
    intervals and marks are drawn once over all of them (one resampling per dialogue set, so closed and open
    runs on the same dialogues share it, as `trace-bench leaderboard` over both folders does)."""
    from trace_harness.leaderboard.build import add_intervals, build_leaderboard

    config = ctx.config
    rows: list[dict[str, Any]] = []
    groups = []
    if config.needs_closed_runs():
        groups.append((config.closed, config.out / config.closed.runs, {"judge": judge, "nli": nli}))
    if config.wants("table6"):
        groups.append((config.open, config.out / config.open.runs, {}))
    for runset, runs_dir, extra in groups:
        if not runs_dir.is_dir():
            continue
        options = {**scoring_options(ctx), **{k: v for k, v in extra.items() if v is not None}}
        rows += build_leaderboard(ctx.root(runset), runs_dir, split=runset.split, n_boot=0, **options)
    if config.n_boot > 0:
        log.info("bootstrap intervals and significance marks (n_boot=%d, seed=%d)", config.n_boot, SEED)
        rows = add_intervals(rows, n_boot=config.n_boot, seed=SEED)
    return rows


def leaderboard(ctx: Context, judge: LLM | None = None, nli: Any = None) -> dict[str, Any]:
    """Score the runs (closed runs with the judge and NLI when given), write OUT/leaderboard/ and return the rows,
    the files and the tables as text."""
    from trace_harness.leaderboard.build import write_leaderboard
    from trace_harness.leaderboard.render import format_tables

    config = ctx.config
    rows = score_runs(ctx, judge, nli)
    out = config.out / LEADERBOARD_DIR
    paths = write_leaderboard(rows, out)
    text = format_tables(rows)
    if judge is not None:
        text += "\n" + format_judge(rows, judge.model)
    result: dict[str, Any] = {"rows": rows, "paths": {k: str(v) for k, v in paths.items()}, "text": text}
    folder = config.out / INTERACTIVE_DIR
    if config.wants("interactive") and folder.is_dir():
        from trace_harness.leaderboard.interactive import (
            format_interactive,
            interactive_rows,
            write_interactive,
        )

        live = interactive_rows(folder, rows)
        written = write_interactive(live, out, folder)
        result["paths"].update({f"interactive_{k}": str(v) for k, v in written.items()})
        result["text"] += "\n\n" + format_interactive(live)
    return result


def format_judge(rows: list[dict[str, Any]], model: str) -> str:
    """The LLM judge's five 1-5 scales per closed-pool row (Table 29), beside how many of the rated turns
    (recommend/compare, those of R@1) got valid ratings: a failed rating is counted, never replaced."""
    from trace_metrics.lib.judge import JUDGE_SCALES
    from trace_metrics.tables import text_table

    body = []
    for r in rows:
        if r["pool"] != "closed" or not any(m in r["metrics"] for m in JUDGE_SCALES.values()):
            continue
        values = [r["metrics"].get(m) for m in JUDGE_SCALES.values()]
        rated = r["n"].get(next(iter(JUDGE_SCALES.values())), 0)
        body.append(
            [
                r["system"],
                *("-" if v is None else f"{v:.2f}" for v in values),
                f"{rated}/{r['n'].get('recall@1', '?')}",
            ]
        )
    return f"Table 29: LLM-as-judge (1-5), judge {model}\n" + text_table(
        ["System", *JUDGE_SCALES, "rated/turns"], body
    )


def nli_processes(ctx: Context) -> int:
    processes = ctx.config.nli.processes
    if processes != "auto":
        return int(processes)
    try:
        import torch
    except ImportError:
        return 1
    return max(1, torch.cuda.device_count())


def launch_nli(ctx: Context, source: str, processes: int) -> None:
    """Score the NLI pairs of every closed run in `processes` processes (`accelerate launch`, one per GPU; CPU
    processes with the gloo backend where ACCELERATE_USE_CPU=true or no GPU is visible) before the leaderboard."""
    import subprocess
    import sys

    from trace_llm.local_server import free_port

    cmd = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        str(processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(free_port()),
        "-m",
        "trace_harness.reproduce.nli",
        source,
    ]
    log.info("NLI on %d processes: %s", processes, " ".join(cmd))
    done = subprocess.run(cmd, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"}, check=False)
    if done.returncode != 0:
        raise TraceDataError(
            f"the NLI processes failed (exit code {done.returncode}); command: {' '.join(cmd)}"
        )
