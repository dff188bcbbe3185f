"""metrics.json of a Collab-REC run: the paper's metrics from the per-query records (`QueryResult.to_dict()`).

- `systems`: per system (RandRec, TopPop, SASI, M_1, M_eq13, M_early, M_10): `moderator_success` (Table 1),
  `gini`, `entropy`, `coverage`, `avg_recs_per_item` (Table 3, over the full catalogue), `out_of_catalogue`,
  `mean_round`, `n` (`trace_metrics.lib.collab_rec.collab_rec_scores`).
- `agents` (MASI/MAMI/SASI): `reliability` (mean d over rounds >= 2; round 1 is 1 by definition),
  `hallucination_rate` (mean h over all rounds), and per round and agent the mean success r, reliability d,
  hallucination h and the moderator success S(Φ_t) (Figs. 3 and 6), with the number of queries still running.
- `early_stopping` (Table 1 right): for M_early (or M_eq13): share of queries where it beats M_1, where it ties,
  the mean round it picks when it beats M_1; the paper's odds ratio is not defined in the paper or the code and
  is not reported. `rounds`: mean rounds run and the stop reasons.
- `counts`: queries, agent calls (per query), agent failures, hallucinated names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from baselines.collab_rec.moderator import ModeratorConfig
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.collab_rec import collab_rec_scores


def _per_round(records: Sequence[dict[str, Any]], key: str) -> dict[str, list[float | None]]:
    """agent -> [mean of `key` over queries at round t, for t = 1..]."""
    values: dict[str, dict[int, list[float]]] = {}
    for rec in records:
        for rnd in rec.get("rounds", []):
            for agent in rnd.get("agents", []):
                if agent.get(key) is not None:
                    values.setdefault(agent["agent"], {}).setdefault(rnd["round"], []).append(agent[key])
    out = {}
    for agent, by_round in values.items():
        last = max(by_round)
        out[agent] = [mean_or_none(by_round.get(t, [])) for t in range(1, last + 1)]
    return out


def agent_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rel = [
        a["reliability"]
        for r in records
        for rnd in r.get("rounds", [])
        if rnd["round"] >= 2
        for a in rnd["agents"]
        if a.get("reliability") is not None
    ]
    hal = [
        a["hallucination"]
        for r in records
        for rnd in r.get("rounds", [])
        for a in rnd["agents"]
        if a.get("hallucination") is not None
    ]
    success_by_round: dict[int, list[float]] = {}
    for rec in records:
        for rnd in rec.get("rounds", []):
            success_by_round.setdefault(rnd["round"], []).append(rnd["success"])
    last = max(success_by_round, default=0)
    return {
        "reliability": mean_or_none(rel),
        "hallucination_rate": mean_or_none(hal),
        "per_round": {
            "success": _per_round(records, "success"),
            "reliability": _per_round(records, "reliability"),
            "hallucination": _per_round(records, "hallucination"),
            "moderator_success": [mean_or_none(success_by_round.get(t, [])) for t in range(1, last + 1)],
            "queries_running": [len(success_by_round.get(t, [])) for t in range(1, last + 1)],
        },
    }


def early_stopping(records: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    """Table 1's early-stopping columns for system `name` against M_1 (shares in %, rounds as numbers)."""
    pairs = [(r["systems"][name], r["systems"]["M_1"]) for r in records if name in r["systems"]]
    if not pairs:
        return {}
    better = [s for s, one in pairs if s["success"] > one["success"]]
    ties = [s for s, one in pairs if s["success"] == one["success"]]
    return {
        "system": name,
        "success_rate_pct": 100 * len(better) / len(pairs),
        "avg_convergence_round": mean_or_none(s["round"] for s in better),
        "ties_pct": 100 * len(ties) / len(pairs),
        "odds_ratio": None,
        "n": len(pairs),
    }


def compute_metrics(
    records: Sequence[dict[str, Any]], catalogue: Sequence[str], config: ModeratorConfig
) -> dict[str, Any]:
    names = list(dict.fromkeys(name for r in records for name in r["systems"]))
    systems = {}
    for name in names:
        chosen = [r["systems"][name] for r in records if name in r["systems"]]
        scores = collab_rec_scores([s["offer"] for s in chosen], [s["fractions"] for s in chosen], catalogue)
        scores.pop("reliability"), scores.pop("hallucination_rate")
        scores["mean_round"] = mean_or_none(s["round"] for s in chosen)
        systems[name] = scores
    out: dict[str, Any] = {"config": config.to_dict(), "catalogue_size": len(catalogue), "systems": systems}
    if any(r.get("rounds") for r in records):
        out["agents"] = agent_metrics(records)
    final = next((n for n in ("M_early", "M_eq13") if n in names), None)
    if final:
        out["early_stopping"] = early_stopping(records, final)
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
