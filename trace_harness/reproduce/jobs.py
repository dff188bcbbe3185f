"""What a config asks for, as an ordered list of jobs, and the shared context they run in.

    OUT/runs/closed/<system>.jsonl      Table 5 and 9 (and Table 6's GS, PC, NLI, Rej. Rec.): `trace-bench run`
                                        (the folder: closed.runs)
    OUT/runs/open/<system>.jsonl        Table 6's open-set R@1 (the seeded subset, App. Q; open.runs)
    OUT/subsets/subset-...              the seeded subsets' data directories (subsets.write_subset)
    OUT/interactive/<system>/           `trace-bench interact` output folders
    OUT/core/<system>/<split>/          CoRE output folders (trace_metrics.core.runner; core.out)
    OUT/leaderboard/                    leaderboard.json (the Space's data), per-dialogue file, CSV tables
    OUT/batch/round-NNN/                batch input files and their indexes (the batch path)
    OUT/plan.json, OUT/manifest.json    the last dry run; what the finished run used and cost

The LLM judge and NLI score every closed-pool run inside the leaderboard (`evaluate_run`'s `judge` and `nli`),
so their jobs are one per closed run (judge) and one for all of them (NLI).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from baselines import LLM_SYSTEMS
from baselines.llm import app_f_decoding
from trace_dataset.constants import ALL_SPLITS, resolve_splits
from trace_dataset.io import TraceDataError, read_json
from trace_dataset.shards import Shard
from trace_harness.protocols.subsets import subset_dirname
from trace_harness.protocols.teacher_forced.runner import meta_path
from trace_harness.reproduce.config import INTERACTIVE_DIR, ReproduceConfig, RunSet, needed_roles, role_model
from trace_llm import LLM, DecodingSettings
from trace_llm.budget import BudgetTooSmall, require_budget
from trace_llm.structured import constrains

log = logging.getLogger(__name__)

KINDS: tuple[str, ...] = ("run", "interactive", "core", "judge", "nli")
JUDGE_MAX_NEW_TOKENS = 256  # the layer's default, what `evaluate --judge SPEC` uses


@dataclass(frozen=True)
class Job:
    """One unit of the reproduction: a system's run, interactive run or CoRE run, a judge pass, NLI."""

    part: str
    kind: str
    system: str = ""
    pool: str = "closed"
    split: str = ""  # core: the one split it scores
    out: Path = field(kw_only=True)  # its output file or folder
    roles: tuple[str, ...] = ()  # the model roles whose requests it makes

    @property
    def label(self) -> str:
        where = f" ({self.pool})" if self.kind == "run" else f" ({self.split})" if self.kind == "core" else ""
        return f"{self.part}: {self.kind} {self.system}{where}".strip()


def shard_dir(out: Path, shard: Shard) -> Path:
    """Where shard I of N of a reproduction writes its jobs: OUT/shards/I-of-N/ (OUT's layout inside)."""
    return out / "shards" / f"{shard.index}-of-{shard.count}"


def closed_part(config: ReproduceConfig) -> str:
    """The part the closed-pool runs are counted under: table5 when listed (tables 6 and 9 reuse its runs)."""
    return next(p for p in ("table5", "table9", "table6", "core", "judge", "nli") if config.wants(p))


def closed_run(config: ReproduceConfig, system: str) -> Path:
    return config.out / config.closed.runs / f"{system}.jsonl"


def open_run(config: ReproduceConfig, system: str) -> Path:
    return config.out / config.open.runs / f"{system}.jsonl"


def _system_roles(system: str) -> tuple[str, ...]:
    return ("systems",) if system in LLM_SYSTEMS else ()


def build_jobs(config: ReproduceConfig) -> list[Job]:
    """The jobs in the order they run: closed runs, open runs, interactive, CoRE, judge, NLI."""
    jobs: list[Job] = []
    if config.needs_closed_runs():
        part = closed_part(config)
        jobs += [
            Job(part, "run", s, "closed", out=closed_run(config, s), roles=_system_roles(s))
            for s in config.systems
        ]
    if config.wants("table6"):
        jobs += [
            Job(
                "table6",
                "run",
                s,
                "open",
                out=open_run(config, s),
                roles=_system_roles(s),
            )
            for s in config.systems
        ]
    if config.wants("interactive"):
        traveler = ("simulator",) if config.interactive.simulator == "llm" else ()
        jobs += [
            Job(
                "interactive",
                "interactive",
                s,
                config.interactive.pool,
                config.interactive.split,
                out=config.out / INTERACTIVE_DIR / s,
                roles=_system_roles(s) + traveler,
            )
            for s in config.interactive.systems
        ]
    if config.wants("core"):
        # `all`: every split the closed runs cover (config.check_core_split refuses a split they do not)
        splits = (
            resolve_splits(config.closed.split) if config.core.split == ALL_SPLITS else (config.core.split,)
        )
        jobs += [
            Job(
                "core",
                "core",
                s,
                "closed",
                sp,
                out=config.out / config.core.out.format(system=s, split=sp),
                roles=("core",),
            )
            for s in config.core.systems
            for sp in splits
        ]
    if config.wants("judge"):
        jobs += [
            Job("judge", "judge", s, "closed", out=closed_run(config, s), roles=("judge",))
            for s in config.systems
        ]
    if config.wants("nli"):
        jobs.append(Job("nli", "nli", out=config.out / config.closed.runs))
    return jobs


def run_complete(path: Path) -> bool:
    """A predictions file whose run metadata says it is complete."""
    meta = meta_path(path)
    return path.exists() and meta.exists() and bool(read_json(meta).get("complete"))


def job_done(job: Job) -> bool:
    """Whether a job's output is complete (a judge or NLI job is done inside the leaderboard: never here)."""
    from trace_harness.protocols.interactive.output import METRICS_FILE
    from trace_metrics.core.runner import SUMMARY_FILE

    if job.kind == "run":
        return run_complete(job.out)
    if job.kind == "interactive":
        return (job.out / METRICS_FILE).exists()
    if job.kind == "core":
        return (job.out / SUMMARY_FILE).exists()
    return False


def role_settings(config: ReproduceConfig, role: str) -> DecodingSettings:
    """A role's decoding: App. F's for the systems (`baselines.llm.app_f_decoding`: temperature 0.0 and 600
    tokens for a non-reasoning model, 1.0 and 16,000 for a reasoning one), greedy for the traveler and the judge
    (the commands' defaults), CoRE's factor budget for CoRE; the config's values win."""
    m = role_model(config, role)
    temperature, tokens = 0.0, JUDGE_MAX_NEW_TOKENS
    if role == "systems":
        temperature, tokens = app_f_decoding(m.llm)
    elif role == "core":
        tokens = config.core.max_new_tokens
    return DecodingSettings(
        temperature=temperature if m.temperature is None else m.temperature,
        top_p=1.0 if m.top_p is None else m.top_p,
        max_new_tokens=tokens if m.max_new_tokens is None or role == "core" else m.max_new_tokens,
        seed=m.seed,
    )


# ---------------------------------------------------------------------------------------------------------
# Token budgets, checked when the context is built: before anything runs, a dry run and a batch export too
# ---------------------------------------------------------------------------------------------------------
# Each LLM system's budget against the least in which its constrained replies always close, and the judge's and
# CoRE debate's budgets against theirs (trace_llm.budget; the LLM layer refuses such a request anyway, but only
# once the runs before it have taken their time). A system's budget is its own
# `system_params.NAME.max_new_tokens` where given (the one model object answers with that budget for that
# system's requests only), else the systems model's (`models.systems.max_new_tokens`, else App. F's). A role
# asked by prompt alone (`structured: prompt`) has no grammar to close and is not checked.


def _constrained(config: ReproduceConfig, role: str) -> bool:
    """Whether a role's JSON requests go out under a constraint (any `structured` mode but prompt)."""
    return constrains({**config.transport, **role_model(config, role).options}.get("structured"))


def check_budgets(config: ReproduceConfig) -> None:
    """Refuse, naming the field and the least budget, a budget in which a constrained reply may not close."""
    roles = needed_roles(config)
    try:
        if "systems" in roles and _constrained(config, "systems"):
            _check_systems(config)
        if "judge" in roles and _constrained(config, "judge"):
            _check_judge(config)
        if "core" in roles and config.core.debate and _constrained(config, "core"):
            from trace_metrics.core.debate import require_debate_budget

            require_debate_budget(config.core.debate_max_new_tokens, "core.debate_max_new_tokens")
    except BudgetTooSmall as e:
        raise TraceDataError(str(e), path=config.path) from None


def _check_systems(config: ReproduceConfig) -> None:
    from baselines import BASELINES
    from baselines.llm.common import DEFAULT_PREFILTER_K

    shared = role_settings(config, "systems").max_new_tokens
    runs = [*config.systems, *(config.interactive.systems if config.wants("interactive") else ())]
    for name in dict.fromkeys(runs):
        schemas = getattr(BASELINES[name], "budget_schemas", None) if name in LLM_SYSTEMS else None
        if schemas is None:
            continue
        params: dict[str, Any] = config.system_params.get(name, {})
        own = f"system_params.{name}.max_new_tokens"
        require_budget(
            schemas(params.get("prefilter_k", DEFAULT_PREFILTER_K)),
            params.get("max_new_tokens", shared),
            name,
            own
            if "max_new_tokens" in params
            else f"{own} (or models.systems.max_new_tokens, for every system)",
        )


def _check_judge(config: ReproduceConfig) -> None:
    from trace_metrics.lib.judge import JUDGE_SCHEMA

    tokens = role_settings(config, "judge").max_new_tokens
    require_budget({"ratings": JUDGE_SCHEMA}, tokens, "the LLM judge", "models.judge.max_new_tokens")


class Context:
    """The config, the knowledge base, the data directories of the run sets and one LLM object per model role
    (built on first use, or given: `llms` by role, e.g. scripted models in tests; `close()` frees them).

    With `shard`, the context of that shard of the run (`reproduce --shard I/N`, reproduce/shards.py): its jobs
    write under `shard_dir(OUT, shard)` (the config's `out` is that folder; `home` stays OUT, where the seeded
    subsets and the merged runs that CoRE reads are) and its interactive runs go one after the other."""

    def __init__(
        self, config: ReproduceConfig, llms: Mapping[str, LLM] | None = None, shard: Shard | None = None
    ):
        check_budgets(config)
        self.home, self.shard = config.out, shard
        if shard is not None:
            interactive = dataclasses.replace(config.interactive, workers=1)
            config = dataclasses.replace(config, out=shard_dir(config.out, shard), interactive=interactive)
        self.config = config
        self._llms: dict[str, LLM] = dict(llms or {})

    def merged_run(self, system: str) -> Path:
        """A system's closed-pool run in OUT (for a shard too: CoRE reads the merged run)."""
        return self.home / self.config.closed.runs / f"{system}.jsonl"

    @cached_property
    def kb(self):
        from trace_dataset.datadir import kb_dir
        from trace_dataset.kb.store import KnowledgeBase

        return KnowledgeBase.load(kb_dir(self.config.data))

    def subset_dir(self, runset: RunSet) -> Path:
        """The data directory of a run set's seeded subset (only a run set with a subset has one)."""
        if runset.subset is None:
            raise ValueError(f"the {runset.split} run set has no seeded subset, so no subset folder")
        return self.home / "subsets" / subset_dirname(runset.split, runset.subset, runset.seed)

    def root(self, runset: RunSet) -> Path:
        """The data directory a run set's runs are scored against (the seeded subset written once)."""
        if runset.subset is None:
            return self.config.data
        from trace_harness.protocols.subsets import write_subset

        return write_subset(
            self.config.data, self.subset_dir(runset), runset.subset, seed=runset.seed, split=runset.split
        )

    def runset(self, pool: str) -> RunSet:
        return self.config.open if pool == "open" else self.config.closed

    def llm(self, role: str) -> LLM:
        """The role's LLM object (the model it names, its decoding, the transport settings, the response cache)."""
        if role not in self._llms:
            from trace_llm import load_llm

            m = role_model(self.config, role)
            options = {**self.config.transport, **m.options}
            cache = self.config.cache if self.config.cache is not None else None
            self._llms[role] = load_llm(m.llm, role_settings(self.config, role), cache_path=cache, **options)
        return self._llms[role]

    def built(self) -> dict[str, LLM]:
        return dict(self._llms)

    def close(self) -> None:
        for llm in self._llms.values():
            llm.close()
        self._llms.clear()
