"""The suite's parts that run only when asked: per-item standard deviations (`stats`), NLI entailment
grounding (`entailment`, --nli) and the LLM judge (`judge`, --judge). The modules import without any extra;
what an NLI model needs (torch, transformers, accelerate: the `models` extra) is imported when one loads, and
`entailment.NLIModelError` then says how to install it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from trace_metrics.lib import entailment, selection, stats
from trace_metrics.lib import judge as judge_mod
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.entailment import EntailmentScorer

if TYPE_CHECKING:
    from trace_llm import LLM

# what `--nli` and `--judge` take: a model id or folder / a loaded scorer; an LLM spec / a loaded LLM
NLI: TypeAlias = "str | os.PathLike[str] | EntailmentScorer"
Judge: TypeAlias = "str | LLM"


def item_stds(per_item: Mapping[str, Mapping[str, list]], ids: Sequence[str]) -> dict[str, float | None]:
    """Standard deviation of every per-item metric (`stats.per_turn_std`); None where n = 0 and for
    the composite `cgs` / `cgs_ent`, which are formulas of means, not means of items."""
    out: dict[str, float | None] = dict.fromkeys(ids)
    for items in per_item.values():
        for m, vals in items.items():
            if m in out:
                defined = [v for v in vals if v is not None]
                out[m] = float(stats.per_turn_std(defined)) if defined else None
    return out


def run_nli(
    nli: NLI, responses: list[str], premises: list[list[str | None]]
) -> tuple[list[float], list[dict], dict]:
    scorer = entailment.NLIScorer(model=nli) if isinstance(nli, (str, os.PathLike)) else nli
    results = entailment.entailment_scores(responses, premises, scorer)
    values = [float(r["entailment"]) if isinstance(r, Mapping) else float(r) for r in results]
    describe = getattr(scorer, "describe", None)
    return values, list(results), describe() if callable(describe) else {"model": str(nli)}


def nli_threshold_sweep(results: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """The entailment mean at each threshold of App. L's sweep, from the stored claim probabilities."""
    return {f"{th:g}": mean_or_none(entailment.rescore(results, th)) for th in entailment.THRESHOLD_SWEEP}


def judge_items(
    turns: list[selection.EvalTurn], dialogues: Mapping[str, dict], sources: list[list[str | None]]
) -> list[dict[str, Any]]:
    """The judge's items (`judge.judge_messages`) of the rated turns: id `DIALOGUE/TURN`, the earlier turns,
    the response and the texts of its cited reviews."""
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
    return items


def run_judge(
    judge: Judge,
    turns: list[selection.EvalTurn],
    dialogues: Mapping[str, dict],
    sources: list[list[str | None]],
) -> tuple[list[dict[str, float | None]], list[dict], dict]:
    """Per turn, the judge's rating on each scale (`judge.JUDGE_SCALES`; None where it failed), the records,
    and the judge's description with its failure count."""
    if isinstance(judge, str):
        from trace_llm import load_llm

        judge = load_llm(judge)
    records = judge_mod.judge_turns(judge, judge_items(turns, dialogues, sources))
    scales = judge_mod.JUDGE_SCALES
    ratings = [{s: float(r["ratings"][s]) if r.get("ok") else None for s in scales} for r in records]
    describe = {
        **judge.describe(),
        "prompt": judge_mod.judge_prompt().describe(),
        "n_failed": sum(1 for r in records if not r.get("ok")),
    }
    return ratings, records, describe
