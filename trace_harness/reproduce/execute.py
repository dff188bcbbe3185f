"""Running the jobs through the package's own commands' functions: `run_baseline`, `run_interactive`, CoRE's
`run_corpus`, and the leaderboard (`build_leaderboard`, which scores every run with `evaluate_run`, the LLM
judge and NLI included, and writes leaderboard.json, the Space's data).

`llm_of(role)` gives each job its role's LLM object: the live model (sends requests, shares the response cache)
or a cache-only stand-in (`trace_llm.collecting.CollectingLLM`: answers from the cache, never sends). Every job
resumes where an earlier invocation stopped, as the commands do.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_dataset.constants import SEED, resolve_splits
from trace_dataset.io import TraceDataError, read_jsonl, write_jsonl
from trace_harness.reproduce.config import LLM_SYSTEMS
from trace_harness.reproduce.jobs import Context, Job, closed_run, role_settings, run_complete

log = logging.getLogger(__name__)

LlmOf = Callable[[str], Any]
LEADERBOARD_DIR = "leaderboard"


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


def _run(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    if run_complete(job.out):
        log.info("%s: complete", job.label)
        return
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
    )


def _interactive(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    from trace_harness.protocols.interactive.output import METRICS_FILE
    from trace_harness.protocols.interactive.run import run_interactive
    from trace_harness.protocols.interactive.systems import load_system

    if (job.out / METRICS_FILE).exists():
        log.info("%s: complete", job.label)
        return
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
        )
    finally:
        if job.system not in LLM_SYSTEMS:
            system.close()


def _core(ctx: Context, job: Job, llm_of: LlmOf) -> None:
    from trace_metrics.core.prompts import load_prompts
    from trace_metrics.core.runner import SUMMARY_FILE, collect_logs, run_corpus

    if (job.out / SUMMARY_FILE).exists():
        log.info("%s: complete", job.label)
        return
    path = closed_run(ctx.config, job.system)
    if not run_complete(path):
        raise TraceDataError(
            f"CoRE of {job.system} needs its closed-pool run, which is not complete", path=path
        )
    root = ctx.root(ctx.config.closed)
    predictions = core_predictions(ctx, job, root, path, job.out.parent)
    logs, source = collect_logs(
        predictions, root, split=job.split, system=job.system, limit=ctx.config.core.limit
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


def leaderboard(ctx: Context, judge: Any = None, nli: Any = None) -> dict[str, Any]:
    """Score the runs (closed runs with the judge and NLI when given), write OUT/leaderboard/ and return the rows,
    the files and the tables as text."""
    from trace_harness.leaderboard.build import build_leaderboard, format_tables, write_leaderboard

    config = ctx.config
    rows: list[dict[str, Any]] = []
    groups = []
    if config.needs_closed_runs():
        groups.append((config.closed, config.out / "runs" / "closed", {"judge": judge, "nli": nli}))
    if config.wants("table6"):
        groups.append((config.open, config.out / "runs" / "open", {}))
    for runset, runs_dir, extra in groups:
        if not runs_dir.is_dir():
            continue
        options = {**scoring_options(ctx), **{k: v for k, v in extra.items() if v is not None}}
        rows += build_leaderboard(
            ctx.root(runset), runs_dir, split=runset.split, n_boot=config.n_boot, seed=SEED, **options
        )
    out = config.out / LEADERBOARD_DIR
    paths = write_leaderboard(rows, out)
    text = format_tables(rows)
    if judge is not None:
        text += "\n" + format_judge(rows, judge.model)
    result: dict[str, Any] = {"rows": rows, "paths": {k: str(v) for k, v in paths.items()}, "text": text}
    if config.wants("interactive") and (config.out / "interactive").is_dir():
        from trace_harness.leaderboard.interactive import (
            format_interactive,
            interactive_rows,
            write_interactive,
        )

        live = interactive_rows(config.out / "interactive", rows)
        written = write_interactive(live, out, config.out / "interactive")
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


def splits_of(ctx: Context) -> tuple[str, ...]:
    return resolve_splits(ctx.config.closed.split)
