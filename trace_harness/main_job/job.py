"""The main job on the built-in synthetic Yelp bundle, stage by stage, resumable.

synthetic bundle -> knowledge base -> dialogues -> release -> hydration -> statistics (data.py), then the
stages of `trace-bench reproduce`'s packaged config `demo` (reproduce/configs/demo.yaml: the baselines on the
closed and the open pool, the leaderboard, the interactive runs with the rules traveller side by side in worker
processes) -> [opt-in: the LLM step, llm_step.py] -> app. Every stage writes its output atomically and is
skipped when its output is complete, so rerunning the command resumes an interrupted run. The settings that
shape the data are recorded in OUT/demo.json; a rerun with other settings is refused rather than mixing two
corpora. A baseline that cannot run (dense without its model package) is reported and the others still run.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.shell import display_path, trace_bench_command
from trace_dataset.constants import KB_PER_CELL
from trace_harness.engine.settings import check_settings
from trace_harness.engine.stage import run_stages
from trace_harness.main_job.data import data_stages
from trace_harness.main_job.layout import DEFAULT_OUT, SETTINGS_FILE, data_dirs, demo_layout
from trace_harness.main_job.options import DemoConfig
from trace_harness.reproduce.config import ReproduceConfig

log = logging.getLogger(__name__)

LLM_TOKEN = "llm"  # `--baselines all,llm`: the opt-in LLM step
MAIN_CONFIG = "demo"  # reproduce/configs/demo.yaml
# What a run of the main job may fail with while the others go on (dense without its model package, an
# interactive run a system refuses); anything else stops the job.
RUN_MAY_FAIL: tuple[type[BaseException], ...] = (ImportError, RuntimeError)
INTERACTIVE_MAY_FAIL: tuple[type[BaseException], ...] = (ImportError, RuntimeError, ValueError)


def baseline_names(text: str) -> tuple[list[str], bool]:
    """(the baselines `--baselines` names, whether it asks for the LLM step); UsageError for an unknown name."""
    from baselines import BASELINES, NON_LLM_BASELINES

    tokens = [n.strip() for n in text.split(",") if n.strip()]
    names = [n for t in tokens if t != LLM_TOKEN for n in (NON_LLM_BASELINES if t == "all" else (t,))]
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise UsageError(
            f"unknown baselines {unknown}; expected some of {sorted(BASELINES)}, 'all' or '{LLM_TOKEN}'"
        )
    return list(dict.fromkeys(names)), LLM_TOKEN in tokens


def main_config(config: DemoConfig, names: list[str]) -> ReproduceConfig:
    """The packaged `demo` config with this job's folders and options: `names` on both pools of the split, the
    interactive runs on its first `interactive_n` dialogues in `workers` processes (or no interactive part)."""
    from baselines import LLM_SYSTEMS
    from trace_harness.reproduce.config import load_example

    split = config.split
    overrides: dict[str, Any] = {
        "data": str(data_dirs(config.out)["hydrated"]),
        "out": str(config.out),
        "systems": names,
        "closed": {"split": split},
        "open": {"split": split},
        "interactive": {
            "systems": names,
            "split": split,
            "n": config.interactive_n,
            "workers": config.workers,
        },
        "num_proc": config.num_proc,
    }
    if any(n in LLM_SYSTEMS for n in names):  # an LLM baseline named on its own: the package's default model
        from trace_llm import DEFAULT_SPEC

        overrides["models"] = {"systems": DEFAULT_SPEC}
    reproduce = load_example(MAIN_CONFIG, overrides)
    if not config.interactive:
        reproduce = dataclasses.replace(
            reproduce, parts=tuple(p for p in reproduce.parts if p != "interactive")
        )
    return reproduce


def run_main(config: ReproduceConfig) -> tuple[str, dict[str, str]]:
    """The main config's stages (runs, then interactive runs), then the leaderboard: (its tables, failures)."""
    from trace_harness.reproduce import execute
    from trace_harness.reproduce.jobs import Context, build_jobs

    ctx = Context(config)
    try:
        jobs = build_jobs(config)
        runs = [j for j in jobs if j.kind == "run"]
        live = [j for j in jobs if j.kind == "interactive"]
        failed = run_stages(execute.job_stages(ctx, runs, ctx.llm, may_fail=RUN_MAY_FAIL), log)
        failed.update(run_stages(execute.job_stages(ctx, live, ctx.llm, may_fail=INTERACTIVE_MAY_FAIL), log))
        board = execute.leaderboard(ctx)
    finally:
        ctx.close()
    return board["text"], failed


def serve_arguments(config: DemoConfig) -> list[Any]:
    """`trace-bench serve`'s arguments for this job's output (printed, and run by --serve)."""
    layout = demo_layout(config.out)
    args: list[Any] = ["serve", "--data", layout["data_dir"], "--results", layout["results_dir"]]
    args += ["--runs", layout["runs_dir"], "--baselines", layout["baselines_file"]]
    args += ["--interactive", layout["interactive_dir"], "--core", layout["core_dir"]]
    return args + (["--split", config.split] if config.split != "test" else [])


def run_demo(config: DemoConfig) -> int:
    """Every stage of the main job, each skipped when its output is already there; 1 when a baseline failed."""
    names, with_llm = baseline_names(config.baselines)
    out, per_cell = config.out, config.per_cell or KB_PER_CELL
    out.mkdir(parents=True, exist_ok=True)
    settings = {"n": config.n, "scale": config.scale, "per_cell": per_cell, "seed": config.seed}
    check_settings(out / SETTINGS_FILE, {**settings, "split": config.split}, what="demo")
    stages = data_stages(
        out, n=config.n, scale=config.scale, per_cell=per_cell, seed=config.seed, workers=config.workers
    )
    failed = run_stages(stages, log)
    text, more = run_main(main_config(config, names))
    print(text)
    failed.update(more)
    if with_llm:
        from trace_harness.main_job.llm_step import run_llm_step

        failed.update(run_llm_step(config, names))
    if failed:
        print("baselines that failed: " + "; ".join(f"{k}: {v}" for k, v in failed.items()))
    # spelled so that it runs as printed in the user's shell, venv activated or not (trace_bench.shell)
    command = trace_bench_command(*serve_arguments(config))
    if config.serve:
        from trace_bench.cli import run_command

        print(
            f"\nStarting the leaderboard app on http://{config.host}:{config.port} (Ctrl-C stops it; later: {command})"
        )
        serve = [str(a) for a in serve_arguments(config)]
        run_command([*serve, "--host", config.host, "--port", str(config.port)])
    else:
        print(f"\nLeaderboard app: {command}")
        if display_path(out) == str(DEFAULT_OUT):  # where `serve` looks by itself, from the user's folder
            print(f"(or simply `{trace_bench_command('serve')}`: it finds runs/demo by itself)")
    return 0 if not failed else 1
