"""metrics.json of a Collab-REC run, from the per-query records (`QueryResult.to_dict()`).

The metrics are computed in `trace_metrics.lib.collab_rec` from their declarations (`trace_metrics.specs`,
benchmark "collab_rec"): `systems` (per system: RandRec, TopPop, SASI, M_1, M_eq13, M_early, M_10:
`moderator_success` (Table 1), `gini`, `entropy`, `coverage`, `avg_recs_per_item` (Table 3, over the full
catalogue), `out_of_catalogue`, `n`, `mean_round`), `agents` (MASI/MAMI/SASI: `reliability`, mean d over
rounds >= 2, round 1 being 1 by definition; `hallucination_rate`, mean h over all rounds; their values per
round and agent, Figs. 3 and 6) and `early_stopping` (Table 1 right, for M_early or M_eq13). What is about
the run itself is counted here: `rounds` (mean rounds run and the stop reasons) and `counts` (queries, agent
calls, per query, agent failures, hallucinated names).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from baselines.collab_rec.moderator import ModeratorConfig
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.collab_rec import run_scores


def run_counts(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`rounds` (when the records stopped somewhere) and `counts` of the run."""
    out: dict[str, Any] = {}
    stops = [r["stop"] for r in records if r.get("stop")]
    if stops:
        out["rounds"] = {
            "mean_rounds_run": mean_or_none(s["round"] for s in stops),
            "stop_reasons": dict(sorted(Counter(s["reason"] for s in stops).items())),
        }
    hallucinated = sum(
        1
        for r in records
        for rnd in r.get("rounds", [])
        for a in rnd["agents"]
        for why in a.get("invalid", {}).values()
        if why == "out_of_catalogue"
    )
    calls = [r.get("agent_calls", 0) for r in records]
    out["counts"] = {
        "queries": len(records),
        "agent_calls": sum(calls),
        "agent_calls_per_query": mean_or_none(calls),
        "agent_failures": sum(r.get("agent_failures", 0) for r in records),
        "hallucinated_names": hallucinated,
    }
    return out


def compute_metrics(
    records: Sequence[dict[str, Any]], catalogue: Sequence[str], config: ModeratorConfig
) -> dict[str, Any]:
    """metrics.json: the moderator's configuration, the metrics (`run_scores`), the run's rounds and counts."""
    return {"config": config.to_dict(), **run_scores(records, catalogue), **run_counts(records)}
