"""Assemble a dialogue record (schema.DIALOGUE_FEATURES, field order included) from a plan and its
rendered turns, with quote spans numbered in order of appearance across the dialogue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trace_dataset.generate.plan import DialoguePlan
from trace_dataset.generate.scenario import dialogue_id
from trace_dataset.generate.template_backend import RenderedTurn
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import span_checksum

GENERATOR = "trace-bench five-stage generator v1"


def assemble(
    plan: DialoguePlan,
    rendered: Sequence[RenderedTurn],
    kb: KnowledgeBase,
    *,
    split: str,
    seed: int,
    backend: str,
    model: str,
    kb_version: str,
) -> dict[str, Any]:
    if len(rendered) != len(plan.turns):
        raise ValueError(f"rendered {len(rendered)} turns for a plan of {len(plan.turns)}")
    turns = []
    spans: list[dict] = []
    for i, (pt, rt) in enumerate(zip(plan.turns, rendered, strict=True)):
        turns.append(
            {
                "turn_id": i,
                "role": pt.role,
                "action": pt.action,
                "text": rt.text,
                "referenced_poi_ids": list(pt.pois),
                "referenced_review_ids": [c.review_id for c in rt.citations],
                "gold_poi_ids": list(pt.gold),
                "acceptable_alternative_poi_ids": list(pt.alternatives),
                "citations": [
                    {"label": c.label, "review_id": c.review_id, "business_id": c.business_id}
                    for c in rt.citations
                ],
            }
        )
        for s in rt.quotes:
            text = kb.review_text(s.review_id)[s.start : s.end]
            spans.append(
                {
                    "quote_id": len(spans) + 1,
                    "review_id": s.review_id,
                    "start": s.start,
                    "end": s.end,
                    "checksum": span_checksum(text),
                }
            )
    return {
        "dialogue_id": dialogue_id(plan.index),
        "split": split,
        "scenario": {
            "persona_type": plan.persona_type,
            "persona": plan.persona,
            "travel_context": plan.travel_context,
            "city": plan.city,
            "poi_type": plan.poi_type,
            "difficulty": plan.tier,
        },
        "candidate_poi_ids": list(plan.candidates),
        "pool_16_poi_ids": list(plan.pool_16),
        "pool_32_poi_ids": list(plan.pool_32),
        "open_set_poi_ids": list(plan.open_set),
        "turns": turns,
        "quote_spans": spans,
        "metadata": {
            "generator": GENERATOR,
            "backend": backend,
            "model": model,
            "seed": seed,
            "kb_version": kb_version,
        },
    }
