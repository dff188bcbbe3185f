"""Collab-REC's grounded metrics as plain functions (Banerjee et al., Eq. 6, 10-12, Tables 1 and 3).

- `filter_fraction` / `filter_success`: the share of a query's structured filters an item satisfies under the
  knowledge base, averaged over a list. Eq. 12 (moderator success S) applies it to the collective offer with
  all query filters; Eq. 6 (agent success r) to one agent's list with the filters of its role.
  Choices: an empty list scores 0 (nothing was recommended); an empty filter set scores 1 for every item
  (a query with no constraint is vacuously satisfied, so Eq. 13's "ideal convergence" stops at once).
- `collab_rec_scores`: everything Collab-REC reports about a set of final lists: mean moderator success,
  exposure Gini / normalised entropy / coverage over the full catalogue (`trace_metrics.lib.exposure`), and
  the mean agent reliability and hallucination rate over every (agent, round) value given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.exposure import exposure_summary

Satisfies = Callable[[str, str, Any], bool]


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
) -> dict[str, float | int | None]:
    """Scores of final lists (one per query) with each item's filter fraction (aligned with the list).

    moderator_success: mean over queries of the mean fraction of the list (a query with an empty list
    scores 0); gini, entropy, coverage, avg_recs_per_item, out_of_catalogue: exposure over `catalogue`;
    reliability, hallucination_rate: means of the per-(agent, round) values (None when none are given).
    """
    if len(lists) != len(fractions):
        raise ValueError(f"{len(lists)} lists but {len(fractions)} fraction lists; expected one per list")
    per_query = []
    for i, (items, fracs) in enumerate(zip(lists, fractions, strict=True)):
        if len(items) != len(fracs):
            raise ValueError(f"list {i}: {len(items)} items but {len(fracs)} filter fractions")
        bad = [f for f in fracs if not 0.0 <= f <= 1.0]
        if bad:
            raise ValueError(f"list {i}: filter fraction {bad[0]!r} outside [0, 1]")
        per_query.append(sum(fracs) / len(fracs) if fracs else 0.0)
    out: dict[str, float | int | None] = {
        "moderator_success": sum(per_query) / len(per_query) if per_query else None,
        **exposure_summary(lists, catalogue),
        "reliability": mean_or_none(reliability),
        "hallucination_rate": mean_or_none(hallucination),
        "n": len(lists),
    }
    return out
