"""Builders for leaderboard tests: suite-shaped results from hand-made per-item values, and toy runs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from trace_dataset.io import write_json, write_jsonl
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.grounding import of_means


def fake_result(
    per_item: dict[str, dict[str, list]], pool: str = "closed", split: str = "test", cd_gate: float = 0.05
) -> dict[str, Any]:
    """What `suite.evaluate_run` returns, for per-item values given by hand: every value is the mean of its
    items, cgs the formula on the GS/CD/PC means when they are there."""
    values: dict[str, float | None] = {}
    n: dict[str, int] = {}
    for items in per_item.values():
        for m, vals in items.items():
            if m in ("dialogue_id", "turn_id"):
                continue
            values[m] = mean_or_none(vals)
            n[m] = sum(v is not None for v in vals)
    if {"grounding_score", "citation_density", "provenance_coverage"} <= set(values):
        values["cgs"] = of_means(
            values["grounding_score"], values["citation_density"], values["provenance_coverage"], cd_gate
        )
        n["cgs"] = n["grounding_score"]
    return {
        "values": values,
        "n": n,
        "config": {"pool": pool, "split": split, "grounding": {"cd_gate": cd_gate}},
        "versions": {"corpus": "c1", "kb": "k1"},
        "per_item": copy.deepcopy(per_item),
    }


def write_run(
    runs: Path, name: str, rows: list[dict], pool: str = "closed", split: str = "test", **meta: Any
) -> Path:
    """A complete run file (predictions + metadata) as `trace-bench run` leaves it; `meta` adds to (or
    replaces) the metadata, e.g. family="LLM", n_rows=..., summary={"rows": {"fallback_popularity": 3}}."""
    path = runs / pool / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(path, rows)
    write_json(
        path.with_name(path.name + ".meta.json"),
        {"baseline": name, "family": "non-LLM", "split": split, "pool": pool, "complete": True, **meta},
    )
    return path
