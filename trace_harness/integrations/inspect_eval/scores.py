"""What the Inspect scorers compute, without Inspect: the metric registry's per-item functions on one turn,
and the suite with its cluster bootstrap over the turns of whole dialogues.

- `turn_values(request, prediction, kb)`: every model-free Trace declaration of a turn level
  (`specs.SUITE_METRICS`: recommend/compare turns, grounded turns, system turns), its per-item function on
  the turn's `TurnItem` (`trace_metrics.lib.items`), keyed by the results key; None where the metric is
  undefined on the turn or the turn is not of its level. These are a sample's score in Inspect.
- `suite_result(turnset, predictions)`: `trace_metrics.lib.suite.evaluate_predictions` on the dialogues whose
  every system turn has a prediction (a sample left out by `--limit` or an error leaves its dialogue out,
  counted), exactly what `trace-bench evaluate` computes from a predictions file of the same rows, and the
  95% percentile interval of every value from the leaderboard's cluster bootstrap over dialogues
  (`trace_metrics.lib.intervals`: n_boot resamples, seed 42). `flat_metrics` lays it out as Inspect's metric
  values: `<id>`, `<id>_ci_low`, `<id>_ci_high`, and the dialogue counts.
- `explanation(request, prediction, kb)`: the turn as a reader checks it (Markdown: the ranking by name, the
  gold, every citation with the review it points at), shown by `inspect view`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trace_dataset.constants import RECOMMENDATION_ACTIONS, SEED
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.prediction import Prediction
from trace_harness.integrations.inspect_eval.turns import TurnRequest, TurnSet, sample_id
from trace_metrics import specs
from trace_metrics.lib import intervals as iv
from trace_metrics.lib import items, scoring
from trace_metrics.lib.selection import EvalTurn
from trace_metrics.lib.stats import N_BOOT
from trace_metrics.lib.suite import evaluate_predictions

TURN_LEVELS: tuple[str, ...] = ("recommendation_turn", "grounded_turn", "system_turn")
TURN_METRICS: tuple[specs.MetricSpec, ...] = tuple(
    m for m in specs.SUITE_METRICS if m.level in TURN_LEVELS and m.item is not None and m.needs is None
)
COUNT_KEYS: tuple[str, ...] = ("dialogues", "dialogues_incomplete")
EXCERPT_CHARS = 240  # of a cited review in the explanation


def eval_turn(request: TurnRequest, prediction: Mapping[str, Any]) -> EvalTurn:
    """The turn as the suite joins it: the reference side from the row, the system side from the prediction."""
    row = request.row
    return EvalTurn(
        str(row["dialogue_id"]),
        int(row["turn_id"]),
        str(row["action"]),
        str(row["reference_text"]),
        tuple(row["gold_poi_ids"]),
        tuple(row["acceptable_alternative_poi_ids"]),
        tuple(prediction["ranked_poi_ids"]),
        str(prediction["response"]),
        dict(prediction["citations"]),
    )


def turn_values(
    request: TurnRequest, prediction: Mapping[str, Any], kb: KnowledgeBase
) -> dict[str, float | None]:
    """The per-item value of every turn-level declaration on this turn (module docstring)."""
    opts = specs.resolve_options({})
    item = items.TurnItem(eval_turn(request, prediction), items.Sources(kb))
    levels = {"system_turn": [item], "recommendation_turn": [], "grounded_turn": []}
    if item.recommending:
        levels["recommendation_turn"] = [item]
    levels["grounded_turn"] = items.grounded_items(
        levels["recommendation_turn"], levels["system_turn"], opts["grounding_turns"]
    )
    out: dict[str, float | None] = {}
    for m in TURN_METRICS:
        level_items = levels[m.level]
        given = {**opts, **m.arguments}
        out[m.key(opts)] = scoring.item_values(m, level_items, given)[0] if level_items else None
    return out


def complete_dialogues(
    turnset: TurnSet, predictions: Mapping[str, Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    """The dialogues whose every system turn has a prediction (keyed by sample id), and how many lack one."""
    done, missing = [], 0
    for d in turnset.dialogues:
        ids = [sample_id(d["dialogue_id"], t["turn_id"]) for t in d["turns"] if t["role"] == "system"]
        if all(i in predictions for i in ids):
            done.append(d)
        else:
            missing += 1
    return done, missing


def suite_result(
    turnset: TurnSet,
    predictions: Mapping[str, Mapping[str, Any]],
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> dict[str, Any]:
    """{"values", "n", "ci", "per_item", "dialogues", "dialogues_incomplete"} of the complete dialogues."""
    dialogues, missing = complete_dialogues(turnset, predictions)
    out: dict[str, Any] = {"dialogues": len(dialogues), "dialogues_incomplete": missing}
    if not dialogues:
        return {**out, "values": {}, "n": {}, "ci": {}, "per_item": {}}
    index = {
        (d["dialogue_id"], t["turn_id"]): Prediction.from_dict(
            predictions[sample_id(d["dialogue_id"], t["turn_id"])]
        )
        for d in dialogues
        for t in d["turns"]
        if t["role"] == "system"
    }
    result = evaluate_predictions(dialogues, index, turnset.kb, with_std=False)
    ci: dict[str, tuple[float, float]] = {}
    if n_boot > 0:
        table = iv.dialogue_table(result["per_item"])
        ci = iv.intervals(table, [m for m in table.metrics() if m in result["values"]], n_boot, seed)
    return {**out, "values": result["values"], "n": result["n"], "ci": ci, "per_item": result["per_item"]}


def flat_metrics(result: Mapping[str, Any]) -> dict[str, float]:
    """Inspect's metric values of a `suite_result`: each value and its interval bounds, then the counts."""
    out: dict[str, float] = {}
    for key, value in result["values"].items():
        if value is None:
            continue
        out[key] = float(value)
        if key in result["ci"]:
            low, high = result["ci"][key]
            out[f"{key}_ci_low"], out[f"{key}_ci_high"] = float(low), float(high)
    out.update({k: float(result[k]) for k in COUNT_KEYS})
    return out


def predictions_in_order(turnset: TurnSet, found: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The prediction rows in corpus and turn order, as `trace-bench run` writes them."""
    return [dict(found[i]) for i in turnset.requests if i in found]


# ---------------------------------------------------------------------------------------------------
# What `inspect view` shows of a turn
# ---------------------------------------------------------------------------------------------------
def _names(kb: KnowledgeBase, ids: Iterable[str]) -> str:
    return ", ".join(f"{kb.pois[p].name} (`{p}`)" if p in kb.pois else f"`{p}`" for p in ids) or "-"


def _excerpt(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rstrip() + "…"


def explanation(request: TurnRequest, prediction: Mapping[str, Any], kb: KnowledgeBase) -> str:
    """The turn, readable in `inspect view`: ranking and gold by name, every citation with its review."""
    row = request.row
    meta = prediction.get("meta") or {}
    lines = [f"**{row['action']}** turn {row['turn_id']} of {row['dialogue_id']}"]
    if row["action"] in RECOMMENDATION_ACTIONS:
        lines += [
            f"- ranking (top 5): {_names(kb, list(prediction['ranked_poi_ids'])[:5])}",
            f"- gold: {_names(kb, row['gold_poi_ids'])}",
        ]
    if meta.get("fallback"):
        lines.append(f"- answered by the {meta['fallback']} fallback: {meta.get('fallback_reason', '')}")
    citations = dict(prediction["citations"])
    lines.append(f"- citations: {len(citations)}" + (":" if citations else ""))
    for label, rid in sorted(citations.items(), key=lambda kv: int(kv[0][1:])):
        review = kb.reviews.get(rid)
        poi = kb.review_business.get(rid, "")
        name = kb.pois[poi].name if poi in kb.pois else poi
        lines.append(f"  - [{label}] {name}, review `{rid}`: “{_excerpt(review.text if review else None)}”")
    for label in meta.get("unknown_labels") or ():
        lines.append(f"  - [{label}] not a label of the prompt (counted as unresolved)")
    return "\n".join(lines)


def metric_ids(values: Sequence[str]) -> list[str]:
    """The declared metric ids among result keys (a parameterised key such as spatial_coherence@2km kept)."""
    return [v for v in values if v not in COUNT_KEYS and not v.endswith(("_ci_low", "_ci_high"))]
