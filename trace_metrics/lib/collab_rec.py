"""Collab-REC's grounded metrics as plain functions (Banerjee et al., Eq. 6, 10-12, Tables 1 and 3).

- `filter_fraction` / `filter_success`: the share of a query's structured filters an item satisfies under the
  knowledge base, averaged over a list. Eq. 12 (moderator success S) applies it to the collective offer with
  all query filters; Eq. 6 (agent success r) to one agent's list with the filters of its role.
  Choices: an empty list scores 0 (nothing was recommended); an empty filter set scores 1 for every item
  (a query with no constraint is vacuously satisfied, so Eq. 13's "ideal convergence" stops at once).
- `collab_rec_scores`: Collab-REC's declarations (`trace_metrics.specs`, benchmark "collab_rec") on a set of
  final lists: mean moderator success over the queries, exposure Gini / normalised entropy / coverage /
  recommendations per covered item over the full catalogue (`trace_metrics.lib.exposure`), and the mean agent
  reliability and hallucination rate over every (agent, round) value given; computed by `lib.scoring` from
  the items of `lib.benchmark_items` (`QueryOffer`, `Exposure`, `AgentRound`).
- `run_scores`: what a `trace-bench collab-rec run` reports from its per-query records (the shape of
  `QueryResult.to_dict()` in `baselines.collab_rec`): each system's scores, the agents' reliability and
  hallucination with their values per round (Figs. 3 and 6), and Table 1's early-stopping columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import zip_longest
from typing import Any

from trace_metrics import specs
from trace_metrics.lib import scoring
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.benchmark_items import AgentRound, Exposure, QueryOffer
from trace_metrics.lib.exposure import exposure_counts

Satisfies = Callable[[str, str, Any], bool]
COLLAB_REC_METRICS: tuple[specs.MetricSpec, ...] = specs.of_benchmark("collab_rec")
LEVELS: tuple[str, ...] = ("query", "catalogue_item", "agent_round")
# a system's scores: its lists' (the agents' values are the run's, `agent_scores`)
OFFER_METRICS: tuple[specs.MetricSpec, ...] = tuple(m for m in COLLAB_REC_METRICS if m.level != "agent_round")
AGENT_METRICS: tuple[specs.MetricSpec, ...] = tuple(m for m in COLLAB_REC_METRICS if m.level == "agent_round")


def filter_fraction(item: str, filters: Mapping[str, Any], satisfies: Satisfies) -> float:
    """|M(c) ∩ f| / |f|: the share of `filters` (name -> wanted value) that `item` satisfies."""
    if not filters:
        return 1.0
    return sum(1 for name, value in filters.items() if satisfies(item, name, value)) / len(filters)


def filter_success(items: Sequence[str], filters: Mapping[str, Any], satisfies: Satisfies) -> float:
    """Eq. 6 / Eq. 12: the mean of `filter_fraction` over `items` (0 for an empty list)."""
    if not items:
        return 0.0
    return sum(filter_fraction(item, filters, satisfies) for item in items) / len(items)


def collab_rec_scores(
    lists: Sequence[Sequence[str]],
    fractions: Sequence[Sequence[float]],
    catalogue: Sequence[str],
    reliability: Iterable[float] = (),
    hallucination: Iterable[float] = (),
    metrics: Sequence[specs.MetricSpec] = COLLAB_REC_METRICS,
) -> dict[str, float | int | None]:
    """Scores of final lists (one per query) with each item's filter fraction (aligned with the list).

    moderator_success: mean over queries of the mean fraction of the list (a query with an empty list
    scores 0); gini, entropy, coverage, avg_recs_per_item: exposure over `catalogue`, then out_of_catalogue
    (recommended items outside it); reliability, hallucination_rate: means of the per-(agent, round) values
    (None when none are given); n (queries). `metrics`: the declarations to compute (default all of them).
    """
    if len(lists) != len(fractions):
        raise ValueError(f"{len(lists)} lists but {len(fractions)} fraction lists; expected one per list")
    for i, (items, fracs) in enumerate(zip(lists, fractions, strict=True)):
        if len(items) != len(fracs):
            raise ValueError(f"list {i}: {len(items)} items but {len(fracs)} filter fractions")
        bad = [f for f in fracs if not 0.0 <= f <= 1.0]
        if bad:
            raise ValueError(f"list {i}: filter fraction {bad[0]!r} outside [0, 1]")
    if not catalogue:
        raise ValueError("exposure needs a non-empty catalogue")
    scoring.check(metrics, LEVELS)
    counts, outside = exposure_counts(lists, catalogue)
    values = scoring.score(
        metrics,
        {
            "query": [QueryOffer(items, fracs) for items, fracs in zip(lists, fractions, strict=True)],
            "catalogue_item": [Exposure(c, k) for c, k in zip(catalogue, counts, strict=True)],
            "agent_round": [AgentRound(r, h) for r, h in zip_longest(reliability, hallucination)],
        },
    ).values
    out: dict[str, float | int | None] = scoring.by_level(metrics, values, ("query", "catalogue_item"))
    out["out_of_catalogue"] = outside
    out.update(scoring.by_level(metrics, values, ("agent_round",)))
    out["n"] = len(lists)
    return out


# ---------------------------------------------------------------------------------------------------
# A run's per-query records
# ---------------------------------------------------------------------------------------------------
def agent_rounds(records: Sequence[Mapping[str, Any]]) -> list[AgentRound]:
    """Every (agent, round) of the records; round 1's reliability is left out: d = 1 there by definition."""
    return [
        AgentRound(a.get("reliability") if rnd["round"] >= 2 else None, a.get("hallucination"))
        for r in records
        for rnd in r.get("rounds", [])
        for a in rnd["agents"]
    ]


def _per_round(records: Sequence[Mapping[str, Any]], key: str) -> dict[str, list[float | None]]:
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


def agent_scores(
    records: Sequence[Mapping[str, Any]], metrics: Sequence[specs.MetricSpec] = AGENT_METRICS
) -> dict[str, Any]:
    """The agents' declarations (reliability over rounds >= 2, hallucination rate over all rounds) and, per
    round and agent, the mean success r, reliability d, hallucination h and the moderator success S(Φ_t)
    (Figs. 3 and 6) with the number of queries still running."""
    scoring.check(metrics, ("agent_round",))
    out: dict[str, Any] = scoring.score(metrics, {"agent_round": agent_rounds(records)}).values
    success_by_round: dict[int, list[float]] = {}
    for rec in records:
        for rnd in rec.get("rounds", []):
            success_by_round.setdefault(rnd["round"], []).append(rnd["success"])
    last = max(success_by_round, default=0)
    out["per_round"] = {
        "success": _per_round(records, "success"),
        "reliability": _per_round(records, "reliability"),
        "hallucination": _per_round(records, "hallucination"),
        "moderator_success": [mean_or_none(success_by_round.get(t, [])) for t in range(1, last + 1)],
        "queries_running": [len(success_by_round.get(t, [])) for t in range(1, last + 1)],
    }
    return out


def early_stopping(records: Sequence[Mapping[str, Any]], name: str) -> dict[str, Any]:
    """Table 1's early-stopping columns for system `name` against M_1 (shares in %, rounds as numbers): the
    share of queries where it beats M_1, where it ties, the mean round it picks when it beats M_1; the paper's
    odds ratio is not defined in the paper or the code and is not reported."""
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


def run_scores(records: Sequence[Mapping[str, Any]], catalogue: Sequence[str]) -> dict[str, Any]:
    """`catalogue_size`; `systems`: per system (in order of appearance) its lists' scores (`OFFER_METRICS`,
    out_of_catalogue, n) and `mean_round`; `agents` when the records have rounds; `early_stopping` for M_early
    (or M_eq13) when run."""
    names = list(dict.fromkeys(name for r in records for name in r["systems"]))
    systems = {}
    for name in names:
        chosen = [r["systems"][name] for r in records if name in r["systems"]]
        scores: dict[str, Any] = collab_rec_scores(
            [s["offer"] for s in chosen], [s["fractions"] for s in chosen], catalogue, metrics=OFFER_METRICS
        )
        scores["mean_round"] = mean_or_none(s["round"] for s in chosen)
        systems[name] = scores
    out: dict[str, Any] = {"catalogue_size": len(catalogue), "systems": systems}
    if any(r.get("rounds") for r in records):
        out["agents"] = agent_scores(records)
    final = next((n for n in ("M_early", "M_eq13") if n in names), None)
    if final:
        out["early_stopping"] = early_stopping(records, final)
    return out
