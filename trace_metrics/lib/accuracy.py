"""Recommendation accuracy on one ranked list (App. J "Recommendation Quality", App. S).

- Recall@k = |gold ∩ top-k| / |gold|.
- Hit@k = 1 if top-k holds any gold POI, else 0.
- MRR: 1 / rank of the first gold POI in the whole ranked list (1-based), 0 if no gold POI is ranked.
- Multi-reference Recall@k (App. S): a top-k that holds an acceptable alternative counts as a full hit;
  otherwise it is Recall@k. Turns without alternatives fall back to single-reference Recall@k, and the
  denominator (the turns averaged) is unchanged.

A turn whose gold list is empty has no accuracy (Recall is 0/0); callers leave such turns out and say so.
Duplicate ids in a ranking are rejected by predictions validation; here the first occurrence counts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import NamedTuple

from trace_metrics.lib._util import mean_or_none

ACCURACY_IDS: tuple[str, ...] = ("recall@1", "recall@3", "mrr", "hit@1", "hit@3", "hit@5")
MULTI_REFERENCE_IDS: tuple[str, ...] = ("mr_recall@1", "mr_recall@3")


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("Recall@k needs at least one gold POI")
    return len(gold_set.intersection(ranked[:k])) / len(gold_set)


def hit_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    gold_set = set(gold)
    return 1.0 if any(p in gold_set for p in ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    gold_set = set(gold)
    for rank, poi in enumerate(ranked, start=1):
        if poi in gold_set:
            return 1.0 / rank
    return 0.0


def mr_recall_at_k(ranked: Sequence[str], gold: Sequence[str], alternatives: Sequence[str], k: int) -> float:
    alt = set(alternatives)
    if alt and any(p in alt for p in ranked[:k]):
        return 1.0
    return recall_at_k(ranked, gold, k)


class Ranks(NamedTuple):
    """Where a turn's gold POIs and acceptable alternatives stand in its ranking: everything its accuracy
    metrics read, at any k (`ranks` computes it once per turn; the suite's per-item functions read it)."""

    gold: tuple[int, ...]  # 1-based ranks of the distinct gold POIs that are ranked, ascending
    n_gold: int  # distinct gold POIs (> 0)
    alternative: int  # 1-based rank of the first acceptable alternative; 0 = none is ranked

    def recall(self, k: int) -> float:
        return bisect_right(self.gold, k) / self.n_gold  # gold POIs ranked within the top k

    def hit(self, k: int) -> float:
        return 1.0 if self.gold and self.gold[0] <= k else 0.0

    def reciprocal_rank(self) -> float:
        return 1.0 / self.gold[0] if self.gold else 0.0

    def mr_recall(self, k: int) -> float:
        return 1.0 if 0 < self.alternative <= k else self.recall(k)


def ranks(ranked: Sequence[str], gold: Sequence[str], alternatives: Sequence[str] = ()) -> Ranks:
    """The `Ranks` of one turn; the first occurrence of a repeated id counts."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("accuracy needs at least one gold POI per turn")
    index = tuple(ranked).index
    found = []
    for poi in gold_set:
        try:
            found.append(index(poi) + 1)
        except ValueError:
            pass
    found.sort()
    alternative = 0
    for poi in set(alternatives):
        try:
            r = index(poi) + 1
        except ValueError:
            continue
        if not alternative or r < alternative:
            alternative = r
    return Ranks(tuple(found), len(gold_set), alternative)


def turn_scores(
    ranked: Sequence[str], gold: Sequence[str], alternatives: Sequence[str] | None = None
) -> dict[str, float]:
    """Every accuracy metric of one turn (multi-reference ones only when `alternatives` is given)."""
    r = ranks(ranked, gold, alternatives or ())
    out = {
        "recall@1": r.recall(1),
        "recall@3": r.recall(3),
        "mrr": r.reciprocal_rank(),
        "hit@1": r.hit(1),
        "hit@3": r.hit(3),
        "hit@5": r.hit(5),
    }
    if alternatives is not None:
        out["mr_recall@1"] = r.mr_recall(1)
        out["mr_recall@3"] = r.mr_recall(3)
    return out


def score(
    predictions: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]],
    alternatives: Sequence[Sequence[str]] | None = None,
    return_per_item: bool = False,
) -> dict:
    """Mean of each accuracy metric over turns; `n` turns. Empty gold lists are an error here (the suite
    selects only turns with gold)."""
    if len(predictions) != len(references):
        raise ValueError(
            f"{len(predictions)} predictions but {len(references)} references; expected one per turn"
        )
    if alternatives is not None and len(alternatives) != len(references):
        raise ValueError(
            f"{len(alternatives)} alternative lists but {len(references)} references; expected one per turn"
        )
    ids = ACCURACY_IDS + (MULTI_REFERENCE_IDS if alternatives is not None else ())
    per_item: dict[str, list[float]] = {m: [] for m in ids}
    for i, (ranked, gold) in enumerate(zip(predictions, references, strict=True)):
        if not gold:
            raise ValueError(f"item {i} has no gold POI; accuracy needs at least one")
        s = turn_scores(list(ranked), gold, None if alternatives is None else (alternatives[i] or ()))
        for m in ids:
            per_item[m].append(s[m])
    out: dict = {m: mean_or_none(per_item[m]) for m in ids}
    out["n"] = len(references)
    if return_per_item:
        out.update({f"{m}_per_item": per_item[m] for m in ids})
    return out
