"""Derived views of a dialogue record: the `turns` rows baselines consume, and turn selection.

One definition used by the `datasets` builder (config `turns*`), the baseline runner and the metrics,
so a prediction row and the turn it is scored against always agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from trace_dataset.constants import POOL_FIELDS, POOLS, REJECTION_ACTION


def pool_candidates(dialogue: dict[str, Any], pool: str) -> list[str]:
    if pool not in POOL_FIELDS:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOLS}")
    return list(dialogue[POOL_FIELDS[pool]])


def rejected_before(turns: list[dict[str, Any]], turn_id: int) -> list[str]:
    """POIs the user rejected (reject_and_refine turns' referenced POIs) before `turn_id`, in order."""
    out: list[str] = []
    for t in turns:
        if t["turn_id"] >= turn_id:
            break
        if t["action"] == REJECTION_ACTION:
            out.extend(p for p in t["referenced_poi_ids"] if p not in out)
    return out


def turn_row(dialogue: dict[str, Any], index: int, pool: str = "closed") -> dict[str, Any]:
    """The row (schema.TURN_ROW_FEATURES) of the system turn at position `index` of the dialogue's turns."""
    turns = dialogue["turns"]
    turn = turns[index]
    if turn["role"] != "system":
        raise ValueError(
            f"dialogue {dialogue['dialogue_id']}: turn {index} is a {turn['role']} turn, not a system turn"
        )
    return {
        "dialogue_id": dialogue["dialogue_id"],
        "turn_id": turn["turn_id"],
        "split": dialogue["split"],
        "action": turn["action"],
        "scenario": dict(dialogue["scenario"]),
        "pool": pool,
        "history": [
            {k: t[k] for k in ("turn_id", "role", "action", "text", "referenced_poi_ids")}
            for t in turns[:index]
        ],
        "candidate_poi_ids": pool_candidates(dialogue, pool),
        "rejected_poi_ids": rejected_before(turns, turn["turn_id"]),
        "gold_poi_ids": list(turn["gold_poi_ids"]),
        "acceptable_alternative_poi_ids": list(turn["acceptable_alternative_poi_ids"]),
        "reference_text": turn["text"],
        "reference_poi_ids": list(turn["referenced_poi_ids"]),
    }


def turn_rows(dialogue: dict[str, Any], pool: str = "closed") -> Iterator[dict[str, Any]]:
    """One row per system turn (schema.TURN_ROW_FEATURES): history, candidates of `pool`, gold."""
    for i, turn in enumerate(dialogue["turns"]):
        if turn["role"] == "system":
            yield turn_row(dialogue, i, pool)


def iter_turn_rows(dialogues: Iterable[dict[str, Any]], pool: str = "closed") -> Iterator[dict[str, Any]]:
    for d in dialogues:
        yield from turn_rows(d, pool)
