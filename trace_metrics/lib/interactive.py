"""Metrics of live (simulated) conversations: per-turn ranking quality and the Trace metrics on live turns.

Per turn (SnipRec §5.1, Table 4; also the `trace` protocol's turns):
- **position**: 1-based rank, among every candidate, of the best-ranked *target* (a POI the traveler would
  accept; SnipRec: the one target venue). Candidates the system did not rank tie at the end of its list;
  inside a tie group (the unranked tail, and runs of consecutive ranked POIs with equal scores) the order is
  drawn at random with an RNG seeded by (seed, dialogue, turn), as Sun et al. (2020) prescribe and SnipRec
  follows (§5.1). The scores are what the system's ranking sorts by, which every package system reports
  (`baselines.base` "Ties": the non-LLM baselines, SnipRec and its comparison systems, whose never-retrieved
  venues all score 0, the LLM baselines' completed rankings, Collab-REC) and an HTTP system may send; when
  they are given, a ranked candidate without a score joins the unranked tail. A system that reports none is
  taken as a strict order. A turn whose candidates hold no target has no position.
- **sniprec_hit@k** = 1 if position <= k (k = 1, 5, 10); **sniprec_mrr** = 1 / position; **avg_position** =
  mean position. Their ids are their own: `hit@k` and `mrr` are Trace's top-k metrics of the ranked list
  (`trace_metrics.lib.accuracy`), which the `trace` protocol also reports on live turns. They are declared in
  `trace_metrics.specs` (benchmark "sniprec"), and the per-turn table and the overall figures loop over those
  declarations (`lib.scoring`).
Values per turn index are means over the dialogues that have a ranking at that turn (`n` says how many);
`ranked_turn_overall` gives each over every ranked turn with its interval.

The live dialogues of the `trace` protocol (benchmark "live"): success (the traveller accepted), system turns
up to the acceptance, system turns per dialogue, each a declaration computed from the dialogue records
(`live_outcomes`) with its interval.

The Trace metrics of the live system turns (accuracy, TSR, T2R, rejection recovery, GS / CD / PC / CGS,
practical value) come from the suite's `evaluate_predictions` on the logs (dialogue records whose system
turns carry the targets as gold); text metrics are left out (a live turn has no reference response).
Confidence intervals are the cluster bootstrap over dialogues (`significance.mean_ci`, the statistics module), taken
against zero (an interval for one mean).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trace_dataset.constants import SEED
from trace_metrics import specs
from trace_metrics.lib import scoring
from trace_metrics.lib.significance import mean_ci

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

SNIPREC_METRICS: tuple[specs.MetricSpec, ...] = specs.of_benchmark("sniprec")
LIVE_METRICS: tuple[specs.MetricSpec, ...] = specs.of_benchmark("live")
TURN_IDS: tuple[str, ...] = tuple(m.id for m in SNIPREC_METRICS)
_FORMER_IDS: dict[str, str] = {m.id: m.former_id for m in SNIPREC_METRICS if m.former_id}


def turn_metric(section: Mapping[str, Any], metric_id: str) -> Any:
    """A SnipRec metric of a per-turn row or of metrics.json's `overall` section, also from a metrics.json
    written before these metrics had ids of their own (`MetricSpec.former_id`: `sniprec_hit@1` was `hit@1`)."""
    if metric_id in section:
        return section[metric_id]
    former = _FORMER_IDS.get(metric_id)
    return section.get(former) if former else None


# the Trace metrics reported for live turns (the suite's ids; text metrics have no reference here)
LIVE_TRACE_IDS: tuple[str, ...] = (
    "hit@1",
    "hit@3",
    "mrr",
    "recall@1",
    "tsr",
    "t2r",
    "rejection_recovery",
    "grounding_score",
    "citation_density",
    "provenance_coverage",
    "cgs",
    "spatial_coherence@2km",
    "route_efficiency_km",
    "price_alignment",
    "itinerary_diversity",
)


def tie_groups(ranked: Sequence[str], scores: Mapping[str, Any] | None) -> list[list[str]]:
    """The ranked list cut into runs of consecutive POIs with equal scores (singletons without scores)."""
    if not scores:
        return [[p] for p in ranked]
    groups: list[list[str]] = []
    last: Any = object()
    for p in ranked:
        s = scores.get(p, (p,))  # a POI without a score ties with nothing
        if groups and s == last:
            groups[-1].append(p)
        else:
            groups.append([p])
        last = s
    return groups


def target_position(
    ranked: Sequence[str],
    targets: Iterable[str],
    candidates: Sequence[str],
    rng: random.Random,
    scores: Mapping[str, Any] | None = None,
) -> int | None:
    """Position of the best-ranked target among `candidates` with random tie-breaking (module docstring).

    POIs of `ranked` that are not candidates are ignored; duplicates count once.
    """
    cand = set(candidates)
    target_set = set(targets) & cand
    if not target_set:
        return None
    seen: set[str] = set()
    order = []
    for p in ranked:
        if p in cand and p not in seen and (not scores or p in scores):
            seen.add(p)
            order.append(p)
    groups = tie_groups(order, scores)
    groups.append([p for p in candidates if p not in seen])  # the unranked tail ties at the end
    before = 0
    for group in groups:
        if target_set.intersection(group):
            if len(group) > 1:
                group = list(group)
                rng.shuffle(group)
            return before + 1 + next(i for i, p in enumerate(group) if p in target_set)
        before += len(group)
    raise AssertionError("unreachable: a target is a candidate")


def position_scores(
    position: int | None, metrics: Sequence[specs.MetricSpec] = SNIPREC_METRICS
) -> dict[str, float | None]:
    """sniprec_hit@k, sniprec_mrr and the position itself for one turn (all None without a position)."""
    return {k: v[0] for k, v in scoring.score(metrics, {"ranked_turn": [position]}).per_item.items()}


def turn_rng(seed: int, dialogue_id: str, turn: int) -> random.Random:
    return random.Random(f"{seed}:ties:{dialogue_id}:{turn}")


def per_turn_table(
    items: Sequence[Mapping[str, Any]], metrics: Sequence[specs.MetricSpec] = SNIPREC_METRICS
) -> list[dict[str, Any]]:
    """Rows {turn, n, n_undefined, n_unranked, sniprec_hit@k..., sniprec_mrr, avg_position} from items
    {dialogue_id, turn, position, unranked}, by turn index: the declarations' values over the turn's ranked turns.

    Items without a position are not averaged: those where the system ranked nothing (`unranked`, SnipRec's
    protocol: not a chance position) are counted in `n_unranked`, the others (no target among the candidates)
    in `n_undefined`.
    """
    scoring.check(metrics, ("ranked_turn",))
    by_turn: dict[int, list[Mapping[str, Any]]] = {}
    for it in items:
        by_turn.setdefault(int(it["turn"]), []).append(it)
    rows = []
    for turn in sorted(by_turn):
        positions = [it["position"] for it in by_turn[turn]]
        unranked = sum(bool(it.get("unranked")) for it in by_turn[turn])
        row: dict[str, Any] = {
            "turn": turn,
            "n": sum(p is not None for p in positions),
            "n_undefined": sum(p is None for p in positions) - unranked,
            "n_unranked": unranked,
        }
        row.update(scoring.score(metrics, {"ranked_turn": positions}).values)
        rows.append(row)
    return rows


def ranked_turn_overall(
    items: Sequence[Mapping[str, Any]],
    n_boot: int = 10_000,
    seed: int = SEED,
    metrics: Sequence[specs.MetricSpec] = SNIPREC_METRICS,
) -> dict[str, dict[str, Any]]:
    """Every SnipRec declaration over all ranked turns (items as `per_turn_table`'s), each with its
    cluster-bootstrap interval over dialogues (`mean_ci`: the mean is the bootstrap's, of the same values)."""
    scoring.check(metrics, ("ranked_turn",))
    per_item = scoring.score(metrics, {"ranked_turn": [it["position"] for it in items]}).per_item
    ids = [it["dialogue_id"] for it in items]
    return {m: mean_ci(vals, ids, n_boot=n_boot, seed=seed) for m, vals in per_item.items()}


def live_outcomes(
    records: Sequence[Mapping[str, Any]],
    n_boot: int = 10_000,
    seed: int = SEED,
    metrics: Sequence[specs.MetricSpec] = LIVE_METRICS,
) -> dict[str, dict[str, Any]]:
    """metrics.json's `dialogue` section: each live declaration over the dialogue records, its value (`mean`)
    with the cluster-bootstrap interval of its per-dialogue values (`mean_ci`)."""
    scoring.check(metrics, ("live_dialogue",))
    scores = scoring.score(metrics, {"live_dialogue": records})
    ids = [r["dialogue_id"] for r in records]
    return {
        m: {**mean_ci(scores.per_item[m], ids, n_boot=n_boot, seed=seed), "mean": value}
        for m, value in scores.values.items()
    }


def live_trace_metrics(
    dialogues: Sequence[dict],
    predictions: Mapping[tuple[str, int], dict],
    kb: KnowledgeBase,
    n_boot: int = 10_000,
    seed: int = SEED,
    **options: Any,
) -> dict[str, Any]:
    """The Trace metrics of live logs (module docstring): {values, n, ci, counts}.

    `dialogues`: the live dialogue records (system turns carry the targets as gold_poi_ids); `predictions`:
    {(dialogue_id, turn_id): prediction row}; `options`: those of `suite.evaluate_predictions`.
    """
    from trace_dataset.prediction import Prediction
    from trace_metrics.lib.suite import evaluate_predictions

    records = {key: Prediction.from_dict(p) for key, p in predictions.items()}
    result = evaluate_predictions(dialogues, records, kb, with_std=False, **options)
    per_item = result["per_item"]
    ci: dict[str, Any] = {}
    for group in per_item.values():
        ids = group.get("dialogue_id")
        if ids is None:
            continue
        for m, vals in group.items():
            if m in LIVE_TRACE_IDS and m not in ci:
                ci[m] = mean_ci(vals, ids, n_boot=n_boot, seed=seed)
    ids = [m for m in LIVE_TRACE_IDS if m in result["values"]]
    return {
        "values": {m: result["values"][m] for m in ids},
        "n": {m: result["n"][m] for m in ids},
        "ci": {m: ci[m] for m in ids if m in ci},
        "counts": result["counts"],
    }
