"""The suite's parts that need another module of trace_metrics.lib, imported only when a run gets to them
(`import_optional` says which part needs what if it is missing): per-item standard deviations (`stats`),
NLI entailment grounding (`entailment`, --nli) and the LLM judge (`judge`, --judge)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from trace_metrics.lib import selection
from trace_metrics.lib._util import mean_or_none


def import_optional(name: str, purpose: str):
    import importlib

    try:
        return importlib.import_module(f"trace_metrics.lib.{name}")
    except ImportError as e:
        raise RuntimeError(f"{purpose} needs trace_metrics.lib.{name}, which is not available ({e})") from e


def item_stds(per_item: Mapping[str, Mapping[str, list]], ids: Sequence[str]) -> dict[str, float | None]:
    """Standard deviation of every per-item metric (`stats.per_turn_std`); None where n = 0 and for
    the composite `cgs` / `cgs_ent`, which are formulas of means, not means of items."""
    stats = import_optional("stats", "per-turn standard deviations")
    out: dict[str, float | None] = dict.fromkeys(ids)
    for items in per_item.values():
        for m, vals in items.items():
            if m in out:
                defined = [v for v in vals if v is not None]
                out[m] = float(stats.per_turn_std(defined)) if defined else None
    return out


def run_nli(
    nli: Any, responses: list[str], premises: list[list[str | None]]
) -> tuple[list[float], list[dict], dict]:
    entail = import_optional("entailment", "--nli (entailment grounding)")
    scorer = entail.NLIScorer(model=nli) if isinstance(nli, (str, os.PathLike)) else nli
    results = entail.entailment_scores(responses, premises, scorer)
    values = [float(r["entailment"]) if isinstance(r, Mapping) else float(r) for r in results]
    describe = scorer.describe() if hasattr(scorer, "describe") else {"model": str(nli)}
    return values, list(results), describe


def nli_threshold_sweep(results: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """The entailment mean at each threshold of App. L's sweep, from the stored claim probabilities."""
    entail = import_optional("entailment", "the NLI threshold sweep")
    return {f"{th:g}": mean_or_none(entail.rescore(results, th)) for th in entail.THRESHOLD_SWEEP}


def run_judge(
    judge: Any,
    turns: list[selection.EvalTurn],
    dialogues: Mapping[str, dict],
    sources: list[list[str | None]],
) -> tuple[list[dict[str, float | None]], list[dict], dict]:
    """Per turn, the judge's rating on each scale (`judge.JUDGE_SCALES`; None where it failed), the records,
    and the judge's description with its failure count."""
    judge_mod = import_optional("judge", "--judge (LLM-as-judge)")
    if isinstance(judge, str):
        from trace_llm import load_llm

        judge = load_llm(judge)
    items = []
    for t, src in zip(turns, sources, strict=True):
        d = dialogues[t.dialogue_id]
        context = [{"role": x["role"], "text": x["text"]} for x in d["turns"] if x["turn_id"] < t.turn_id]
        items.append(
            {
                "item_id": f"{t.dialogue_id}/{t.turn_id}",
                "context": context,
                "response": t.response,
                "reviews": src,
            }
        )
    records = judge_mod.judge_turns(judge, items)
    scales = judge_mod.JUDGE_SCALES
    ratings = [{s: float(r["ratings"][s]) if r.get("ok") else None for s in scales} for r in records]
    describe = judge.describe() if hasattr(judge, "describe") else {"judge": str(judge)}
    describe = {
        **describe,
        "prompt": judge_mod.judge_prompt().describe(),
        "n_failed": sum(1 for r in records if not r.get("ok")),
    }
    return ratings, records, describe
