"""CoRE on a batch of conversation logs, in memory: the twelve factors, then the debate; records and summaries.

A record (one per log) is what `trace-bench core score` writes per dialogue:
`{"id", "dialogue_id", "system", "factors": {factor: {"score", "status", "rationale", ...}}, "factor_mean",
"n", "n_missing", "overall", "debate", "usage", "conversation"}`; `overall` is the debate's final score
(0-100, None without a debate or when it failed) and `factor_mean` the mean of the rated factors (CoRE "Avg.").
`score_rows` turns records into the `{"id", "factor", "score"}` rows the meta-evaluation reads; `summarize`
computes CoRE's declarations (`trace_metrics.specs`, benchmark "core": `factor_mean`, and `overall` with a
debate) from the records through `lib.scoring`, beside the per-factor means and the debates' counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from trace_metrics.core.conversation import ConversationLog
from trace_metrics.core.debate import DEFAULT_MAX_REPAIRS, DEFAULT_MAX_ROUNDS, new_debate, run_debates
from trace_metrics.core.factors import DEFAULT_MAX_RETRIES, STATUSES, rate_factors
from trace_metrics.core.prompts import FACTOR_IDS, PromptSet
from trace_metrics.lib import scoring
from trace_metrics.lib._util import mean_or_none
from trace_metrics.specs import MetricSpec, of_benchmark

if TYPE_CHECKING:
    from trace_llm import LLM, DecodingSettings

OVERALL = "overall"  # the debate's final score, 0-100
FACTOR_MEAN = "factor_mean"  # mean of the rated factors, 0-4 (the paper's "CoRE (Avg.)")
SCORE_KEYS: tuple[str, ...] = (*FACTOR_IDS, FACTOR_MEAN, OVERALL)
CORE_METRICS: tuple[MetricSpec, ...] = of_benchmark("core")
DEFAULT_FACTOR_TOKENS = 1024  # CoRE's factor replies average 170-760 tokens (paper Table 20)
DEFAULT_DEBATE_TOKENS = 512  # debate replies average 125-170 tokens (Table 21)
# The command's llama.cpp defaults: a chunk's factor requests and debaters decoded 4 side by side (the same
# replies as one by one, 6-16% faster for `core score --limit 1` on 2 cores: docs/core.md); other backends ignore it
CORE_LLM_OPTIONS: Mapping[str, Any] = MappingProxyType({"parallel": 4})


def llm_usage(llm: LLM) -> dict[str, int]:
    usage = getattr(llm, "usage", None)
    return dict(usage) if isinstance(usage, Mapping) else {}


def check_factors(factors: Sequence[str]) -> tuple[str, ...]:
    """The factors asked for, in the canonical order; ValueError naming an unknown one."""
    unknown = [f for f in factors if f not in FACTOR_IDS]
    if unknown or not factors:
        raise ValueError(f"factors {list(factors)}; expected a non-empty subset of {FACTOR_IDS}")
    return tuple(f for f in FACTOR_IDS if f in factors)


def rated(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The factors a record holds, in the canonical order."""
    return tuple(f for f in FACTOR_IDS if f in record["factors"])


def score_logs(
    llm: LLM,
    conversations: Sequence[ConversationLog],
    prompts: PromptSet,
    *,
    factors: Sequence[str] = FACTOR_IDS,
    debate: bool = True,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_repairs: int = DEFAULT_MAX_REPAIRS,
    factor_settings: DecodingSettings | dict | None = None,
    debate_settings: DecodingSettings | dict | None = None,
    stage_usage: dict[str, dict[str, int]] | None = None,
) -> list[dict[str, Any]]:
    """One record per conversation, in order (module docstring).

    `factors`: rate only these (default all twelve), e.g. to give each factor the LLM that judges it best, as
    the paper's mixture of evaluators (Fig. 11) does; the debaters then see the others as "not rated".
    `stage_usage`, when given, accumulates the LLM's usage counters spent by each stage ("factors", "debate").
    """
    factors = check_factors(factors)
    before = llm_usage(llm)
    factor_results = rate_factors(
        llm, conversations, prompts, factors=factors, max_retries=max_retries, settings=factor_settings
    )
    states = [
        new_debate(c, r, prompts, max_rounds) for c, r in zip(conversations, factor_results, strict=True)
    ]
    middle = llm_usage(llm)
    if debate:
        run_debates(llm, states, settings=debate_settings, max_repairs=max_repairs)
    if stage_usage is not None:
        for name, (a, b) in (("factors", (middle, before)), ("debate", (llm_usage(llm), middle))):
            acc = stage_usage.setdefault(name, {})
            for key, value in a.items():
                acc[key] = acc.get(key, 0) + value - b.get(key, 0)
    records = []
    for conv, results, state in zip(conversations, factor_results, states, strict=True):
        scores = [results[f]["score"] for f in factors]
        debate_result = state.result() if debate else None
        records.append(
            {
                "id": conv.log_id,
                "dialogue_id": conv.dialogue_id,
                "system": conv.system,
                "factors": results,
                "factor_mean": mean_or_none(scores),
                "n": sum(s is not None for s in scores),
                "n_missing": sum(s is None for s in scores),
                "overall": debate_result["final_score"] if debate_result else None,
                "debate": debate_result,
                "usage": {
                    "factor_calls": sum(r["attempts"] for r in results.values()),
                    "factor_prompt_tokens": sum(r["prompt_tokens"] for r in results.values()),
                    "factor_completion_tokens": sum(r["completion_tokens"] for r in results.values()),
                    "debate_messages": debate_result["n_messages"] if debate_result else 0,
                },
                "conversation": conv.to_dict(),
            }
        )
    return records


def score_rows(records: Iterable[Mapping[str, Any]], debate: bool = True) -> list[dict[str, Any]]:
    """`{"id", "factor", "score", "system", "dialogue_id"}` rows: the rated factors, factor_mean and, with a debate,
    overall; a missing rating is a row with score null (so the meta-evaluation can count it)."""
    rows = []
    for r in records:
        base = {"system": r.get("system", ""), "dialogue_id": r.get("dialogue_id", "")}
        for f in rated(r):
            rows.append({"id": r["id"], "factor": f, "score": r["factors"][f]["score"], **base})
        rows.append({"id": r["id"], "factor": FACTOR_MEAN, "score": r["factor_mean"], **base})
        if debate:
            rows.append({"id": r["id"], "factor": OVERALL, "score": r["overall"], **base})
    return rows


def summarize(
    records: Sequence[Mapping[str, Any]], debate: bool = True, metrics: Sequence[MetricSpec] = CORE_METRICS
) -> dict[str, Any]:
    """Means and counts over records: per factor (mean, n, missing by status), then each declaration
    (`metrics`: factor_mean, and overall with a debate) as {mean, n}, the debates' counts beside `overall`."""
    out: dict[str, Any] = {"n_logs": len(records), "factors": {}}
    statuses: Counter[str] = Counter()
    factors = rated(records[0]) if records else ()
    for f in factors:
        results = [r["factors"][f] for r in records]
        missing = Counter(res["status"] for res in results if res["score"] is None)
        statuses.update(res["status"] for res in results)
        out["factors"][f] = {
            "mean": mean_or_none(res["score"] for res in results),
            "n": sum(res["score"] is not None for res in results),
            "n_missing": sum(missing.values()),
            "missing_by_status": dict(sorted(missing.items())),
            "n_retried": sum(res["attempts"] > 1 for res in results),
        }
    total = len(records) * len(factors)
    out["ratings"] = {
        "total": total,
        "ok": statuses.get("ok", 0),
        "missing": total - statuses.get("ok", 0),
        "by_status": {s: statuses.get(s, 0) for s in STATUSES},
    }
    metrics = [m for m in metrics if debate or m.needs != "debate"]
    scoring.check(metrics, ("conversation_log",))
    scores = scoring.score(metrics, {"conversation_log": records})
    for m in metrics:
        out[m.id] = {"mean": scores.values[m.id], "n": scores.n[m.id]}
    if debate:
        debates = [r["debate"] for r in records if r.get("debate")]
        rounds = Counter(d["rounds"] for d in debates)
        out.setdefault(OVERALL, {}).update(
            {
                "n_failed": sum(r["overall"] is None for r in records),
                "consensus_rate": (sum(d["consensus"] for d in debates) / len(debates)) if debates else None,
                "rounds": {str(k): rounds[k] for k in sorted(rounds)},
                "failed_messages": sum(d["n_failed_messages"] for d in debates),
                "messages": sum(d["n_messages"] for d in debates),
            }
        )
    return out
