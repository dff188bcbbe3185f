"""A reproduce config's token budgets, checked when the config is read (so a dry run refuses them too): each LLM
system's budget against the least in which its constrained replies always close, and the judge's and CoRE
debate's budgets against theirs (`trace_llm.budget`; the LLM layer refuses such a request anyway, but only
once the runs before it have taken their time).

A system's budget is its own `system_params.NAME.max_new_tokens` where given (the one model object answers with
that budget for that system's requests only), else the systems model's (`models.systems.max_new_tokens`, else
App. F's). A role asked by prompt alone (`structured: prompt`) has no grammar to close and is not checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trace_dataset.io import TraceDataError
from trace_llm.budget import BudgetTooSmall, require_budget
from trace_llm.structured import DEFAULT_STRUCTURED, PROMPT

if TYPE_CHECKING:
    from trace_harness.reproduce.config import ReproduceConfig


def constrained(config: ReproduceConfig, role: str) -> bool:
    """Whether a role's JSON requests go out under a constraint (any `structured` mode but prompt)."""
    from trace_harness.reproduce.config import role_model

    options = {**config.transport, **role_model(config, role).options}
    return (options.get("structured") or DEFAULT_STRUCTURED) != PROMPT


def check_budgets(config: ReproduceConfig) -> None:
    """Refuse, naming the field and the least budget, a budget in which a constrained reply may not close."""
    from trace_harness.reproduce.config import needed_roles

    roles = needed_roles(config)
    try:
        if "systems" in roles and constrained(config, "systems"):
            _check_systems(config)
        if "judge" in roles and constrained(config, "judge"):
            _check_judge(config)
        if "core" in roles and config.core.debate and constrained(config, "core"):
            from trace_metrics.core.debate import DEBATE_SCHEMA

            require_budget(
                {"debate statement": DEBATE_SCHEMA},
                config.core.debate_max_new_tokens,
                "CoRE's debate",
                "core.debate_max_new_tokens",
            )
    except BudgetTooSmall as e:
        raise TraceDataError(str(e), path=config.path) from None


def _check_systems(config: ReproduceConfig) -> None:
    from baselines import BASELINES, LLM_SYSTEMS
    from baselines.llm.common import DEFAULT_PREFILTER_K
    from trace_harness.reproduce.jobs import role_settings

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
    from trace_harness.reproduce.jobs import role_settings
    from trace_metrics.lib.judge import JUDGE_SCHEMA

    tokens = role_settings(config, "judge").max_new_tokens
    require_budget({"ratings": JUDGE_SCHEMA}, tokens, "the LLM judge", "models.judge.max_new_tokens")
